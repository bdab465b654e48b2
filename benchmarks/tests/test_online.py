"""benchmarks/online.py at a tiny size: it runs, agrees, and a wrong stream or a wrong peer exits non-zero."""
import json

import numpy as np

from benchmarks import online


def test_the_online_benchmark_agrees_at_a_tiny_size_and_fails_when_a_side_is_wrong(monkeypatch, capsys):
    assert online.main(["--quick", "--size", "300", "--repeats", "1"]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["benchmark"] == "online" and line["agree"] is True and line["params"]["train"] == 300
    assert line["ratio"] == line["ours_s"] / line["peer_s"]
    assert line["nll_gap_relative"] == (line["nll_ours"] - line["nll_peer"]) / line["nll_peer"]
    assert 0 < line["update_us"] < line["partial_fit_us"]
    honest_stream = online.stream
    monkeypatch.setattr(online, "stream", lambda *a: (lambda m, c, t: (m * (1 + 1e-6), c, t))(*honest_stream(*a)))
    assert online.main(["--quick", "--size", "300", "--repeats", "1"]) == 1
    monkeypatch.setattr(online, "stream", honest_stream)
    honest_peer = online.pg_vb

    def shifted(rows, labels, xi=None, tol=online.TOLERANCE, max_iter=10000):
        mean, cov, xi, iterations = honest_peer(rows, labels, xi, tol, max_iter)
        return mean + 1e-6 * np.abs(mean).max(), cov, xi, iterations

    monkeypatch.setattr(online, "pg_vb", shifted)
    assert online.main(["--quick", "--size", "300", "--repeats", "1"]) == 1
