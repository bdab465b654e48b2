"""Inputs that cannot mislead: each fault is refused, or reported for what it is, through the public API.

* a variable of one model used in another is refused when the statement is made, whatever form it takes;
* data too large for float64 arithmetic is named as such, with the fix;
* a compound chain with nothing attached returns its prior marginals;
* a result says whether its marginals are exact, a Bethe approximation (loopy BP) or variational.
"""
import numpy as np
import pytest

import fgraph as fg
from fgraph.nodes import Add, Gamma, GaussMarkovChain, MarkovChain, Mixture, MvGaussMarkovChain, Normal, NormalMeanVariance


# --------------------------------------------------------------------- variables of another model

def _finished_model():
    """A model whose ``with`` block has ended, and its variable ``mu``."""
    with fg.Model("first") as first:
        mu = Normal("mu", mean=0.0, var=1.0)
    return first, mu


#: every form a statement takes on its way to a node, each given the foreign variable ``mu``
STATEMENTS = {
    # a scalar statement on scalars (the statement an unrolled model repeats)
    "one number": lambda mu: Normal("y", mean=mu, var=1.0),
    "one observed number": lambda mu: Normal("y", mean=mu, var=1.0, observed=0.5),
    "one number after another": lambda mu: (Normal("a", mean=0.0, var=1.0), Normal("y", mean=mu, var=1.0)),
    # constants and a plate of data
    "constants with a plate": lambda mu: Normal("y", mean=mu, var=1.0, observed=np.zeros(3)),
    "array constant": lambda mu: Normal("y", mean=mu, var=np.ones(3)),
    # every interface a variable: the plain add_node path
    "variables only": lambda mu: Normal("y", mean=mu, var=Gamma("v", shape=2.0, rate=1.0)),
    # a node with a list of inputs
    "mixture input": lambda mu: Mixture("y", fg.Data("z", np.array([1.0, 0.0])), [mu, Normal("b", mean=0.0, var=1.0)]),
    # a compound chain's variable parameter
    "chain gain": lambda mu: GaussMarkovChain("y", mu, var=1.0, initial_mean=0.0, initial_var=1.0, length=4),
}


@pytest.mark.parametrize("form", sorted(STATEMENTS))
def test_a_variable_of_a_finished_model_is_refused_in_every_statement(form):
    _, mu = _finished_model()
    with fg.Model("second") as second:
        with pytest.raises(fg.ModelError, match=r"variable 'mu' belongs to model 'first'.*not to model 'second'; "
                                                r"a factor connects only variables of its own model\. Declare 'mu' "
                                                r"in this model"):
            STATEMENTS[form](mu)
        Normal("y", mean=0.0, var=1.0)  # the refused statement left nothing behind: its name is free
    assert [node.name for node in second.nodes].count("y") == 1


@pytest.mark.parametrize("form", sorted(STATEMENTS))
def test_a_variable_of_an_enclosing_model_is_refused_in_a_nested_model(form):
    with fg.Model("outer"):
        mu = Normal("mu", mean=0.0, var=1.0)
        with fg.Model("inner") as inner:
            with pytest.raises(fg.ModelError, match=r"variable 'mu' belongs to model 'outer'.*enclosing.*"
                                                    r"not to model 'inner'"):
                STATEMENTS[form](mu)
            Normal("y", mean=0.0, var=1.0)
        assert [node.name for node in inner.nodes].count("y") == 1


def test_a_node_placed_directly_refuses_a_variable_of_another_model():
    _, mu = _finished_model()
    with fg.Model("second") as second:
        y = fg.Data("y", np.zeros(3))
        with pytest.raises(fg.ModelError, match=r"node 'f'.*interface 'mean'.*variable 'mu' belongs to model 'first'"):
            second.add_node(NormalMeanVariance, "f", {"out": y, "mean": mu, "var": 1.0})
        assert not second.nodes


def test_models_with_the_same_name_are_told_apart():
    with fg.Model() as first:
        mu = Normal("mu", mean=0.0, var=1.0)
    with fg.Model() as second:
        with pytest.raises(fg.ModelError, match=r"variable 'mu' belongs to another model named 'model'"):
            Normal("y", mean=mu, var=1.0, observed=np.zeros(3))
    assert first is not second


def test_the_refusal_happens_when_the_statement_is_made_not_at_inference():
    """The statement that used to pass and fail later with ``KeyError: 'mu'`` in the graph."""
    _, mu = _finished_model()
    with fg.Model("second") as second:
        with pytest.raises(fg.ModelError, match="'mu'"):
            Normal("y", mean=mu, var=1.0, observed=np.zeros(3))
        mu = Normal("mu", mean=0.0, var=1.0)  # the corrected statement: mu declared in this model
        Normal("y", mean=mu, var=1.0, observed=np.zeros(3))
    assert fg.infer(second).marginal("mu").var == pytest.approx(0.25)


# --------------------------------------------------------------------- data too large for float64

OVERFLOW = r"data for 'y' are too large for float64 arithmetic.*overflow.*scale or standardise 'y'"
#: numpy's own warnings on the way to the overflow the error then explains
numpy_overflow_warnings = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning",
                                                     "ignore:invalid value encountered:RuntimeWarning")


def _normal_known_variance(data):
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=1.0)
        Normal("y", mean=mu, var=1.0, observed=data)
    return model


def _normal_gamma(data):
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=10.0)
        tau = Gamma("tau", shape=2.0, rate=0.5)
        Normal("y", mean=mu, precision=tau, observed=data)
    return model


@numpy_overflow_warnings
@pytest.mark.parametrize("size", [1e160, 1e200, 1e300])
@pytest.mark.parametrize("algorithm", ["bp", "vmp"])
def test_data_whose_squares_overflow_are_named_as_too_large(size, algorithm):
    with pytest.raises(fg.NumericalError, match=OVERFLOW) as error:
        fg.infer(_normal_known_variance(np.full(5, size)), algorithm=algorithm)
    assert f"largest magnitude {size:.3g}" in str(error.value)
    assert "node '" in str(error.value)  # where the overflow surfaced is still said


@numpy_overflow_warnings
@pytest.mark.parametrize("size", [1e200, 1e300])
def test_data_too_large_for_a_gamma_precision_model_under_vmp(size):
    with pytest.raises(fg.NumericalError, match=OVERFLOW):
        fg.infer(_normal_gamma(np.full(5, size)), algorithm="vmp", init={"tau": fg.Gamma(2.0, 0.5)})


@numpy_overflow_warnings
def test_data_bound_at_inference_are_named_too():
    model = _normal_known_variance(np.zeros(5))
    with pytest.raises(fg.NumericalError, match=OVERFLOW):
        fg.infer(model, data={"y": np.array([1.0, -2.0, 1e200, 0.0, 3.0])})
    assert fg.infer(model, data={"y": np.ones(5)}).marginal("mu").mean == pytest.approx(5 / 6)


def test_large_data_that_do_not_overflow_are_not_refused():
    """Size alone is no fault: an exponential likelihood of 1e200 reads the data through sums, not squares."""
    from fgraph.nodes import Exponential

    with fg.Model() as model:
        rate = Gamma("rate", shape=2.0, rate=1.0)
        Exponential("y", rate=rate, observed=np.full(5, 1e200))
    result = fg.infer(model)
    assert result.marginal("rate").mean == pytest.approx(7.0 / (1.0 + 5e200))
    assert np.isfinite(result.log_evidence)


@numpy_overflow_warnings
def test_an_evidence_lost_to_overflow_is_not_returned_as_minus_infinity():
    """1.2e154 squared is finite, their sum over five elements is not: the posterior is right, the evidence
    (about −4e307, a float64) would come back as −inf."""
    result = fg.infer(_normal_known_variance(np.full(5, 1.2e154)))
    assert result.marginal("mu").mean == pytest.approx(1e154)
    with pytest.raises(fg.NumericalError, match=r"data for 'y' are too large.*the sum of their squares overflows"
                                                r".*The overflow surfaced as: the log evidence is -inf"):
        result.log_evidence


def test_an_impossible_observation_keeps_its_evidence_of_minus_infinity():
    """−inf is the evidence of data the model cannot produce: without large values it is returned, not refused."""
    from fgraph.nodes import Categorical

    with fg.Model() as model:
        Categorical("z", np.array([1.0, 0.0]), observed=np.array([0.0, 1.0]))
    assert fg.infer(model).log_evidence == -np.inf


# --------------------------------------------------------------------- chains with nothing attached

INITIAL = np.array([0.7, 0.2, 0.1])
TRANSITION = np.array([[0.8, 0.1, 0.3], [0.15, 0.7, 0.3], [0.05, 0.2, 0.4]])  # columns sum to one


def _propagated(initial, transition, steps):
    """p(z_t) = A^t π for t = 0..T−1 (numpy): the prior marginals of a chain with nothing attached."""
    marginals = [initial]
    for _ in range(steps - 1):
        marginals.append(transition @ marginals[-1])
    return np.array(marginals)


@pytest.mark.parametrize("steps", [1, 6, 80])  # the float recursion and the scan
@pytest.mark.parametrize("algorithm", ["bp", "vmp"])
@pytest.mark.parametrize("causal", [False, True])
def test_a_markov_chain_with_nothing_attached_returns_its_prior_marginals(steps, algorithm, causal, recursion_path):
    with fg.Model() as model:
        MarkovChain("z", INITIAL, TRANSITION, steps, causal=causal)
    result = fg.infer(model, algorithm=algorithm, free_energy=algorithm == "vmp")
    np.testing.assert_allclose(result.marginal("z").probabilities, _propagated(INITIAL, TRANSITION, steps),
                               rtol=1e-12, atol=1e-15)
    if algorithm == "bp":
        assert result.log_evidence == pytest.approx(0.0, abs=1e-12)  # nothing observed: p() = 1
    else:
        assert result.free_energy[-1] == pytest.approx(0.0, abs=1e-12)


def test_a_batch_of_markov_chains_with_their_own_starts_and_nothing_attached():
    starts = np.array([[1.0, 0.0, 0.0], [0.0, 0.5, 0.5]])
    with fg.Model() as model:
        MarkovChain("z", starts, TRANSITION, 7, batch_shape=(2,))
    marginals = fg.infer(model).marginal("z").probabilities
    for chain in range(2):
        np.testing.assert_allclose(marginals[chain], _propagated(starts[chain], TRANSITION, 7), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("steps", [1, 9, 700])  # the float recursion and the scan
@pytest.mark.parametrize("algorithm", ["bp", "vmp"])
def test_a_gauss_markov_chain_with_nothing_attached_returns_its_prior_marginals(steps, algorithm, recursion_path):
    gain, var, mean0, var0 = 0.95, 0.3, 2.0, 0.5
    with fg.Model() as model:
        GaussMarkovChain("x", gain, var=var, initial_mean=mean0, initial_var=var0, length=steps)
    result = fg.infer(model, algorithm=algorithm, free_energy=algorithm == "vmp")
    means, variances = [mean0], [var0]  # x_t ~ N(a m_{t−1}, a² v_{t−1} + q)
    for _ in range(steps - 1):
        means.append(gain * means[-1])
        variances.append(gain * gain * variances[-1] + var)
    marginal = result.marginal("x")
    np.testing.assert_allclose(marginal.mean, means, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(marginal.var, variances, rtol=1e-12)
    if algorithm == "bp":
        assert result.log_evidence == pytest.approx(0.0, abs=1e-12)
    else:
        assert result.free_energy[-1] == pytest.approx(0.0, abs=1e-9)


def test_a_batch_of_gauss_markov_chains_with_their_own_starts_and_nothing_attached():
    with fg.Model() as model:
        GaussMarkovChain("x", -1.1, var=0.2, initial_mean=np.array([1.0, -3.0]), initial_var=np.array([0.1, 2.0]),
                         length=5, batch_shape=(2,), causal=True)
    marginal = fg.infer(model).marginal("x")
    steps = np.arange(5)
    np.testing.assert_allclose(marginal.mean, np.array([[1.0], [-3.0]]) * (-1.1) ** steps, rtol=1e-12)
    geometric = (1.21 ** steps - 1.0) / (1.21 - 1.0)  # Σ_{k<t} a^{2k}
    np.testing.assert_allclose(marginal.var, np.array([[0.1], [2.0]]) * 1.21 ** steps + 0.2 * geometric, rtol=1e-12)


@pytest.mark.parametrize("algorithm", ["bp", "vmp"])
@pytest.mark.parametrize("control", [False, True])
def test_a_multivariate_gauss_markov_chain_with_nothing_attached_returns_its_prior_marginals(algorithm, control):
    steps = 6
    transition = np.array([[1.0, 0.1], [0.0, 0.9]])
    noise = np.array([[0.0, 0.0], [0.0, 0.2]])  # singular: a position integrating a velocity
    mean0, cov0 = np.array([1.0, -0.5]), np.array([[0.5, 0.1], [0.1, 0.3]])
    matrix, inputs = np.array([[0.0], [1.0]]), np.linspace(-1.0, 1.0, steps - 1)[:, None]
    extra = dict(control_matrix=matrix, control=inputs) if control else {}
    with fg.Model() as model:
        MvGaussMarkovChain("x", transition, noise, mean0, cov0, steps, **extra)
    result = fg.infer(model, algorithm=algorithm, free_energy=algorithm == "vmp")
    means, covariances = [mean0], [cov0]  # x_t ~ N(F m_{t−1} + B u_{t−1}, F P_{t−1} Fᵀ + Q)
    for t in range(steps - 1):
        means.append(transition @ means[-1] + (matrix @ inputs[t] if control else 0.0))
        covariances.append(transition @ covariances[-1] @ transition.T + noise)
    marginal = result.marginal("x")
    np.testing.assert_allclose(marginal.mean, means, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(marginal.cov, covariances, rtol=1e-12, atol=1e-14)
    if algorithm == "bp":
        assert result.log_evidence == pytest.approx(0.0, abs=1e-12)
    else:
        assert result.free_energy[-1] == pytest.approx(0.0, abs=1e-9)


def test_a_chain_with_random_parameters_and_nothing_attached_says_what_is_missing():
    """Learning a transition matrix or a gain needs data: with nothing attached the error names the variable
    left unconnected and says to connect what observes it."""
    from fgraph.nodes import MatrixDirichlet

    with fg.Model() as chain:
        transition = MatrixDirichlet("A", np.ones((2, 2)) + np.eye(2))
        MarkovChain("z", np.array([0.7, 0.3]), transition, 6)
    with fg.Model() as gauss:
        gain, precision = Normal("a", mean=0.9, var=0.01), Gamma("w", shape=2.0, rate=1.0)
        GaussMarkovChain("x", gain, precision=precision, initial_mean=1.0, initial_var=2.0, length=6)
    cases = [(chain, "z", {"A": fg.MatrixDirichlet(np.ones((2, 2)) + np.eye(2))}),
             (gauss, "x", {"x": fg.NormalMeanVariance(np.zeros(6), np.ones(6)), "w": fg.Gamma(2.0, 1.0)})]
    for model, name, init in cases:
        with pytest.raises(fg.RuleNotFoundError, match=rf"Nothing but node '{name}' is connected to variable "
                                                       rf"'{name}'.*flat.*Connect the factors that observe or use"):
            fg.infer(model, algorithm="vmp", init=init)


# --------------------------------------------------------------------- exact or approximate marginals

def _loop():
    """mu → a, b → s = a + b → y: the loop mu − a − s − b − mu. Exactly, q(mu) = N(4/13, 5/13)."""
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=1.0)
        a = Normal("a", mean=mu, var=1.0)
        b = Normal("b", mean=mu, var=1.0)
        Normal("y", mean=Add("s", a, b), var=0.5, observed=np.array(1.0))
    return model


LOOP_INIT = {name: fg.NormalMeanVariance(0.0, 1.0) for name in ("mu", "a", "b")}


def test_bp_on_a_tree_says_its_marginals_are_exact():
    result = fg.infer(_normal_known_variance(np.array([0.5, 1.5, 1.0])), algorithm="bp")
    assert result.exact is True
    assert result.marginal("mu").var == pytest.approx(0.25, rel=1e-12)
    assert "marginals: exact" in result.summary()


def test_loopy_bp_says_its_marginals_are_a_bethe_approximation():
    result = fg.infer(_loop(), algorithm="bp", init=LOOP_INIT)
    assert result.converged  # a converged run ...
    assert result.marginal("mu").mean == pytest.approx(4 / 13, rel=1e-9)
    assert abs(result.marginal("mu").var - 5 / 13) > 0.2  # ... whose variance is not the posterior's
    assert result.exact is False
    assert "marginals: approximate (Bethe / loopy BP)" in result.summary()
    with pytest.raises(fg.ModelError, match="log_evidence is exact only"):
        result.log_evidence


def test_vmp_says_its_marginals_are_variational():
    result = fg.infer(_normal_gamma(np.array([0.5, 1.5, 1.0, 2.0])), algorithm="vmp", init={"tau": fg.Gamma(2.0, 0.5)})
    assert result.exact is False
    assert "marginals: variational (mean-field VMP)" in result.summary()


def test_a_hybrid_names_its_variational_nodes():
    """Sum-product on the tree's plain nodes, mean field on the node whose factor couples mu and tau."""
    model = _normal_gamma(np.array([0.5, 1.5, 1.0, 2.0]))
    result = fg.infer(model, algorithm="bp", constraints={"factorization": {"y": "mf"}},
                      init={"tau": fg.Gamma(2.0, 0.5), "mu": fg.NormalMeanVariance(0.0, 10.0)})
    assert result.exact is False
    assert "marginals: variational (mean-field VMP on node 'y'; belief propagation elsewhere)" in result.summary()


def test_a_point_mass_form_constraint_is_named_among_the_approximations():
    model = _normal_known_variance(np.array([0.5, 1.5, 1.0]))
    result = fg.infer(model, algorithm="bp", constraints={"form": {"mu": "point_mass"}})
    assert result.exact is False
    assert "marginals: variational (mean-field VMP; point mass for 'mu')" in result.summary()


def test_each_copy_of_a_model_says_whether_it_is_exact():
    with fg.Model(copies=2) as model:
        mu = Normal("mu", mean=fg.per_copy(np.array([0.0, 1.0])), var=1.0)
        Normal("y", mean=mu, var=1.0, observed=np.zeros(3))
    result = fg.infer(model)
    assert result.exact is True and result.copy(1).exact is True


def test_a_variable_of_a_nested_model_is_refused_by_the_enclosing_one():
    with fg.Model("outer") as outer:
        y = fg.Data("y", 0.0)
        with fg.Model("inner"):
            z = Normal("z", mean=0.0, var=1.0)
            with pytest.raises(fg.ModelError, match=r"node 'f', interface 'mean': variable 'z' belongs to model "
                                                    r"'inner', a `with fg.Model\(\)` block open inside the one of "
                                                    r"model 'outer'"):
                outer.add_node(NormalMeanVariance, "f", {"out": y, "mean": z, "var": 1.0})
