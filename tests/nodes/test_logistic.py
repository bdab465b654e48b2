"""The logistic node: its average energy (the Jaakkola–Jordan bound with q(ω) = PG(1, ξ)), its construction, errors.

The energy is checked against the classic form of the bound,
log σ(z) ≥ log σ(ξ) + (z − ξ)/2 − λ(ξ)(z² − ξ²), λ(ξ) = tanh(ξ/2)/(4ξ), z = (2y − 1)ψ
(Jaakkola and Jordan 2000, written with scipy's log_expit: not the node's log cosh form),
against −E_q[log σ(±ψ)] by quadrature (an upper bound, tight where q(ψ) is a point), and
against the exact −log σ(±ψ) for point masses with ξ = |ψ|.
"""
import numpy as np
import pytest
from scipy import integrate
from scipy.special import log_expit

import fgraph as fg
from fgraph.errors import DataError, FgraphError, ModelError, RuleNotFoundError
from fgraph.families import Bernoulli, MvNormalMeanCovariance, PointMass
from fgraph.support import BINARY
from fgraph.nodes import MvNormal
from fgraph.nodes.logistic import Logistic, LogisticNode
from tests.rules.tables import energy

BETA = MvNormalMeanCovariance([1.0, -2.0], [[0.5, 0.1], [0.1, 0.3]])  # E[ββᵀ] = [[1.5, −1.9], [−1.9, 4.3]]


def jaakkola_jordan(label, mean_logit, second_logit, xi):
    """E_q of log σ(ξ) + (z − ξ)/2 − λ(ξ)(z² − ξ²), z = (2y − 1)ψ (z² = ψ²), λ(ξ) = tanh(ξ/2)/(4ξ)."""
    lam = np.tanh(xi / 2) / (4 * xi) if xi else 0.125
    return log_expit(xi) + ((2 * label - 1) * mean_logit - xi) / 2 - lam * (second_logit - xi**2)


def test_energy_by_hand():
    # ψ = 1·3 − 2 = 1, y = 1. ξ = 1 = |ψ|: the bound is tight, U = −log σ(1) = log(1 + e^{−1})
    known = {"q_out": PointMass(1.0), "q_coefficients": PointMass(np.array([1.0, -2.0]), 1),
             "q_input": PointMass(np.array([3.0]), 1)}
    assert energy(LogisticNode, dict(known, q_xi=PointMass(1.0))) == pytest.approx(np.log1p(np.exp(-1.0)), rel=1e-14)
    # ξ = 0 (E[ω] = ¼): U = log 2 + log cosh 0 + ¼(1 − 0)/2 − ½·1 = log 2 − 3/8
    assert energy(LogisticNode, dict(known, q_xi=PointMass(0.0))) == pytest.approx(np.log(2.0) - 0.375, rel=1e-14)


@pytest.mark.parametrize("label", [0.0, 1.0])
@pytest.mark.parametrize("xi", [0.0, 0.7, 2.53, 30.0])
def test_energy_is_the_jaakkola_jordan_bound_under_gaussian_coefficients(label, xi):
    # x = 3: E[ψ] = 1, E[ψ²] = 6.4 (see tests/rules/logistic/test_xi.py)
    result = energy(LogisticNode, {"q_out": PointMass(label), "q_coefficients": BETA,
                                   "q_input": PointMass(np.array([3.0]), 1), "q_xi": PointMass(xi)})
    assert result == pytest.approx(-jaakkola_jordan(label, 1.0, 6.4, xi), rel=1e-13)


def test_energy_without_an_intercept():
    # x = [3, 1] without the appended 1 is the same ψ as x = 3 with it: E[ψ] = 1, E[ψ²] = 6.4
    result = energy(LogisticNode, {"q_out": PointMass(0.0), "q_coefficients": BETA,
                                   "q_input": PointMass(np.array([3.0, 1.0]), 1), "q_xi": PointMass(1.7)},
                    intercept=False)
    assert result == pytest.approx(-jaakkola_jordan(0.0, 1.0, 6.4, 1.7), rel=1e-13)


def test_a_latent_label_weighs_the_two_labels():
    inputs = {"q_coefficients": BETA, "q_input": PointMass(np.array([3.0]), 1), "q_xi": PointMass(1.3)}
    mixed = energy(LogisticNode, dict(inputs, q_out=Bernoulli(0.3)))
    ones, zeros = (energy(LogisticNode, dict(inputs, q_out=PointMass(y))) for y in (1.0, 0.0))
    assert mixed == pytest.approx(0.3 * ones + 0.7 * zeros, rel=1e-14)


@pytest.mark.parametrize("label", [0.0, 1.0])
def test_at_its_optimum_xi_the_energy_bounds_the_expected_negative_log_likelihood(label):
    """U(c) ≥ −E_q[log σ(±ψ)] (quadrature over ψ ~ N(1, 5.4)), and c minimises U over ξ."""
    c = np.sqrt(6.4)
    inputs = {"q_out": PointMass(label), "q_coefficients": BETA, "q_input": PointMass(np.array([3.0]), 1)}
    at_optimum = energy(LogisticNode, dict(inputs, q_xi=PointMass(c)))
    sign, std = 2 * label - 1, np.sqrt(6.4 - 1.0)
    exact, _ = integrate.quad(lambda psi: -log_expit(sign * psi) * np.exp(-0.5 * ((psi - 1.0) / std) ** 2)
                              / (std * np.sqrt(2 * np.pi)), -40, 40, epsabs=1e-13)
    assert exact < at_optimum
    for other in (0.0, 0.9 * c, 1.1 * c, 5 * c):
        assert at_optimum < energy(LogisticNode, dict(inputs, q_xi=PointMass(other)))


def test_a_batch_is_the_energy_element_by_element():
    rng = np.random.default_rng(6)
    labels, rows, xi = rng.integers(0, 2, 4).astype(float), rng.normal(size=(4, 1)), rng.uniform(0, 3, 4)
    batched = energy(LogisticNode, {"q_out": PointMass(labels), "q_coefficients": BETA, "q_input": PointMass(rows, 1),
                                    "q_xi": PointMass(xi)})
    for n in range(4):
        single = energy(LogisticNode, {"q_out": PointMass(labels[n]), "q_coefficients": BETA,
                                       "q_input": PointMass(rows[n], 1), "q_xi": PointMass(xi[n])})
        assert batched[n] == pytest.approx(single, rel=1e-14)


def test_energy_with_a_latent_input_uses_its_full_second_moment():
    # x ~ N(0.5, 0.2): E[ψ] = 0.5 − 2 = −1.5, E[ψ²] = 3.075 (tests/rules/logistic/test_xi.py)
    result = energy(LogisticNode, {"q_out": PointMass(1.0), "q_coefficients": BETA,
                                   "q_input": MvNormalMeanCovariance([0.5], [[0.2]]), "q_xi": PointMass(1.1)})
    assert result == pytest.approx(-jaakkola_jordan(1.0, -1.5, 3.075, 1.1), rel=1e-13)


# ----------------------------------------------------------------- the node in a model


def build(features, labels, dimension=None):
    with fg.Model() as model:
        beta = MvNormal("beta", mean=np.zeros(dimension or np.shape(features)[-1] + 1),
                        cov=np.eye(dimension or np.shape(features)[-1] + 1))
        y = Logistic("y", beta, features, observed=labels)
    return model, y


def test_the_model_holds_the_label_and_the_tilt_variable():
    model, y = build(np.ones((3, 2)), np.array([0, 1, True]))
    assert y.batch_shape == (3,) and y.event_shape == ()
    assert model["y_xi"].batch_shape == (3,)
    assert LogisticNode.support["out"] is BINARY
    assert LogisticNode.interfaces == ("out", "coefficients", "input", "xi")


def test_labels_outside_zero_one_are_refused_naming_the_variable():
    with pytest.raises(DataError, match=r"'y'.*out must be 0 or 1, got 2.0 at index \(1,\)"):
        build(np.ones((3, 1)), np.array([0, 2, 1]))


def test_nan_features_are_refused_naming_the_node_and_interface():
    with pytest.raises(ModelError, match="node 'y', parameter 'input' contains NaN"):
        build(np.array([[0.0], [np.nan]]), np.array([0, 1]))


def test_a_wrong_input_dimension_is_refused():
    with pytest.raises(ModelError, match="input has dimension 3, but coefficients has dimension 3 = d \\+ 1"):
        build(np.ones((2, 3)), np.array([0, 1]), dimension=3)
    with pytest.raises(ModelError, match="input must be a vector"):
        build(1.0, np.array([0, 1]), dimension=2)


def test_without_an_intercept_input_and_coefficients_have_one_dimension():
    with fg.Model():
        beta = MvNormal("beta", mean=np.zeros(2), cov=np.eye(2))
        y = Logistic("y", beta, np.ones((4, 2)), observed=np.array([0, 1, 1, 0]), intercept=False)
    assert y.batch_shape == (4,)
    with pytest.raises(ModelError, match="without an intercept input and coefficients need one dimension; got 1 and 2"):
        with fg.Model():
            beta = MvNormal("beta", mean=np.zeros(2), cov=np.eye(2))
            Logistic("y", beta, np.ones((4, 1)), observed=np.array([0, 1, 1, 0]), intercept=False)


def test_mismatched_plates_are_refused():
    with pytest.raises(ModelError, match="do not broadcast"):
        build(np.ones((3, 1)), np.array([0, 1]))


def test_errors_are_fgraph_and_value_errors():
    assert issubclass(DataError, FgraphError) and issubclass(DataError, ValueError)
    assert issubclass(ModelError, FgraphError) and issubclass(ModelError, ValueError)


def test_under_bp_the_node_stays_mean_field():
    """The node has mean-field rules only (``variational_only``): under ``algorithm="bp"`` it is planned
    mean-field, so the run is the VMP one, free energy included; forcing one sum-product cluster of β and ξ
    finds no rule and says so before running."""
    model, _ = build(np.array([[0.3], [-1.2], [2.0]]), np.array([0, 1, 1]))
    bp = fg.infer(model, algorithm="bp", iterations=6)
    np.testing.assert_allclose(bp.free_energy, free_energies(model), rtol=1e-13)
    with pytest.raises(RuleNotFoundError, match="LogisticNode"):
        fg.infer(model, algorithm="bp", constraints={"factorization": {"y": "bp"}}, init={"y_xi": PointMass(0.0)})


def free_energies(model, **options):
    return np.asarray(fg.infer(model, algorithm="vmp", iterations=6, **options).free_energy)


def test_the_tilt_starts_at_zero_unless_an_init_says_otherwise():
    """The node declares ξ = 0 (q(ω) at its prior PG(1, 0)) for the first sweep; a user's init wins."""
    model, _ = build(np.array([[0.3], [-1.2], [2.0]]), np.array([0, 1, 1]))
    declared = free_energies(model)
    assert np.array_equal(declared, free_energies(model, init={"y_xi": PointMass(0.0)}))
    assert np.array_equal(declared, free_energies(model, init={"y_xi": PointMass(np.zeros(3))}))
    started_elsewhere = free_energies(model, init={"y_xi": PointMass(np.array([3.0, 0.5, 1.0]))})
    assert abs(started_elsewhere[0] - declared[0]) > 1e-3  # the first sweep used the user's ξ
    assert LogisticNode.default_initial["xi"].value == 0.0
