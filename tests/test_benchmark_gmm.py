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
