"""benchmarks/linear_regression.py at a small size: ours (both ways) and BayesianRidge agree; a wrong peer fails."""
import json

from benchmarks import linear_regression


def test_the_regression_benchmark_agrees_and_fails_on_a_wrong_peer(monkeypatch, capsys):
    assert linear_regression.main(["--size", "300", "--dim", "4", "--repeats", "1"]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["benchmark"] == "linear_regression" and line["agree"] is True and line["params"]["N"] == 300
    assert line["ratio"] == line["ours_s"] / line["peer_s"]
    assert max(line["relative_difference"].values()) <= linear_regression.AGREEMENT
    honest = linear_regression.peer
    monkeypatch.setattr(linear_regression, "peer", lambda X, y: {**honest(X, y), "cov": honest(X, y)["cov"] * 1.001})
    assert linear_regression.main(["--size", "300", "--dim", "4", "--repeats", "1"]) == 1
