"""The chain benchmarks' quick paths at a tiny size: ours and the peers agree, and a disagreement exits non-zero.

Benchmarks are not timed here; this checks that each one still runs, that its
last line is the JSON report with ``ratio`` and ``agree``, and that its
agreement check can fail.
"""
import json

import numpy as np
import pytest

from benchmarks import gauss_markov_chain, markov_chain

BENCHMARKS = [pytest.param(markov_chain, "probabilities", id="markov_chain"),
              pytest.param(gauss_markov_chain, "mean", id="gauss_markov_chain")]


@pytest.mark.parametrize("benchmark, _", BENCHMARKS)
def test_the_quick_path_agrees_at_a_tiny_size(benchmark, _):
    report = benchmark.run(quick=True, steps=120, repeats=1)
    assert report["agree"] is True
    assert report["params"]["T"] == 120
    for key in ("ours_s", "peer_s", "ratio", "ours_run_s", "ratio_run_only", "numpy_loop_s"):
        assert report[key] > 0.0, key
    json.dumps(report)


@pytest.mark.parametrize("benchmark, field", BENCHMARKS)
def test_a_disagreeing_peer_makes_the_run_fail(benchmark, field, monkeypatch, capsys):
    honest = benchmark.peer

    def perturbed(y):
        result = honest(y)
        result[field] = result[field] + 1e-6 * np.ones_like(result[field])
        return result

    full_run = benchmark.run
    monkeypatch.setattr(benchmark, "peer", perturbed)
    monkeypatch.setattr(benchmark, "run", lambda quick, steps: full_run(quick, 60, 1))  # a tiny size
    with pytest.raises(SystemExit) as stopped:
        benchmark.main(["--quick"])
    assert stopped.value.code == 1
    last_line = capsys.readouterr().out.strip().splitlines()[-1]
    assert json.loads(last_line)["agree"] is False


def test_the_state_space_benchmark_agrees_at_a_tiny_size_and_fails_on_a_wrong_peer(monkeypatch, capsys):
    from benchmarks import ssm
    report = ssm.run(quick=True, steps=[80], repeats=1)
    assert report["agree"] is True and report["params"]["T"] == [80]
    assert report["ratio"] > 0.0 and report["peer_s"] > 0.0
    assert report["per_T"][0]["unrolled_s"] > 0.0 and set(report["per_T"][0]["quality"]) == {"ours", "ours_run",
                                                                                              "unrolled"}
    honest = ssm.peer
    monkeypatch.setattr(ssm, "peer", lambda y: {**honest(y), "cov": honest(y)["cov"] + 1e-6})
    with pytest.raises(SystemExit) as stopped:
        ssm.main(["--quick", "--steps", "60"])
    assert stopped.value.code == 1
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["agree"] is False


def test_the_unrolled_state_space_graph_is_checked_like_ours(monkeypatch):
    from benchmarks import ssm
    honest = ssm.unrolled
    monkeypatch.setattr(ssm, "unrolled", lambda y: {**honest(y), "mean": honest(y)["mean"] + 1e-6})
    assert ssm.run(quick=True, steps=[40], repeats=1)["agree"] is False


def test_the_vad_benchmark_quick_path_agrees_and_fails_on_a_wrong_peer(monkeypatch, capsys):
    from benchmarks import vad
    clean, noisy, rate = vad.audio(True)
    monkeypatch.setattr(vad, "audio", lambda quick: (clean[:4000], noisy[:4000], rate))  # a quarter second
    assert vad.main(["--quick"]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["benchmark"] == "vad" and line["agree"] is True
    assert line["ratio"] == pytest.approx(line["ours_s"] / line["seconds_of_audio"])
    assert line["samples"] == 4000 and line["online_real_time_factor"] > 0
    honest = vad.numpy_vmp
    monkeypatch.setattr(vad, "numpy_vmp", lambda y, p, sweeps: np.clip(honest(y, p, sweeps) + 1e-5, 0, 1))
    assert vad.main(["--quick"]) == 1
