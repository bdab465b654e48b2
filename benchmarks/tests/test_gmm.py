"""benchmarks/gmm.py at a tiny size: ours, scikit-learn and BayesPy run, agree, and a disagreement exits non-zero."""
import json

import numpy as np

from benchmarks import gmm


def test_the_gmm_benchmark_agrees_at_a_tiny_size_and_fails_on_a_wrong_peer(monkeypatch, capsys):
    assert gmm.main(["--quick", "--size", "300", "--repeats", "1"]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["benchmark"] == "gmm" and line["agree"] is True and line["params"]["N"] == 300
    assert line["ratio"] == line["ours_s"] / line["peer_s"] and line["peer"] in ("sklearn", "bayespy")
    monkeypatch.setattr(gmm, "bayespy_fit", lambda X, start: 0.0)  # timed only: not needed to fail
    honest = gmm.sklearn_fit
    monkeypatch.setattr(gmm, "sklearn_fit", lambda X: {**honest(X), "lower_bound": honest(X)["lower_bound"] + 1e-3})
    assert gmm.main(["--quick", "--size", "300", "--repeats", "1"]) == 1
    shifted = lambda X: {**honest(X), "responsibilities": np.roll(honest(X)["responsibilities"], 1, axis=1)}
    monkeypatch.setattr(gmm, "sklearn_fit", shifted)
    assert gmm.main(["--quick", "--size", "300", "--repeats", "1"]) == 1


def test_the_tvb_table_timing_agrees_at_a_tiny_size_and_fails_when_cells_differ(monkeypatch, capsys):
    """--tvb: the table built batched and one fit at a time, on 1 and 2 workers; their cells must agree."""
    monkeypatch.setitem(gmm.TABLE_PARAMETERS, "quick", {"N": 120, "grid": 3, "B": 3})
    assert gmm.main(["--tvb", "--quick", "--single-fraction", "0.5"]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["benchmark"] == "gmm_tvb_table" and line["agree"] is True
    assert line["params"]["cells"] == 3 * (3 + 2)
    assert line["params"]["one_at_a_time_on"] == "2 of 3 ω values, times scaled by 1.5"  # the first and the last
    assert line["ratio"] == line["batched_1_worker_s"] / line["one_at_a_time_1_worker_s"]
    assert line["max_difference_1_vs_2_workers"] == 0.0 and line["max_rel_difference_batched_vs_single"] <= 1e-8
    from fgraph.models.tvb import gmm as tvb

    honest = tvb._fit_block

    def perturbed(X, indices, omegas, *rest):  # one cell at a time gets a slightly different answer
        result = honest(X, indices, omegas, *rest)
        if len(indices) == 1:
            result["alpha"] = result["alpha"] * (1 + 1e-6)
        return result

    monkeypatch.setattr(tvb, "_fit_block", perturbed)
    assert gmm.main(["--tvb", "--quick"]) == 1
