"""Bad input is rejected before computing, with a message that names the culprit."""
import numpy as np
import pytest

import fgraph as fg
from fgraph.families import NormalMeanVariance as NormalMessage, UnivariateNormal
from fgraph.node import FactorNode
from fgraph.registry import rule
from nodes import Gamma, Normal


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


def test_rebinding_data_of_another_shape_is_rejected():
    model = simple_model()
    with pytest.raises(fg.DataError, match=r"data for 'y' has shape \(7,\).*declared with shape \(5,\)"):
        fg.infer(model, data={"y": np.zeros(7)})


def test_non_numeric_data_is_rejected():
    model = simple_model()
    with pytest.raises(fg.DataError, match="'y' must be numeric"):
        model.bind(y=["a", "b", "c", "d", "e"])


@pytest.mark.parametrize("keyword, value, word", [("var", -1.0, "variance"), ("var", 0.0, "variance"), ("precision", 0.0, "precision")])
def test_non_positive_scale_parameters_are_rejected(keyword, value, word):
    with fg.Model():
        with pytest.raises(fg.ModelError, match=rf"node 'x', parameter '{keyword}'.*{word} must be strictly positive"):
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
    from nodes import InverseGamma

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
        with pytest.raises(fg.ModelError, match=r"variable 'v': messages of different families \(Gamma, InverseGamma\)"):
            fg.compile(model, algorithm=algorithm)


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
    with pytest.raises(fg.NumericalError, match=r"node 'z' \(Broken\), interface 'out'"):
        fg.infer(model)


def test_deterministic_node_under_vmp_gets_a_hint():
    from nodes import Add

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
    from nodes import Dot, MvNormal

    with fg.Model():
        w = MvNormal("w", mean=np.zeros(3), cov=np.eye(3))
        with pytest.raises(fg.ModelError, match=r"Dot 'f': x has shape \(4, 2\), but w has dimension 3"):
            Dot("f", np.ones((4, 2)), w)
        with pytest.raises(fg.ModelError, match=r"node 'g', parameter 'x'.*NaN or infinite"):
            Dot("g", np.array([[1.0, np.nan, 0.0]]), w)
        scalar = Normal("s", mean=0.0, var=1.0)
        with pytest.raises(fg.ModelError, match=r"Dot 'h': w must be a vector variable"):
            Dot("h", np.ones(3), scalar)
