"""Bad input is rejected before computing, with a message that names the culprit."""
import numpy as np
import pytest

import fgraph as fg
from fgraph.families import NormalMeanVariance as NormalMessage, UnivariateNormal
from fgraph.node import FactorNode
from fgraph.registry import rule
import fgraph.nodes as fn
from fgraph.nodes import Gamma, Normal


def simple_model(data=None, n=5):
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=1.0)
        Normal("y", mean=mu, var=1.0, observed=np.zeros(n) if data is None else data)
    return model


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_data_is_rejected_naming_variable_and_index(bad):
    data = np.zeros(5)
    data[3] = bad
    with pytest.raises(fg.DataError, match=r"'y'.*NaN or infinite.*\(3,\)"):
        simple_model(data)
    model = simple_model()
    with pytest.raises(fg.DataError, match=r"'y'.*index \(3,\)"):
        fg.infer(model, data={"y": data})


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_one_non_finite_observation_is_rejected(bad):
    """A single number (the statement of one observation) takes a shorter path: it is checked all the same."""
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=1.0)
        with pytest.raises(fg.DataError, match=r"data for 'y' contains 1 NaN or infinite value"):
            Normal("y", mean=mu, var=1.0, observed=bad)
        Normal("y", mean=mu, var=1.0, observed=0.5)
    with pytest.raises(fg.DataError, match=r"data for 'y' contains 1 NaN or infinite value"):
        fg.infer(model, data={"y": bad})
    assert float(model.data["y"]) == 0.5  # the rejected value was not bound
    model.bind(y=np.float64(-2.0))
    assert float(model.data["y"]) == -2.0


def test_rebinding_data_of_another_shape_is_rejected():
    model = simple_model()
    with pytest.raises(fg.DataError, match=r"data for 'y' has shape \(7,\).*declared with shape \(5,\)"):
        fg.infer(model, data={"y": np.zeros(7)})


def test_non_numeric_data_is_rejected():
    model = simple_model()
    with pytest.raises(fg.DataError, match="'y' must be numeric"):
        model.bind(y=["a", "b", "c", "d", "e"])


@pytest.mark.parametrize("keyword, value", [("var", -1.0), ("var", 0.0), ("precision", 0.0)])
def test_non_positive_scale_parameters_are_rejected(keyword, value):
    with fg.Model():
        with pytest.raises(fg.ModelError, match=rf"node 'x', parameter '{keyword}': {keyword} must be strictly positive, "
                                                rf"got minimum {value}"):
            Normal("x", mean=0.0, **{keyword: value})


def test_nan_parameter_is_rejected():
    with fg.Model():
        with pytest.raises(fg.ModelError, match=r"node 'x', parameter 'mean' contains NaN"):
            Normal("x", mean=np.nan, var=1.0)


def test_gamma_parameters_must_be_positive():
    with fg.Model():
        with pytest.raises(fg.ModelError, match=r"node 'tau', parameter 'shape'.*strictly positive"):
            Gamma("tau", shape=-2.0, rate=1.0)


def test_shape_mismatch_between_parameters_and_data():
    with fg.Model():
        x = Normal("x", mean=0.0, var=1.0, batch_shape=(3,))
        with pytest.raises(fg.ModelError, match="'y'.*do not broadcast"):
            Normal("y", mean=x, var=1.0, observed=np.zeros(4))


def test_unknown_names_are_reported_with_the_known_ones():
    model = simple_model()
    result = fg.infer(model)
    with pytest.raises(fg.ModelError, match=r"unknown variable 'nu'.*mu"):
        result.marginal("nu")
    with pytest.raises(fg.ModelError, match=r"unknown variable 'z'"):
        fg.infer(model, data={"z": 1.0})
    with pytest.raises(fg.ModelError, match=r"unknown variable 'sigma'"):
        fg.infer(model, init={"sigma": fg.Gamma(1.0, 1.0)})
    with pytest.raises(fg.ModelError, match=r"unknown node 'likelihood'.*nodes are: mu, y"):
        fg.infer(model, constraints={"factorization": {"likelihood": "mf"}})
    with pytest.raises(fg.ModelError, match=r"unknown variable 'm'"):
        fg.infer(model, constraints={"form": {"m": "point_mass"}})


def test_duplicate_variable_names_are_rejected():
    with fg.Model():
        Normal("x", mean=0.0, var=1.0)
        with pytest.raises(fg.ModelError, match="'x' is defined twice"):
            Normal("x", mean=0.0, var=1.0)


def test_data_for_a_latent_variable_is_rejected():
    model = simple_model()
    with pytest.raises(fg.DataError, match="'mu' is latent"):
        fg.infer(model, data={"mu": 1.0})


def test_observed_variable_without_data_is_reported():
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=1.0)
        Normal("y", mean=mu, var=1.0, observed=True, batch_shape=(4,))
    with pytest.raises(fg.DataError, match=r"'y' has no data; pass data=\{'y': ...\}"):
        fg.infer(model)


def test_missing_initialisation_is_reported_before_computing():
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=1.0)
        tau = Gamma("tau", shape=1.0, rate=1.0)
        Normal("y", mean=mu, precision=tau, observed=np.zeros(3))
    with pytest.raises(fg.ScheduleError, match=r"node 'y'.*variable 'tau'.*init=\{'tau'"):
        fg.infer(model, algorithm="vmp")
    with pytest.raises(fg.ModelError, match=r"init\['tau'\] must be a distribution"):
        fg.infer(model, algorithm="vmp", init={"tau": 1.0})


def test_missing_rule_names_node_interface_families_and_existing_rules():
    from fgraph.nodes import InverseGamma

    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=1.0)
        v = InverseGamma("v", shape=2.0, scale=1.0)
        Normal("y", mean=mu, var=v, observed=0.0)
    # under BP the mean and a random variance form one cluster: no closed-form sum-product message
    with pytest.raises(fg.RuleNotFoundError) as error:
        fg.infer(model, algorithm="bp")
    message = str(error.value)
    assert "node 'y'" in message and "interface 'mean' of NormalMeanVariance" in message
    assert "m_var: InverseGamma, q_out: PointMass" in message
    assert "Rules that exist for it" in message and "NormalMeanVariance.out(" in message


def test_messages_of_different_families_on_a_variable_are_reported_before_running():
    with fg.Model() as model:
        v = Gamma("v", shape=1.0, rate=1.0)
        Normal("y", mean=0.0, var=v, observed=np.zeros(3))
    # a Gamma prior on a *variance* meets the inverse-gamma likelihood of the data
    for algorithm in ("bp", "vmp"):
        with pytest.raises(fg.ModelError, match=r"variable 'v': messages of different families meet") as error:
            fg.compile(model, algorithm=algorithm)
        message = str(error.value)
        assert "node 'v' (GammaNode), interface 'out' sends Gamma" in message
        assert "node 'y' (NormalMeanVariance), interface 'var' sends InverseGamma" in message


def test_invalid_options_are_rejected():
    model = simple_model()
    with pytest.raises(fg.ModelError, match="unknown algorithm 'ep'"):
        fg.infer(model, algorithm="ep")
    with pytest.raises(fg.ModelError, match="damping"):
        fg.infer(model, damping=1.5)
    with pytest.raises(fg.ModelError, match="iterations"):
        fg.infer(model, iterations=0)
    with pytest.raises(fg.ModelError, match="unknown form constraint"):
        fg.infer(model, constraints={"form": {"mu": "gaussian"}})
    with fg.Model():
        with pytest.raises(fg.ModelError, match="power must lie in"):
            Normal("x", mean=0.0, var=1.0, power=1.5)


class Broken(FactorNode):
    interfaces = ("out", "in")
    event_ndims = {"out": 0, "in": 0}


@rule(Broken, "out")
def _broken_out(m_in: UnivariateNormal) -> UnivariateNormal:
    return NormalMessage(np.nan, 1.0, check=False)


def test_nan_in_a_message_raises_naming_the_node():
    with fg.Model() as model:
        x = Normal("x", mean=0.0, var=1.0)
        fg.random_variable(Broken, "z", {"in": x})
    result = fg.infer(model)  # the message into z is computed when z is read
    with pytest.raises(fg.NumericalError, match=r"node 'z' \(Broken\), interface 'out'") as error:
        result.marginal("z")
    assert "overflow" not in str(error.value)  # a NaN of a rule is not blamed on the data


def test_a_nan_elsewhere_does_not_blame_large_data_of_another_component():
    """Data too large for squares are named only when the NaN appeared in their part of the graph: an
    exponential likelihood of 1e200 (computed through sums, exact) beside the broken node stays out of it."""
    from fgraph.nodes import Exponential

    with fg.Model() as model:
        x = Normal("x", mean=0.0, var=1.0)
        fg.random_variable(Broken, "z", {"in": x})
        rate = Gamma("rate", shape=2.0, rate=1.0)
        Exponential("y", rate=rate, observed=np.full(5, 1e200))
    with pytest.raises(fg.NumericalError, match=r"^the message out of node 'z' \(Broken\)") as error:
        fg.infer(model).marginals
    assert "'y'" not in str(error.value)


def test_deterministic_node_under_vmp_gets_a_hint():
    from fgraph.nodes import Add

    with fg.Model() as model:
        a = Normal("a", mean=0.0, var=1.0)
        b = Normal("b", mean=0.0, var=1.0)
        s = Add("s", a, b)
        Normal("y", mean=s, var=1.0, observed=np.array(1.0))
    with pytest.raises(fg.ScheduleError, match=r"node\(s\) \['s'\] have no variational .* factorization 'bp'"):
        fg.infer(model, algorithm="vmp")
    result = fg.infer(model, algorithm="vmp", constraints={"factorization": {"s": "bp"}}, iterations=2)
    assert result.free_energy[-1] == pytest.approx(0.5 * np.log(2 * np.pi * 3.0) + 1.0 / 6.0, rel=1e-12)


def test_dot_rejects_mismatched_or_non_finite_features_and_a_scalar_w():
    from fgraph.nodes import Dot, MvNormal

    with fg.Model():
        w = MvNormal("w", mean=np.zeros(3), cov=np.eye(3))
        with pytest.raises(fg.ModelError, match=r"Dot 'f': x has shape \(4, 2\), but w has dimension 3"):
            Dot("f", np.ones((4, 2)), w)
        with pytest.raises(fg.ModelError, match=r"node 'g', parameter 'x'.*NaN or infinite"):
            Dot("g", np.array([[1.0, np.nan, 0.0]]), w)
        scalar = Normal("s", mean=0.0, var=1.0)
        with pytest.raises(fg.ModelError, match=r"Dot 'h': w must be a vector variable"):
            Dot("h", np.ones(3), scalar)


# ----------------------------------------------------------------------------------------------------------------
# A table of mistakes a new user makes, each rejected with an error that derives from fg.FgraphError and from the
# Python class a Python user expects, and whose message names the culprit (variable, node, interface, option).
# ----------------------------------------------------------------------------------------------------------------
def build(statements):
    """Run ``statements(model)`` inside a fresh model and return the model."""
    with fg.Model() as model:
        statements(model)
    return model


def normal_gamma_model():
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=1.0)
        tau = Gamma("tau", shape=1.0, rate=1.0)
        Normal("y", mean=mu, precision=tau, observed=np.array([0.5, -0.2, 1.1]))
    return model


def vmp(**options):
    return fg.infer(normal_gamma_model(), algorithm="vmp", **dict({"init": {"tau": fg.Gamma(1.0, 1.0)}}, **options))


def observed_later(constructor, **keywords):
    """A model whose variable 'v' is declared observed and bound later, as with an online update."""
    def statements(model):
        constructor(**keywords)
    return build(statements)


def data_placeholder_bound_to(value):
    with fg.Model() as model:
        Gamma("x", shape=1.0, rate=fg.Data("r", 1.0))
    return fg.infer(model, data={"r": value})


def string_for_a_variable():
    with fg.Model():
        Normal("mu", mean=0.0, var=1.0)
        Normal("y", mean="mu", var=1.0)


OBSERVED_OUTSIDE_THE_SUPPORT = [
    # the upper bound of a Beta observation (the lower one was the only one checked)
    pytest.param(lambda: build(lambda m: fn.Beta("b", 2.0, 2.0, observed=1.5)), fg.DataError, ValueError,
                 r"data for 'b' \(interface 'out' of node 'b'\): out must lie in \(0, 1\), got 1\.5", id="beta-above-1"),
    pytest.param(lambda: build(lambda m: fn.Beta("b", 2.0, 2.0, observed=np.array([0.5, 1.0]))), fg.DataError, ValueError,
                 r"'b'.*out must lie in \(0, 1\), got 1\.0 at index \(1,\)", id="beta-at-1"),
    pytest.param(lambda: build(lambda m: fn.Beta("b", 2.0, 2.0, observed=0.0)), fg.DataError, ValueError,
                 r"'b'.*out must lie in \(0, 1\), got 0\.0", id="beta-at-0"),
    pytest.param(lambda: fg.infer(observed_later(fn.Beta, name="v", a=1.0, b=1.0, observed=True), data={"v": 2.0}),
                 fg.DataError, ValueError, r"data for 'v' \(interface 'out' of node 'v'\): out must lie in \(0, 1\)",
                 id="beta-bound-later"),
    pytest.param(lambda: build(lambda m: Gamma("g", 2.0, 2.0, observed=np.array([1.0, -3.0, 0.5]))), fg.DataError,
                 ValueError, r"'g'.*out must be strictly positive, got minimum -3\.0 at index \(1,\)", id="gamma-negative"),
    pytest.param(lambda: build(lambda m: fn.Exponential("e", 1.0, observed=0.0)), fg.DataError, ValueError,
                 r"'e'.*'out'.*strictly positive, got minimum 0\.0", id="exponential-zero"),
    pytest.param(lambda: build(lambda m: fn.Bernoulli("c", 0.5, observed=np.array([0, 1, 2]))), fg.DataError, ValueError,
                 r"'c'.*out must be 0 or 1, got 2\.0 at index \(2,\)", id="bernoulli-two"),
    pytest.param(lambda: fg.infer(observed_later(fn.Bernoulli, name="v", p=0.3, observed=True, batch_shape=(2,)),
                                  data={"v": np.array([1.0, 0.5])}),
                 fg.DataError, ValueError, r"data for 'v' \(interface 'out' of node 'v'\): out must be 0 or 1, got 0\.5",
                 id="bernoulli-bound-later"),
    pytest.param(lambda: fg.infer(observed_later(fn.Categorical, name="v", p=np.ones(3) / 3, observed=True),
                                  data={"v": np.array([0.2, 0.8, 0.0])}),
                 fg.DataError, ValueError, r"data for 'v' \(interface 'out' of node 'v'\): out must be one-hot",
                 id="categorical-bound-later-not-one-hot"),
    pytest.param(lambda: build(lambda m: fn.Categorical("z", np.ones(3) / 3, observed=np.array([0, 3]))), fg.DataError,
                 ValueError, r"'z': labels must lie in 0\.\.2, got 3 at index \(1,\)", id="categorical-label"),
    pytest.param(lambda: build(lambda m: fn.Dirichlet("d", np.ones(3), observed=np.array([0.5, 0.6, 0.1]))), fg.DataError,
                 ValueError, r"'d'.*out must be a probability vector.*sum 1\.2", id="dirichlet-sum"),
    pytest.param(lambda: build(lambda m: fn.Dirichlet("d", np.ones(2), observed=np.array([[0.5, 0.5], [1.0, 0.0]]))),
                 fg.DataError, ValueError, r"'d'.*out\[1\] must be a probability vector \(positive entries",
                 id="dirichlet-zero-entry"),
    pytest.param(lambda: build(lambda m: fn.Wishart("w", 3.0, np.eye(2), observed=np.diag([1.0, -1.0]))), fg.DataError,
                 ValueError, r"'w'.*out must be symmetric positive definite, got a matrix with smallest eigenvalue -1",
                 id="wishart-indefinite"),
    pytest.param(lambda: build(lambda m: fn.Wishart("w", 3.0, np.eye(2), observed=np.array([[1.0, 0.5], [0.0, 1.0]]))),
                 fg.DataError, ValueError, r"'w'.*symmetric positive definite.*\|A - A\^T\| up to 0\.5", id="wishart-asymmetric"),
    pytest.param(lambda: build(lambda m: fn.MatrixDirichlet("a", np.ones((2, 2)),
                                                            observed=np.array([[0.5, 0.4], [0.5, 0.5]]))),
                 fg.DataError, ValueError, r"'a'.*out must be column-stochastic.*column sums \[1\.  0\.9\]",
                 id="matrix-dirichlet-column"),
    pytest.param(lambda: build(lambda m: fn.MvNormal("x", np.zeros(2), cov=np.eye(2), observed=np.array([1.0, np.inf]))),
                 fg.DataError, ValueError, r"data for 'x' contains 1 NaN or infinite value\(s\), first at index \(1,\)",
                 id="mvnormal-infinite"),
    pytest.param(lambda: data_placeholder_bound_to(-1.0), fg.DataError, ValueError,
                 r"data for 'r' \(interface 'rate' of node 'x'\): rate must be strictly positive", id="data-rebound"),
    pytest.param(lambda: build(lambda m: Gamma("x", shape=1.0, rate=fg.Data("r", -2.0))), fg.DataError, ValueError,
                 r"data for 'r' \(interface 'rate' of node 'x'\): rate must be strictly positive, got minimum -2\.0",
                 id="data-bound-before-its-reader"),
]

PARAMETERS_OUTSIDE_THEIR_DOMAIN = [
    pytest.param(lambda: build(lambda m: fn.Bernoulli("c", 1.5)), fg.ModelError, ValueError,
                 r"node 'c', parameter 'p': p must lie in \[0, 1\], got 1\.5", id="bernoulli-p"),
    pytest.param(lambda: build(lambda m: fn.Categorical("z", np.array([0.5, 0.6]))), fg.ModelError, ValueError,
                 r"node 'z', parameter 'p': p must be a probability vector", id="categorical-p"),
    pytest.param(lambda: build(lambda m: fn.Categorical("z", 0.5)), fg.ModelError, ValueError,
                 r"variable 'z': expected at least 1 axis/axes holding the categories", id="categorical-scalar-p"),
    pytest.param(lambda: build(lambda m: fn.Beta("b", 0.0, 1.0)), fg.ModelError, ValueError,
                 r"node 'b', parameter 'a': a must be strictly positive", id="beta-a"),
    pytest.param(lambda: build(lambda m: fn.Wishart("w", 3.0, np.array([[1.0, 2.0], [2.0, 1.0]]))), fg.ModelError,
                 ValueError, r"node 'w', parameter 'scale': scale must be symmetric positive definite", id="wishart-scale"),
    pytest.param(lambda: build(lambda m: fn.MvNormal("x", np.zeros(2), precision=np.zeros((2, 2)))), fg.ModelError,
                 ValueError, r"node 'x', parameter 'precision': precision must be symmetric positive definite",
                 id="mvnormal-precision"),
    pytest.param(lambda: build(lambda m: fn.Transition("s", np.array([1.0, 0.0]), np.array([[0.9, 0.5], [0.2, 0.5]]))),
                 fg.ModelError, ValueError, r"node 's', parameter 'matrix': matrix must be column-stochastic",
                 id="transition-matrix"),
    pytest.param(lambda: build(lambda m: fn.Transition("s", np.array([0.5, 0.5]), np.eye(2))), fg.ModelError,
                 ValueError, r"node 's', parameter 'in': in must be one-hot", id="transition-in"),
    pytest.param(lambda: build(lambda m: fn.Linear("x", 0.0, 2.0, 0.0)), fg.ModelError, ValueError,
                 r"node 'x', parameter 'var': var must be strictly positive", id="linear-var"),
    pytest.param(lambda: build(lambda m: Normal("x", mean=0.0, var=1.0, precision=1.0)), fg.ModelError, ValueError,
                 r"Normal 'x': give exactly one of var= or precision=", id="normal-two-scales"),
    pytest.param(lambda: build(lambda m: fn.MvNormal("x", np.zeros(2))), fg.ModelError, ValueError,
                 r"MvNormal 'x': give exactly one of cov= or precision=", id="mvnormal-no-matrix"),
    pytest.param(lambda: build(lambda m: Normal("x", mean=0.0, var=1.0, power=0.0)), fg.ModelError, ValueError,
                 r"node 'x': power must lie in \(0, 1\], got 0\.0", id="power-zero"),
    pytest.param(lambda: build(lambda m: fn.MarkovChain("z", [0.5, 0.5], np.eye(2), length=0)), fg.ModelError,
                 ValueError, r"MarkovChain 'z': length must be a whole number >= 1", id="chain-length-zero"),
    pytest.param(lambda: build(lambda m: fn.GaussMarkovChain("z", 1.0, 1.0, 0.0, 1.0, length=2.5)), fg.ModelError,
                 ValueError, r"GaussMarkovChain 'z': length must be a whole number >= 1 \(time steps\), got 2\.5",
                 id="chain-length-fraction"),
]

WRONG_KINDS_OF_DATA_AND_PARAMETERS = [
    pytest.param(lambda: build(lambda m: Normal("y", 0.0, 1.0, observed=np.array([1.0 + 2.0j, 2.0]))),
                 fg.DataTypeError, TypeError, r"data for 'y' must be real, got complex numbers", id="complex-data"),
    pytest.param(lambda: fg.infer(simple_model(n=2), data={"y": np.array([1.0, 0.0j])}), fg.DataTypeError, TypeError,
                 r"data for 'y' must be real, got complex", id="complex-data-bound"),
    pytest.param(lambda: build(lambda m: Normal("y", 0.0, 1.0, observed=["1.0", "2.5"])), fg.DataTypeError, TypeError,
                 r"data for 'y' must be numeric, got strings such as '1\.0'", id="numeric-strings"),
    pytest.param(lambda: build(lambda m: Normal("y", 0.0, 1.0, observed=[1.0, "2.5"])), fg.DataTypeError, TypeError,
                 r"data for 'y' must be numeric, got strings such as '1\.0'", id="mixed-strings"),
    pytest.param(lambda: build(lambda m: Normal("y", 0.0, 1.0, observed="3")), fg.DataTypeError, TypeError,
                 r"data for 'y' must be numeric, got the string '3'", id="string-scalar"),
    pytest.param(lambda: build(lambda m: Normal("y", 0.0, 1.0, observed=[[1.0, 2.0], [3.0]])), fg.DataTypeError,
                 TypeError, r"data for 'y' must be a rectangular array of numbers, got a ragged list", id="ragged"),
    pytest.param(lambda: build(lambda m: Normal("y", 0.0, 1.0, observed=[1.0, None])), fg.DataTypeError, TypeError,
                 r"data for 'y' must be numeric, got a NoneType among its values", id="none-in-data"),
    pytest.param(lambda: build(lambda m: Normal("y", 0.0, 1.0, observed=np.array([]))), fg.DataError, ValueError,
                 r"data for 'y' is empty \(shape \(0,\)\)", id="empty-data"),
    pytest.param(lambda: build(lambda m: fn.Categorical("z", np.ones(2) / 2, observed=["0", "1"])), fg.DataTypeError,
                 TypeError, r"data for 'z' \(integer labels or one-hot arrays\) must be numeric, got strings",
                 id="categorical-string-labels"),
    pytest.param(lambda: build(lambda m: fg.Data("d", 1.0 + 1.0j)), fg.DataTypeError, TypeError,
                 r"data for 'd' must be real", id="complex-placeholder"),
    pytest.param(lambda: simple_model().bind(["y"]), fg.DataTypeError, TypeError,
                 r"data must be a dict of variable name -> array, got list", id="data-not-a-dict"),
    pytest.param(string_for_a_variable, fg.ModelTypeError, TypeError,
                 r"node 'y', parameter 'mean': expected a number, array or variable, got the string 'mu'; "
                 r"to connect the variable 'mu', pass the variable object", id="name-for-a-variable"),
    pytest.param(lambda: build(lambda m: Normal("y", mean="0.5", var=1.0)), fg.ModelTypeError, TypeError,
                 r"node 'y', parameter 'mean': expected a number, array or variable, got the string '0\.5'",
                 id="numeric-string-parameter"),
    pytest.param(lambda: build(lambda m: Normal("y", mean=1.0 + 1.0j, var=1.0)), fg.ModelTypeError, TypeError,
                 r"node 'y', parameter 'mean' must be real, got complex", id="complex-parameter"),
    pytest.param(lambda: build(lambda m: Normal("y", mean=None, var=1.0)), fg.ModelTypeError, TypeError,
                 r"node 'y', parameter 'mean' is missing \(None\)", id="none-parameter"),
    pytest.param(lambda: build(lambda m: Normal("y", mean=fg.NormalMeanVariance(0.0, 1.0), var=1.0)), fg.ModelTypeError,
                 TypeError, r"node 'y', parameter 'mean': pass a number, an array or a variable, not a distribution",
                 id="distribution-parameter"),
    pytest.param(lambda: build(lambda m: Normal("y", mean=0.0, var=1.0, power="half")), fg.ModelTypeError, TypeError,
                 r"node 'y': power must be a number in \(0, 1\], got 'half'", id="power-string"),
    pytest.param(lambda: build(lambda m: Normal(3, mean=0.0, var=1.0)), fg.ModelTypeError, TypeError,
                 r"variable names must be non-empty strings, got 3", id="name-not-a-string"),
    pytest.param(lambda: build(lambda m: fn.Linear("x", 0.0, "2", 1.0)), fg.ModelTypeError, TypeError,
                 r"node 'x': the gain must be numeric, got the string '2'", id="gain-string"),
    pytest.param(lambda: build(lambda m: fn.Product("c", Normal("a", 0.0, 1.0), Normal("b", 0.0, 1.0),
                                                    quadrature_points=12.5)),
                 fg.ModelTypeError, TypeError, r"node 'c': quadrature_points must be a whole number >= 10, got 12\.5",
                 id="quadrature-points-fraction"),
    pytest.param(lambda: fg.Gamma(1.0, -1.0), fg.ModelError, ValueError, r"rate must be strictly positive",
                 id="family-parameter"),
    pytest.param(lambda: fg.NormalMeanVariance("zero", 1.0), fg.ModelTypeError, TypeError,
                 r"mean must be numeric, got 'zero'", id="family-parameter-string"),
]

SHAPES = [
    pytest.param(lambda: build(lambda m: Normal("y", 0.0, 1.0, batch_shape=(-5,))), fg.ModelError, ValueError,
                 r"variable 'y': every batch_shape entry must be at least 1, got \(-5,\)", id="negative-batch"),
    pytest.param(lambda: build(lambda m: Normal("y", 0.0, 1.0, batch_shape=(0,))), fg.ModelError, ValueError,
                 r"variable 'y': every batch_shape entry must be at least 1, got \(0,\)", id="empty-batch"),
    pytest.param(lambda: build(lambda m: Normal("y", 0.0, 1.0, batch_shape=(2.5,))), fg.ModelTypeError, TypeError,
                 r"variable 'y': batch_shape must be a tuple of whole numbers, got \(2\.5,\)", id="fractional-batch"),
    pytest.param(lambda: build(lambda m: Normal("y", 0.0, 1.0, batch_shape="3")), fg.ModelTypeError, TypeError,
                 r"variable 'y': batch_shape must be a tuple of whole numbers, got '3'", id="string-batch"),
    pytest.param(lambda: build(lambda m: Normal("y", mean=Normal("x", 0.0, 1.0, batch_shape=(3,)), var=1.0,
                                                observed=np.zeros(4))),
                 fg.ModelError, ValueError,
                 r"variable 'y': batch shapes do not broadcast \(mean \(variable 'x'\): \(3,\); var: \(\); data: \(4,\)\)",
                 id="plate-sizes"),
    pytest.param(lambda: build(lambda m: fg.Data("d", shape=(2, -1))), fg.ModelError, ValueError,
                 r"Data 'd': every batch_shape entry must be at least 1", id="placeholder-shape"),
    pytest.param(lambda: build(lambda m: fn.MvNormal("x", np.zeros(2), cov=np.eye(2), observed=np.zeros(3))),
                 fg.DataError, ValueError, r"data for 'x' has shape \(3,\), but the variable was declared with shape "
                 r"\(2,\)", id="vector-data-length"),
]

INFER_OPTIONS = [
    pytest.param(lambda: fg.infer(simple_model(), algorithm="BP"), fg.ModelError, ValueError,
                 r"unknown algorithm 'BP'; use 'bp' or 'vmp'", id="algorithm-case"),
    pytest.param(lambda: fg.infer(simple_model(), tol=-1.0), fg.ModelError, ValueError,
                 r"tol must be a positive, finite number .* got -1\.0", id="tol-negative"),
    pytest.param(lambda: fg.infer(simple_model(), tol=float("nan")), fg.ModelError, ValueError,
                 r"tol must be a positive, finite number .* got nan", id="tol-nan"),
    pytest.param(lambda: fg.infer(simple_model(), tol="1e-6"), fg.ModelTypeError, TypeError,
                 r"tol must be a positive number \(nats\), got '1e-6'", id="tol-string"),
    pytest.param(lambda: fg.infer(simple_model(), iterations=2.5), fg.ModelTypeError, TypeError,
                 r"iterations must be a whole number >= 1, got 2\.5", id="iterations-fraction"),
    pytest.param(lambda: fg.infer(simple_model(), iterations="3"), fg.ModelTypeError, TypeError,
                 r"iterations must be a whole number >= 1, got '3'", id="iterations-string"),
    pytest.param(lambda: fg.infer(simple_model(), iterations=True), fg.ModelTypeError, TypeError,
                 r"iterations must be a whole number >= 1, got True", id="iterations-bool"),
    pytest.param(lambda: fg.infer(simple_model(), iterations=-3), fg.ModelError, ValueError,
                 r"iterations must be at least 1, got -3", id="iterations-negative"),
    pytest.param(lambda: fg.infer(simple_model(), damping=-0.1), fg.ModelError, ValueError,
                 r"damping must lie in \[0, 1\), got -0\.1", id="damping-negative"),
    pytest.param(lambda: fg.infer(simple_model(), damping="0.5"), fg.ModelTypeError, TypeError,
                 r"damping must be a number in \[0, 1\), got '0\.5'", id="damping-string"),
    pytest.param(lambda: fg.infer(simple_model(), free_energy="yes"), fg.ModelTypeError, TypeError,
                 r"free_energy must be True, False, \"last\" or None, got 'yes'", id="free-energy-string"),
    pytest.param(lambda: vmp(tol=1e-6, free_energy="last"), fg.ModelError, ValueError,
                 r"tol= compares the free energy of consecutive sweeps", id="tol-with-final-free-energy"),
    pytest.param(lambda: fg.infer(simple_model(), callback=3), fg.ModelTypeError, TypeError,
                 r"callback must be a function callback\(iteration, result\), got 3", id="callback"),
    pytest.param(lambda: vmp(tol=1e-6, free_energy=False), fg.ModelError, ValueError,
                 r"tol= is a tolerance on the free energy: it needs free_energy=True", id="tol-without-free-energy"),
    pytest.param(lambda: fg.infer(simple_model(), init=[("mu", fg.NormalMeanVariance(0.0, 1.0))]), fg.ModelTypeError,
                 TypeError, r"init must be a dict of variable name -> distribution, got list", id="init-list"),
    pytest.param(lambda: vmp(init={"tau": fg.Gamma(1.0, 1.0), "sigma": fg.Gamma(1.0, 1.0)}), fg.ModelError,
                 ValueError, r"unknown variable 'sigma'; the model has: mu, tau, y", id="init-unknown-name"),
    pytest.param(lambda: fg.infer(simple_model(), constraints={"factorization": "mf"}), fg.ModelTypeError, TypeError,
                 r"constraints\['factorization'\] must be a dict keyed by node name, got 'mf'", id="constraints-not-dict"),
    pytest.param(lambda: fg.infer(simple_model(), constraints={"factorisation": {"y": "mf"}}), fg.ModelError,
                 ValueError, r"constraints: unknown key\(s\) \['factorisation'\]", id="constraints-spelling"),
    pytest.param(lambda: fg.infer(simple_model(), constraints={"factorization": {"y": [("out", "means")]}}),
                 fg.ModelError, ValueError, r"node 'y': factorization names unknown interface\(s\) \['means'\]",
                 id="constraints-interface"),
    pytest.param(lambda: fg.infer(simple_model(), constraints={"operator": {"y": "laplace"}}), fg.ModelError,
                 ValueError, r"node 'y' \(NormalMeanVariance\): unknown operator 'laplace'", id="operator-unknown"),
    pytest.param(lambda: fg.infer(simple_model(), constraints={"operator": {"likelihood": "laplace"}}), fg.ModelError,
                 ValueError, r"unknown node 'likelihood'; nodes are: mu, y", id="operator-unknown-node"),
    pytest.param(lambda: fg.infer(simple_model(), schedule=[("mu", "out"), ("z", "mean")]), fg.ModelError,
                 ValueError, r"schedule entry \('z', 'mean'\) is not a message of this model", id="schedule-node"),
    pytest.param(lambda: fg.infer(simple_model(), schedule=[("mu", "out"), ("y", "var")]), fg.ModelError,
                 ValueError, r"schedule entry \('y', 'var'\) is not a message of this model", id="schedule-interface"),
    pytest.param(lambda: vmp(constraints={"factorization": {"y": ("out", "mean")}}), fg.ModelTypeError, TypeError,
                 r"node 'y': a factorization is a list of clusters, each a tuple of interface names", id="cluster-str"),
    pytest.param(lambda: fg.infer(simple_model(), constraints={"form": {"y": "point_mass"}}), fg.ModelError,
                 ValueError, r"variable 'y' is observed: a form constraint applies to latent variables only",
                 id="form-on-observed"),
    pytest.param(lambda: fg.infer(simple_model(), init={"y": fg.NormalMeanVariance(0.0, 1.0)}), fg.ModelError,
                 ValueError, r"variable 'y' is observed: an initial distribution applies to latent variables only",
                 id="init-on-observed"),
    pytest.param(lambda: fg.compile(simple_model(), marginals="mu"), fg.ModelTypeError, TypeError,
                 r"marginals must be a list of variable names, got 'mu'", id="marginals-string"),
    pytest.param(lambda: fg.infer(simple_model(), data={"y": np.zeros(5), "x": 1.0}), fg.ModelError, ValueError,
                 r"unknown variable 'x'; the model has: mu, y", id="data-unknown-name"),
    pytest.param(lambda: fg.infer(fg.Model()), fg.ModelError, ValueError,
                 r"model 'model' has no factors", id="empty-model"),
    pytest.param(lambda: fg.infer(build(lambda m: Normal("x", 0.0, 1.0)).variables["x"]), fg.ModelTypeError,
                 TypeError, r"expected the Model of `with fg.Model\(\) as model:` \(the model, not one of its variables\)"
                 r", got Variable", id="variable-for-model"),
    pytest.param(lambda: fg.run(simple_model()), fg.ModelTypeError, TypeError,
                 r"fg.run expects a plan from fg.compile\(model\), got Model", id="run-a-model"),
]

RESULT_QUERIES = [
    pytest.param(lambda: fg.infer(simple_model()).marginal("sigma"), fg.ModelError, ValueError,
                 r"unknown variable 'sigma'; the model has: mu, y", id="marginal-unknown"),
    pytest.param(lambda: fg.infer(simple_model()).marginal("y"), fg.ModelError, ValueError,
                 r"'y' is observed; use result.predictive\('y'\)", id="marginal-observed"),
    pytest.param(lambda: fg.infer(simple_model()).predictive("mu"), fg.ModelError, ValueError,
                 r"'mu' is latent; use result.marginal\('mu'\)", id="predictive-latent"),
    pytest.param(lambda: vmp().log_evidence, fg.ModelError, ValueError,
                 r"log_evidence is exact only for sum-product .* use -result.free_energy\[-1\]", id="evidence-vmp"),
    pytest.param(lambda: vmp().evidence_per_variable(), fg.ModelError, ValueError,
                 r"evidence_per_variable reads the scales of sum-product messages, and this plan has none \(VMP\)",
                 id="evidence-per-variable-vmp"),
    pytest.param(lambda: fg.infer(simple_model()).messages("likelihood", "out"), fg.ModelError, ValueError,
                 r"unknown node 'likelihood'; nodes are: mu, y", id="messages-node"),
    pytest.param(lambda: fg.infer(simple_model()).messages("y", "precision"), fg.ModelError, ValueError,
                 r"node 'y' has no interface 'precision'; it has \('out', 'mean', 'var'\)", id="messages-interface"),
]


def two_dimensional_observation_towards_a_precision():
    with fg.Model() as model:
        precision = fn.Wishart("precision", df=4.0, scale=np.eye(2))
        fn.MvNormal("y", mean=np.zeros(2), precision=precision, observed=np.array([[1.0, 2.0]]))
    fg.infer(model)


RUN_TIME = [
    # one observation of a 2-d normal says too little about its precision for a Wishart message
    pytest.param(two_dimensional_observation_towards_a_precision, fg.RuleError, ValueError,
                 r"node 'y' \(MvNormalMeanPrecision\), interface 'precision' failed: .*not positive definite",
                 id="rule-fails"),
]


@pytest.mark.parametrize(
    "mistake, error, python_base, message",
    OBSERVED_OUTSIDE_THE_SUPPORT + PARAMETERS_OUTSIDE_THEIR_DOMAIN + WRONG_KINDS_OF_DATA_AND_PARAMETERS + SHAPES
    + INFER_OPTIONS + RESULT_QUERIES + RUN_TIME,
)
def test_a_mistake_is_a_named_error(mistake, error, python_base, message):
    with pytest.raises(error, match=message) as raised:
        mistake()
    assert isinstance(raised.value, fg.FgraphError) and isinstance(raised.value, python_base)


def test_the_table_covers_sixty_mistakes():
    cases = (OBSERVED_OUTSIDE_THE_SUPPORT + PARAMETERS_OUTSIDE_THEIR_DOMAIN + WRONG_KINDS_OF_DATA_AND_PARAMETERS
             + SHAPES + INFER_OPTIONS + RESULT_QUERIES + RUN_TIME)
    assert len(cases) >= 60 and len({case.id for case in cases}) == len(cases)


@pytest.mark.parametrize("statements", [
    lambda: fn.Beta("b", 2.0, 2.0, observed=np.array([1e-9, 0.5, 1.0 - 1e-9])),
    lambda: fn.Bernoulli("c", np.array([0.0, 1.0]), observed=np.array([False, True])),
    lambda: fn.Categorical("z", np.array([1.0, 0.0]), observed=np.array([[1.0, 0.0]])),
    lambda: fn.Dirichlet("d", np.ones(3), observed=np.array([0.2, 0.3, 0.5])),
    lambda: fn.Wishart("w", 3.0, np.eye(2), observed=np.array([[2.0, 0.5], [0.5, 1.0]])),
    lambda: fn.MatrixDirichlet("a", np.ones((2, 2)), observed=np.array([[0.5, 0.1], [0.5, 0.9]])),
    lambda: Normal("y", 0.0, 1.0, batch_shape=4),  # a single number is a one-axis plate, as in numpy
])
def test_values_inside_the_support_are_accepted(statements):
    with fg.Model() as model:
        statements()
    assert len(model.nodes) == 1


def test_a_rejected_statement_leaves_the_model_as_it_was():
    """A failed constructor adds nothing, so the corrected statement can be run in the same model."""
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=1.0)
        with pytest.raises(fg.DataError):
            Normal("y", mean=mu, var=1.0, observed=np.array([0.0, np.nan]))
        with pytest.raises(fg.ModelError):
            Normal("y", mean=mu, var=-1.0, observed=np.zeros(2))
        with pytest.raises(fg.DataError):
            fg.Data("m", np.nan)
        Normal("y", mean=mu, var=1.0, observed=np.zeros(2))
    assert sorted(model.variables) == ["mu", "y"] and [n.name for n in model.nodes] == ["mu", "y"]
    result = fg.infer(model)
    assert result.marginal("mu").var == pytest.approx(1.0 / 3.0, rel=1e-12)  # prior precision 1 + two observations


def test_a_string_naming_an_absent_variable_gets_no_hint():
    with fg.Model():
        with pytest.raises(fg.ModelTypeError) as raised:
            Normal("y", mean="mu", var=1.0)
    assert "got the string 'mu'" in str(raised.value) and "to connect" not in str(raised.value)


def test_every_declared_support_names_an_interface_of_its_node():
    """A misspelt interface in a support declaration would silently check nothing."""
    from fgraph.node import FactorNode
    from fgraph.support import Support

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    declared = [cls for cls in subclasses(FactorNode) if cls.__module__.startswith("fgraph.nodes.") and cls.support]
    assert len(declared) >= 12
    for cls in declared:
        names = set(cls.interfaces) | ({cls.variadic[1]} if cls.variadic else set())
        assert set(cls.support) <= names, cls
        assert all(isinstance(support, Support) for support in cls.support.values()), cls
        for interface, support in cls.support.items():  # elementwise supports (rank 0) fit any interface
            assert support.event_ndim in (0, cls.event_ndims.get(interface, 0)), (cls, interface)


def test_a_rejected_binding_changes_no_data():
    with fg.Model() as model:
        x = Normal("x", mean=fg.Data("m", 0.0), var=1.0)
        Normal("y", mean=x, var=1.0, observed=np.zeros(2))
    with pytest.raises(fg.DataError, match="data for 'y'"):
        fg.infer(model, data={"m": 5.0, "y": np.array([0.0, np.nan])})
    assert model.data["m"] == 0.0
    assert fg.infer(model).marginal("x").mean == 0.0  # prior mean 0 and two observations at 0
