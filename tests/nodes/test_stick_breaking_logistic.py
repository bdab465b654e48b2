"""The stick-breaking logistic node: its average energy, its construction, its errors.

The energy is Σ over the reached sticks of the Jaakkola–Jordan bound in its classic form
log σ(z) ≥ log σ(ξ) + (z − ξ)/2 − λ(ξ)(z² − ξ²), λ(ξ) = tanh(ξ/2)/(4ξ), z = ±ψ_k (written with scipy's
log_expit, not the node's log cosh form); with point masses and ξ_k = |ψ_k| it is −log p(y | ψ) exactly.
"""
import numpy as np
import pytest
from scipy import integrate
from scipy.special import expit, log_expit

import fgraph as fg
from fgraph.errors import DataError, FgraphError, ModelError, RuleNotFoundError
from fgraph.families import Categorical, MvNormalMeanCovariance, PointMass
from fgraph.support import ONE_HOT
from fgraph.nodes import MvNormal
from fgraph.nodes.stick_breaking_logistic import StickBreakingLogistic, StickBreakingLogisticNode
from tests.rules.tables import energy

INTERFACES = ("out", "input", "xi", "coefficients1", "coefficients2")
X = PointMass(np.array([2.0]), 1)  # x̃ = [2, 1]
KNOWN = (PointMass(np.array([1.0, -1.0]), 1), PointMass(np.array([0.5, 0.5]), 1))  # ψ = 1, 1.5
GAUSSIAN = (MvNormalMeanCovariance([1.0, -2.0], [[0.5, 0.1], [0.1, 0.3]]),  # E[ψ_0] = 0, E[ψ_0²] = 2.7
            MvNormalMeanCovariance([0.5, 1.0], [[0.2, 0.0], [0.0, 0.1]]))    # E[ψ_1] = 2, E[ψ_1²] = 4.9


def one_hot(j, classes=3):
    return PointMass(np.eye(classes)[j], 1)


def tilts(*values):
    return PointMass(np.array(values, dtype=float), 1)


def jaakkola_jordan(sign, mean_logit, second_logit, xi):
    """E_q of log σ(ξ) + (z − ξ)/2 − λ(ξ)(z² − ξ²), z = sign·ψ."""
    lam = np.tanh(xi / 2) / (4 * xi) if xi else 0.125
    return log_expit(xi) + (sign * mean_logit - xi) / 2 - lam * (second_logit - xi**2)


def sbl_energy(inputs, **attributes):
    return energy(StickBreakingLogisticNode, inputs, interfaces=INTERFACES, **attributes)


@pytest.mark.parametrize("label", [0, 1, 2])
def test_with_exact_tilts_the_energy_is_minus_the_log_likelihood(label):
    result = sbl_energy({"q_out": one_hot(label), "q_input": X, "q_xi": tilts(1.0, 1.5), "q_coefficients": KNOWN})
    probabilities = [expit(1.0), expit(-1.0) * expit(1.5), expit(-1.0) * expit(-1.5)]
    assert result == pytest.approx(-np.log(probabilities[label]), rel=1e-14)


def test_energy_by_hand_at_zero_tilts():
    # ξ = 0 (ω̄ = ¼): a reached stick costs log 2 + ψ²/8 and adds κψ. Class 1: stick 0 (κ = −½, ψ = 1),
    # stick 1 (κ = ½, ψ = 1.5): U = (log 2 + 1/8 + ½) + (log 2 + 2.25/8 − 0.75)
    result = sbl_energy({"q_out": one_hot(1), "q_input": X, "q_xi": tilts(0.0, 0.0), "q_coefficients": KNOWN})
    assert result == pytest.approx(2 * np.log(2.0) + 0.125 + 0.5 + 0.28125 - 0.75, rel=1e-14)
    # class 0 stops at stick 0: U = log 2 + 1/8 − ½
    result = sbl_energy({"q_out": one_hot(0), "q_input": X, "q_xi": tilts(0.0, 0.0), "q_coefficients": KNOWN})
    assert result == pytest.approx(np.log(2.0) + 0.125 - 0.5, rel=1e-14)


@pytest.mark.parametrize("xi", [(0.0, 0.0), (0.7, 2.53), (30.0, 1.1)])
def test_energy_is_the_sum_of_the_bounds_of_the_reached_sticks(xi):
    inputs = {"q_input": X, "q_xi": tilts(*xi), "q_coefficients": GAUSSIAN}
    bounds = {0: jaakkola_jordan(1, 0.0, 2.7, xi[0]),  # class 0: σ(ψ_0)
              1: jaakkola_jordan(-1, 0.0, 2.7, xi[0]) + jaakkola_jordan(1, 2.0, 4.9, xi[1]),
              2: jaakkola_jordan(-1, 0.0, 2.7, xi[0]) + jaakkola_jordan(-1, 2.0, 4.9, xi[1])}
    for label, bound in bounds.items():
        assert sbl_energy(dict(inputs, q_out=one_hot(label))) == pytest.approx(-bound, rel=1e-13)


def test_a_latent_class_weighs_the_classes():
    inputs = {"q_input": X, "q_xi": tilts(1.3, 0.4), "q_coefficients": GAUSSIAN}
    p = np.array([0.2, 0.5, 0.3])
    mixed = sbl_energy(dict(inputs, q_out=Categorical(p)))
    assert mixed == pytest.approx(sum(p[j] * sbl_energy(dict(inputs, q_out=one_hot(j))) for j in range(3)), rel=1e-14)


@pytest.mark.parametrize("label", [0, 1, 2])
def test_at_its_optimum_tilts_the_energy_bounds_the_expected_negative_log_likelihood(label):
    """U(c) ≥ −E_q[log p(y | ψ)] (quadrature over the independent ψ_0 ~ N(0, 2.7), ψ_1 ~ N(2, 0.9)); c minimises U."""
    c = np.sqrt([2.7, 4.9])
    inputs = {"q_out": one_hot(label), "q_input": X, "q_coefficients": GAUSSIAN}
    at_optimum = sbl_energy(dict(inputs, q_xi=tilts(*c)))

    def expected(sign, mean, var):
        std = np.sqrt(var)
        value, _ = integrate.quad(lambda psi: -log_expit(sign * psi) * np.exp(-0.5 * ((psi - mean) / std) ** 2)
                                  / (std * np.sqrt(2 * np.pi)), -60, 60, epsabs=1e-13)
        return value
    exact = {0: expected(1, 0.0, 2.7), 1: expected(-1, 0.0, 2.7) + expected(1, 2.0, 0.9),
             2: expected(-1, 0.0, 2.7) + expected(-1, 2.0, 0.9)}[label]
    assert exact < at_optimum
    for other in ((0.0, c[1]), (c[0], 0.0), (0.9 * c[0], c[1]), (c[0], 1.1 * c[1]), (5 * c[0], 5 * c[1])):
        changed = sbl_energy(dict(inputs, q_xi=tilts(*other)))
        if label == 0 and other[0] == c[0]:  # class 0 does not reach stick 1: its tilt does not matter
            assert changed == pytest.approx(at_optimum, rel=1e-14)
        else:
            assert at_optimum < changed


def test_a_batch_is_the_energy_element_by_element():
    rng = np.random.default_rng(6)
    labels, rows, xi = rng.integers(0, 3, 4), rng.normal(size=(4, 1)), rng.uniform(0, 3, (4, 2))
    batched = sbl_energy({"q_out": PointMass(np.eye(3)[labels], 1), "q_input": PointMass(rows, 1),
                          "q_xi": PointMass(xi, 1), "q_coefficients": GAUSSIAN}, batch_shape=(4,))
    assert batched.shape == (4,)
    for n in range(4):
        single = sbl_energy({"q_out": one_hot(labels[n]), "q_input": PointMass(rows[n], 1),
                             "q_xi": PointMass(xi[n], 1), "q_coefficients": GAUSSIAN})
        assert batched[n] == pytest.approx(single, rel=1e-14)


def test_energy_with_a_latent_input_uses_its_full_second_moment():
    # x ~ N(1, 0.5): E[x̃x̃ᵀ] = [[1.5, 1], [1, 1]]: E[ψ_0] = −1, E[ψ_0²] = 2.75; E[ψ_1] = 1.5, E[ψ_1²] = 2.775
    result = sbl_energy({"q_out": one_hot(2), "q_input": MvNormalMeanCovariance([1.0], [[0.5]]),
                         "q_xi": tilts(1.1, 0.6), "q_coefficients": GAUSSIAN})
    bound = jaakkola_jordan(-1, -1.0, 2.75, 1.1) + jaakkola_jordan(-1, 1.5, 2.775, 0.6)
    assert result == pytest.approx(-bound, rel=1e-13)


# ----------------------------------------------------------------- the node in a model


def build(features, labels, classes=3, dimension=None, **options):
    dimension = dimension or np.shape(features)[-1] + 1
    with fg.Model() as model:
        betas = [MvNormal(f"beta{k}", mean=np.zeros(dimension), cov=np.eye(dimension)) for k in range(classes - 1)]
        y = StickBreakingLogistic("y", betas, features, observed=labels, **options)
    return model, y


def test_the_model_holds_the_class_and_the_tilts():
    model, y = build(np.ones((4, 2)), np.array([0, 2, 1, 2]))
    assert y.batch_shape == (4,) and y.event_shape == (3,)
    assert model["y_xi"].batch_shape == (4,) and model["y_xi"].event_shape == (2,)
    assert StickBreakingLogisticNode.support["out"] is ONE_HOT
    np.testing.assert_array_equal(model.data["y"], np.eye(3)[[0, 2, 1, 2]])


def test_one_hot_labels_are_the_integer_labels():
    features, labels = np.random.default_rng(2).normal(size=(6, 1)), np.array([0, 1, 2, 2, 1, 0])
    runs = [fg.infer(build(features, given)[0], algorithm="vmp", iterations=4).free_energy
            for given in (labels, np.eye(3)[labels])]
    np.testing.assert_array_equal(runs[0], runs[1])


def test_labels_outside_the_classes_are_refused_naming_the_variable():
    with pytest.raises(DataError, match=r"data for 'y': labels must lie in 0..2, got 3 at index \(1,\)"):
        build(np.ones((3, 1)), np.array([0, 3, 1]))
    with pytest.raises(DataError, match=r"data for 'y': labels must lie in 0..2, got -1"):
        build(np.ones((3, 1)), np.array([0, -1, 1]))
    with pytest.raises(DataError, match="not one-hot"):
        build(np.ones((2, 1)), np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]]))


def test_fewer_than_two_classes_are_refused():
    with pytest.raises(ModelError, match="K >= 2 classes need at least one stick"):
        with fg.Model():
            StickBreakingLogistic("y", [], np.ones((3, 1)), observed=np.array([0, 0, 0]))
    with pytest.raises(ModelError, match="K >= 2 classes need at least one stick"):
        with fg.Model():
            StickBreakingLogistic("y", np.zeros((0, 2)), np.ones((3, 1)), observed=np.array([0, 0, 0]))


def test_nan_features_are_refused_naming_the_node_and_interface():
    with pytest.raises(ModelError, match="node 'y', parameter 'input' contains NaN"):
        build(np.array([[0.0], [np.nan]]), np.array([0, 1]))


def test_a_single_batched_coefficients_variable_is_refused_with_the_fix():
    with pytest.raises(ModelError, match=r"one vector variable per stick.*single variable 'beta'"):
        with fg.Model():
            beta = MvNormal("beta", mean=np.zeros((2, 2)), cov=np.broadcast_to(np.eye(2), (2, 2, 2)))
            StickBreakingLogistic("y", beta, np.ones((3, 1)), observed=np.array([0, 1, 2]))


def test_wrong_dimensions_are_refused():
    with pytest.raises(ModelError, match=r"input has dimension 3, but the coefficients have dimension 3"):
        build(np.ones((2, 3)), np.array([0, 1]), dimension=3)
    with pytest.raises(ModelError, match="different dimensions"):
        with fg.Model():
            StickBreakingLogistic("y", [MvNormal("a", mean=np.zeros(2), cov=np.eye(2)),
                                        MvNormal("b", mean=np.zeros(3), cov=np.eye(3))], np.ones((2, 1)))


def test_known_coefficients_are_split_into_sticks_and_give_the_exact_class_probabilities():
    # β known: a one-sweep VMP on a latent class with exact tilts is the stick-breaking distribution
    coefficients = np.array([[1.0, -1.0], [0.5, 0.5]])
    with fg.Model() as model:
        StickBreakingLogistic("y", coefficients, np.array([[2.0]]))
    result = fg.infer(model, algorithm="vmp", iterations=2, init={"y_xi": PointMass(np.array([[1.0, 1.5]]), 1)})
    np.testing.assert_allclose(result.marginal("y").probabilities[0],
                               [expit(1.0), expit(-1.0) * expit(1.5), expit(-1.0) * expit(-1.5)], rtol=1e-13)


def test_without_an_intercept_the_coefficients_have_the_input_dimension():
    _, y = build(np.ones((4, 2)), np.array([0, 1, 1, 2]), dimension=2, intercept=False)
    assert y.event_shape == (3,)
    with pytest.raises(ModelError, match=r"input has dimension 1, but the coefficients have dimension 2 \(no intercept\)"):
        build(np.ones((4, 1)), np.array([0, 1, 1, 2]), dimension=2, intercept=False)


def test_mismatched_plates_are_refused():
    with pytest.raises(ModelError, match="do not broadcast"):
        build(np.ones((3, 1)), np.array([0, 1]))


def test_under_bp_the_node_stays_mean_field():
    """``variational_only``: under ``algorithm="bp"`` the run is the VMP one; one forced sum-product cluster finds
    no rule and says so before running."""
    model, _ = build(np.array([[0.4], [-1.0], [1.5]]), np.array([0, 1, 2]), classes=3)
    bp = fg.infer(model, algorithm="bp", iterations=5)
    vmp = fg.infer(model, algorithm="vmp", iterations=5)
    np.testing.assert_allclose(bp.free_energy, vmp.free_energy, rtol=1e-13)
    with pytest.raises(RuleNotFoundError, match="StickBreakingLogisticNode"):
        fg.infer(model, algorithm="bp", constraints={"factorization": {"y": "bp"}})


def test_the_tilts_start_at_zero_and_the_sticks_need_no_initial_coefficients():
    """No init: ξ = 0 is declared by the node; stick k's message reads no other stick, so no q(β_j) is needed."""
    features, labels = np.random.default_rng(3).normal(size=(5, 1)), np.array([0, 1, 2, 3, 1])
    model, _ = build(features, labels, classes=4)
    declared = fg.infer(model, algorithm="vmp", iterations=5)
    given = fg.infer(model, algorithm="vmp", iterations=5, init={"y_xi": PointMass(np.zeros((5, 3)), 1)})
    np.testing.assert_array_equal(declared.free_energy, given.free_energy)
    elsewhere = fg.infer(model, algorithm="vmp", iterations=5, init={"y_xi": PointMass(np.full((5, 3), 2.0), 1)})
    assert abs(elsewhere.free_energy[0] - declared.free_energy[0]) > 1e-3
    for step in declared.schedule:
        if step.interface.startswith("coefficients"):
            assert not any(item.name.startswith("q_coefficients") for item in step.inputs)


def test_errors_are_fgraph_and_value_errors():
    assert issubclass(DataError, FgraphError) and issubclass(DataError, ValueError)
    assert issubclass(ModelError, FgraphError) and issubclass(ModelError, ValueError)
