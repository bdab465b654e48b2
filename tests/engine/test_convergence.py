"""When a run counts as converged, the ConvergenceWarning of one that did not, and interrupted runs.

The rules (fgraph/inference.py): BP on a tree is exact and never judged; a
run with ``tol=`` stops when the free energy changes by less than ``tol`` and
warns if it never does; a run with neither ``tol=`` nor ``iterations=`` does
its default sweeps and is judged against the default tolerance; a run with
``iterations=`` alone is a fixed budget and is not judged.
"""
import warnings

import numpy as np
import pytest

import fgraph as fg
import fgraph.codegen as codegen
import fgraph.free_energy as free_energy_module
from fgraph.run_state import RunState
from fgraph.inference import DEFAULT_ITERATIONS, DEFAULT_TOLERANCE
from fgraph.nodes import Gamma, Normal
from tests.graphs import loopy_gaussian_model

Y = np.array([0.3, -1.2, 0.8, 2.1, 0.4])
LOOPY_INIT = {"x": fg.NormalMeanVariance(0.0, 1.0), "z": fg.NormalMeanVariance(0.0, 1.0)}


def normal_gamma(y=Y):
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=10.0)
        tau = Gamma("tau", shape=2.0, rate=1.0)
        Normal("y", mean=mu, precision=tau, observed=y)
    return model


def chain(y=Y):
    with fg.Model() as model:
        previous = Normal("x0", mean=0.0, var=1.0)
        for t, value in enumerate(y):
            previous = Normal(f"x{t + 1}", mean=previous, var=0.3)
            Normal(f"y{t}", mean=previous, var=0.5, observed=value)
    return model


def run_without_warnings(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the test
        return fg.infer(*args, **kwargs)


# ------------------------------------------------------------------------------------------ warnings
def test_loopy_bp_that_runs_out_of_iterations_warns_naming_iterations_and_last_change():
    with pytest.warns(fg.ConvergenceWarning) as caught:
        result = fg.infer(loopy_gaussian_model(), init=LOOPY_INIT, damping=0.9, iterations=20, tol=1e-10)
    assert len(caught) == 1 and caught[0].filename == __file__  # attributed to the caller's line
    change = abs(result.free_energy[-1] - result.free_energy[-2])
    assert change > 1e-10 and result.last_change == change and result.tolerance == 1e-10
    message = str(caught[0].message)
    assert message.startswith("did not converge after 20 iterations")
    assert f"changed by {change:.3g} nats" in message
    assert "stopped at the cap iterations=20 without reaching tol=1e-10" in message and "iterations=N" in message
    assert result.converged is False and result.iterations == 20 and len(result.free_energy) == 20
    assert result.warnings == [message]
    assert "warning: did not converge after 20 iterations" in result.summary()


def test_a_default_run_that_is_still_moving_warns():
    """Neither tol= nor iterations=: all default sweeps, then judged against the default tolerance."""
    with pytest.warns(fg.ConvergenceWarning, match=rf"did not converge after {DEFAULT_ITERATIONS} iterations"):
        result = fg.infer(loopy_gaussian_model(), init=LOOPY_INIT, damping=0.95)
    assert result.iterations == DEFAULT_ITERATIONS and result.converged is False
    assert result.tolerance == pytest.approx(DEFAULT_TOLERANCE * abs(result.free_energy[-1]))
    assert result.last_change > result.tolerance


def test_a_default_run_that_settled_is_converged_and_silent():
    result = run_without_warnings(loopy_gaussian_model(), init=LOOPY_INIT)
    assert result.converged is True and result.iterations == DEFAULT_ITERATIONS  # judged, but not stopped early
    assert result.last_change <= DEFAULT_TOLERANCE * max(1.0, abs(result.free_energy[-1]))
    assert "converged after 50 iterations" in result.summary()
    # loopy Gaussian BP: exact means, variances of its own (here 0.51 against the exact 0.625); it converged
    precision = np.array([[2.5, -1.5], [-1.5, 2.5]])
    assert result.marginal("x").mean == pytest.approx(np.linalg.solve(precision, [0.0, 1.7])[0], rel=1e-8)


def test_tree_bp_is_exact_after_one_sweep_and_never_warns():
    for options in ({}, {"tol": 1e-12}, {"iterations": 3}, {"iterations": 1, "tol": 1e-3, "free_energy": True}):
        result = run_without_warnings(chain(), **options)
        assert result.plan.exact and result.converged is True and result.warnings == []
    assert "exact (sum-product on a tree) after 1 iteration" in run_without_warnings(chain()).summary()


def test_vmp_with_a_tolerance_stops_at_the_first_sweep_that_meets_it():
    result = run_without_warnings(normal_gamma(), algorithm="vmp", init={"tau": fg.Gamma(2.0, 1.0)},
                                  iterations=200, tol=1e-9)
    changes = np.abs(np.diff(result.free_energy))
    assert result.converged is True and result.iterations < 200
    assert changes[-1] < 1e-9 and np.all(changes[:-1] >= 1e-9)
    assert result.last_change == changes[-1]


def test_vmp_with_a_fixed_budget_and_no_tolerance_is_not_judged():
    result = run_without_warnings(normal_gamma(), algorithm="vmp", init={"tau": fg.Gamma(2.0, 1.0)}, iterations=2)
    assert result.converged is None and result.tolerance is None and result.iterations == 2
    assert "convergence not checked (pass tol= to check it)" in result.summary()


def test_a_tolerance_cannot_be_met_in_one_iteration():
    with pytest.warns(fg.ConvergenceWarning, match="1 iteration cannot show a change .* run at least 2 iterations"):
        result = fg.infer(normal_gamma(), algorithm="vmp", init={"tau": fg.Gamma(2.0, 1.0)}, iterations=1, tol=1e-6)
    assert result.converged is False and result.last_change is None


def test_the_warning_can_be_turned_into_an_error():
    with warnings.catch_warnings():
        warnings.simplefilter("error", fg.ConvergenceWarning)
        with pytest.raises(fg.ConvergenceWarning):
            fg.infer(loopy_gaussian_model(), init=LOOPY_INIT, damping=0.9, iterations=5, tol=1e-12)
    assert issubclass(fg.ConvergenceWarning, UserWarning) and not issubclass(fg.ConvergenceWarning, fg.FgraphError)


# ------------------------------------------------------------------------------------------ interrupts
def _interrupting(monkeypatch, method: str, on_call: int):
    """Make ``RunState.<method>`` (or ``fgraph.free_energy.free_energy`` for "free_energy") raise
    KeyboardInterrupt on its ``on_call``-th call (1-based)."""
    if codegen.MODE == "compared":  # (which sets every message twice per sweep: once generated, once interpreted)
        monkeypatch.setattr(codegen, "MODE", "generated")
    owner = free_energy_module if method == "free_energy" else RunState
    original = getattr(owner, method)
    calls = {"count": 0}

    def wrapper(*args, **kwargs):
        calls["count"] += 1
        if calls["count"] == on_call:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, method, wrapper)


def _vmp(**options):
    # on objects (a callback keeps a run there): the interruptions are counted in the objects' calls
    return fg.infer(normal_gamma(), algorithm="vmp", init={"tau": fg.Gamma(2.0, 1.0)},
                    callback=lambda iteration, result: None, **options)


def _assert_same_state(interrupted, reference):
    assert interrupted.iterations == reference.iterations == len(interrupted.free_energy)
    assert interrupted.free_energy == reference.free_energy  # the same sweeps, bit for bit
    for name in ("mu", "tau"):
        a, b = interrupted.marginal(name), reference.marginal(name)
        assert a.mean == b.mean and a.var == b.var


@pytest.mark.parametrize("method, on_call, sweeps", [
    ("set_outbound", 4 * 3 + 3, 3),  # in the fourth sweep, after it set the message to mu (4 messages per sweep)
    ("free_energy", 4, 3),  # after the fourth sweep, while its free energy is computed
    ("set_outbound", 1, 0),  # before the first message is set
])
def test_an_interrupted_run_is_the_run_of_its_complete_sweeps(monkeypatch, method, on_call, sweeps):
    assert len(fg.compile(normal_gamma(), algorithm="vmp", init={"tau": fg.Gamma(2.0, 1.0)}).schedule) == 4
    reference = _vmp(iterations=sweeps) if sweeps else None
    _interrupting(monkeypatch, method, on_call)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an interrupted run is not warned about
        result = _vmp(iterations=20, tol=1e-12)
    assert result.interrupted and result.converged is False and result.warnings == []
    assert "interrupted by the user" in result.summary()
    if reference is None:
        assert result.iterations == 0 and result.free_energy == []
    else:
        _assert_same_state(result, reference)
