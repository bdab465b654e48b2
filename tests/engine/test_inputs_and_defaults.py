"""Inputs that cannot mislead: every missing initial value named in one error with its family, shape and a
ready-to-paste ``init=``; a distribution where a factor belongs (and the reverse) named as such; the iteration
cap that stopped a run named in its warning, with the option that raises it."""
import re
import warnings

import numpy as np
import pytest

import fgraph as fg
from fgraph import nodes
from fgraph.inference import DEFAULT_ITERATIONS
from fgraph.nodes import Add, Gamma, MvNormal, Normal, Wishart


def hierarchical():
    """theta_i ~ N(mu, 1/tau), y_i ~ N(theta_i, 1): VMP needs q(theta) and q(tau) before computing them."""
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=10.0)
        tau = Gamma("tau", shape=1.0, rate=1.0)
        theta = Normal("theta", mean=mu, precision=tau, batch_shape=(3,))
        Normal("y", mean=theta, var=1.0, observed=np.array([0.5, -1.0, 2.0]))
    return model


def pasted_init(message: str) -> dict:
    """The ``init={...}`` of an error message, evaluated as a user would paste it."""
    found = re.search(r"init=(\{.*?\})(?:,| to)", message)
    assert found is not None, message
    return eval(found.group(1), {"fg": fg, "np": np})


def test_every_missing_initial_value_is_named_at_once_with_family_shape_and_an_example():
    model = hierarchical()
    with pytest.raises(fg.ScheduleError) as caught:
        fg.infer(model, algorithm="vmp")
    message = str(caught.value)
    assert "initial values for 2 variables" in message
    assert "'theta' (Normal, plate (3,), event ())" in message and "'tau' (Gamma, plate (), event ())" in message
    init = pasted_init(message)
    assert set(init) == {"theta", "tau"}
    result = fg.infer(model, algorithm="vmp", init=init)  # the example runs as pasted
    assert result.converged


def test_one_missing_initial_value_keeps_the_one_line_form():
    with pytest.raises(fg.ScheduleError, match=r"variable 'tau' \(Gamma, plate \(\), event \(\)\).*"
                                               r"init=\{'tau': fg\.Gamma\(1\.0, 1\.0\)\}"):
        fg.infer(hierarchical(), algorithm="vmp", init={"theta": fg.NormalMeanVariance(0.0, 1.0)})


def test_vector_and_matrix_families_are_named_with_their_dimension():
    with fg.Model() as model:
        mu = MvNormal("mu", mean=np.zeros(3), cov=np.eye(3))
        W = Wishart("W", df=4.0, scale=np.eye(3))
        MvNormal("y", mean=mu, precision=W, observed=np.ones((5, 3)))
    with pytest.raises(fg.ScheduleError, match=r"Wishart\(3×3\), plate \(\), event \(3, 3\)") as caught:
        fg.infer(model, algorithm="vmp")
    fg.infer(model, algorithm="vmp", init=pasted_init(str(caught.value)), iterations=3)


@pytest.mark.parametrize("init, match", [
    ({"tau": fg.NormalMeanVariance(0.0, 1.0)}, r"init\['tau'\] is a UnivariateNormal.*family Gamma.*e\.g\. fg\.Gamma"),
    ({"tau": fg.Gamma(np.ones(4), 1.0)}, r"init\['tau'\] has batch shape \(4,\); expected \(\).*plate of 'tau'"),
    ({"tua": fg.Gamma(1.0, 1.0)}, r"unknown variable 'tua'"),
    ({"tau": nodes.Gamma}, r"init\['tau'\].*fgraph\.nodes\.Gamma, a factor.*distribution.*fg\.Gamma\(\.\.\.\)"),
    ({"tau": nodes.GammaNode}, r"init\['tau'\].*fgraph\.nodes\.GammaNode, a factor"),
    ({"tau": fg.Gamma}, r"init\['tau'\].*the class fg\.Gamma itself; pass an instance"),
])
def test_a_wrong_initial_value_is_named_with_its_fix(init, match):
    model = hierarchical()
    init = dict({"theta": fg.NormalMeanVariance(0.0, 1.0), "tau": fg.Gamma(1.0, 1.0)}, **init)
    with pytest.raises(fg.ModelError, match=match):
        fg.infer(model, algorithm="vmp", init=init)


def test_a_variable_as_initial_value_is_named():
    model = hierarchical()
    with pytest.raises(fg.ModelError, match=r"init\['tau'\].*the variable 'tau' of the model.*not a variable"):
        fg.infer(model, algorithm="vmp", init={"theta": fg.NormalMeanVariance(0.0, 1.0), "tau": model["tau"]})


def test_a_distribution_used_as_a_factor_names_the_factor_constructor():
    with fg.Model():
        with pytest.raises(fg.ModelTypeError, match=r"fg\.Gamma is a distribution.*fgraph\.nodes\.Gamma\('tau', \.\.\.\)"):
            fg.Gamma("tau", shape=2, rate=1)
        with pytest.raises(fg.ModelTypeError, match=r"fgraph\.nodes\.Normal\('m', \.\.\.\)"):
            fg.NormalMeanVariance("m", 1.0)
        with pytest.raises(fg.ModelTypeError, match=r"not a factor.*fgraph\.nodes\.Normal"):
            Normal("y", mean=fg.NormalMeanVariance(0.0, 1.0), var=1.0, observed=np.zeros(3))


# ------------------------------------------------------------------------- iteration caps in warnings
def loopy():
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=1.0)
        a = Normal("a", mean=mu, var=1.0)
        b = Normal("b", mean=mu, var=1.0)
        Normal("y", mean=Add("s", a, b), var=0.5, observed=np.array(1.0))
    return model


LOOPY_INIT = {name: fg.NormalMeanVariance(0.0, 1.0) for name in ("mu", "a", "b")}


def test_tol_without_iterations_names_the_default_cap_and_the_option():
    with pytest.warns(fg.ConvergenceWarning) as caught:
        result = fg.infer(loopy(), init=LOOPY_INIT, damping=0.95, tol=1e-12)
    message = str(caught[0].message)
    assert result.iterations == DEFAULT_ITERATIONS and result.converged is False
    assert (f"stopped at the default cap of {DEFAULT_ITERATIONS} iterations without reaching tol=1e-12"
            in message), message
    assert "pass iterations=N" in message


def test_a_given_cap_is_named_as_the_option():
    with pytest.warns(fg.ConvergenceWarning, match=r"stopped at the cap iterations=7 without reaching tol=1e-12"):
        fg.infer(loopy(), init=LOOPY_INIT, damping=0.95, tol=1e-12, iterations=7)


def test_the_default_tolerance_and_cap_are_named_as_defaults():
    with pytest.warns(fg.ConvergenceWarning,
                      match=rf"default cap of {DEFAULT_ITERATIONS} iterations without reaching the default tolerance"):
        fg.infer(loopy(), init=LOOPY_INIT, damping=0.95)


def test_a_run_that_meets_tol_before_the_default_cap_is_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = fg.infer(hierarchical(), algorithm="vmp", tol=1e-9,
                          init={"theta": fg.NormalMeanVariance(0.0, 1.0), "tau": fg.Gamma(1.0, 1.0)})
    assert result.converged and result.iterations < DEFAULT_ITERATIONS
