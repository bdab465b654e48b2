"""benchmarks/kalman_peers.py: our smoother against the numpy Kalman + RTS loop of ssm.py (no peer needed), and,
where dynamax is installed, the quick path at a small size agreeing with dynamax (and pykalman) and failing when
a peer is off. No wall-clock asserts."""
import json

import numpy as np
import pytest

import fgraph as fg
from benchmarks import kalman_peers, ssm


def test_our_smoother_matches_the_numpy_kalman_smoother_at_the_benchmark_tolerance():
    y = ssm.simulate(300)
    ours, reference = kalman_peers.ours(y), ssm.peer(y)  # ssm.peer: filter + RTS loop, log p(y) by prediction errors
    assert ours["mean"].shape == (300, 2) and ours["cov"].shape == (300, 2, 2)
    assert kalman_peers.agrees(kalman_peers.differences(ours, reference))
    on_a_plan = kalman_peers.ours_run(fg.compile(ssm.build_model(y)))
    assert kalman_peers.agrees(kalman_peers.differences(on_a_plan, reference))


@pytest.mark.parametrize("field, shift", [("mean", 2e-8), ("cov", 2e-8), ("log_evidence", 1e-7)])
def test_the_agreement_check_rejects_a_result_just_outside_the_tolerance(field, shift):
    y = ssm.simulate(100)
    reference = ssm.peer(y)
    moved = dict(reference)
    if field == "log_evidence":
        moved[field] = reference[field] * (1.0 + shift)
    else:
        moved[field] = reference[field].copy()
        moved[field][37] += shift
    assert kalman_peers.agrees(kalman_peers.differences(reference, reference))
    assert not kalman_peers.agrees(kalman_peers.differences(moved, reference))


def test_the_quick_path_agrees_with_the_peers_and_fails_when_one_is_off(monkeypatch, capsys):
    pytest.importorskip("dynamax")
    kalman_peers.main(["--quick", "--steps", "300", "--repeats", "1"])
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["benchmark"] == "kalman_peers" and line["agree"] is True and line["T"] == 300
    assert line["ratio"] > 0.0 and line["dynamax_s"] > 0.0 and line["dynamax_parallel_s"] > 0.0
    assert line["dynamax_compile_s"] > 0.0 and line["dynamax_parallel_compile_s"] > 0.0
    times = {name: line[f"{name}_s"] for name in ("dynamax", "dynamax_parallel", "pykalman")
             if line[f"{name}_s"] is not None}
    assert line["peer"] == min(times, key=times.get) and line["peer_s"] == times[line["peer"]]
    compared = {"ours_vs_dynamax", "ours_vs_dynamax_parallel", "ours_run_vs_ours"}
    if kalman_peers.pykalman_available() is None:
        assert line["pykalman"] == "used" and line["pykalman_s"] > 0.0
        compared.add("ours_vs_pykalman")
    assert set(line["per_T"][0]["quality"]) == compared
    honest = kalman_peers.dynamax_peer

    def one_step_off(y, smoother):
        found = honest(y, smoother)
        found["mean"] = found["mean"].copy()
        found["mean"][20] += 1e-6
        return found

    monkeypatch.setattr(kalman_peers, "dynamax_peer", one_step_off)
    with pytest.raises(SystemExit) as stopped:
        kalman_peers.main(["--quick", "--steps", "300", "--repeats", "1"])
    assert stopped.value.code == 1
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["agree"] is False


def test_a_pykalman_that_disagrees_fails_the_run(monkeypatch, capsys):
    pytest.importorskip("dynamax")
    pytest.importorskip("pykalman")
    honest = kalman_peers.pykalman_peer
    monkeypatch.setattr(kalman_peers, "pykalman_peer",
                        lambda y: {**honest(y), "cov": honest(y)["cov"] + 1e-6 * np.eye(2)})
    with pytest.raises(SystemExit) as stopped:
        kalman_peers.main(["--quick", "--steps", "300", "--repeats", "1"])
    assert stopped.value.code == 1
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["agree"] is False
