"""The CMN benchmark on a small size: ours and the numpy CAVI agree, and the agreement can fail."""
import numpy as np

from benchmarks import cmn


def test_the_engine_and_the_numpy_cavi_agree_on_a_small_fit():
    report = cmn.run_ratio(quick=True, iterations=3, train_size=40, restarts=2, repeats=1)
    assert report["agree"] and report["elbo_max_relative_difference"] < 1e-9
    assert report["elbo_never_decreases"] and np.isfinite(report["ratio"]) and report["ratio"] > 0


def test_a_peer_that_skips_a_step_disagrees(monkeypatch):
    from fgraph.testing.cmn_reference import CMNReference

    def without_the_gate(reference, state):  # q(β0) never updated
        c1 = reference.optimal_c1(state)
        state = reference.update_x1(state, c1)
        state = reference.update_gamma(state, c1, reference.optimal_c0(state))
        state = reference.update_out(state, reference.optimal_c1(state))
        return reference.update_experts(state)

    monkeypatch.setattr(CMNReference, "iterate_joint_e_step", without_the_gate)
    assert not cmn.run_ratio(quick=True, iterations=3, train_size=40, restarts=2, repeats=1)["agree"]


def test_the_timed_fit_with_the_last_elbo_only_is_the_same_fit():
    every, last = cmn.fit_32x200(True, 1, 1, "every"), cmn.fit_32x200(True, 1, 1, "last")
    assert last["elbo"] == "last" and every["elbo"] == "every"
    assert last["final_elbo_mean"] == every["final_elbo_mean"]
    for key in ("accuracy_mean", "lpd_mean", "ece_mean"):
        assert last[key] == every[key]
