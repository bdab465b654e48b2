"""benchmarks/gp.py at a small size: the JSON line, and a peer made better than it is turns ``agree`` off."""
import json

import numpy as np

from benchmarks import gp

SMALL = ["--sizes", "120", "--test-size", "100", "--sparse-size", "300", "--inducing", "20", "--repeats", "1",
         "--selection-size", "80", "--dim", "3"]


def test_the_gp_benchmark_reports_both_models_and_fails_on_a_peer_that_knows_the_answers(monkeypatch, capsys):
    status = gp.main(SMALL)
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["benchmark"] == "gp" and line["params"]["sizes"] == [120] and line["params"]["sparse_M"] == 20
    assert line["ratio"] == line["ours_s"] / line["peer_s"]
    row = line["sizes"]["120"]
    assert all(np.isfinite(value) for value in (*row["nll"].values(), *row["accuracy"].values()))
    assert status == (0 if line["agree"] else 1) and np.isfinite(line["sparse_bound"])

    def oracle(X, y, X_test, setting):  # the test labels themselves, nearly certain: no classifier matches it
        _, labels = gp.simulate(120 + 100, 3)
        probability = np.where(labels[120:] == 1, 0.999, 0.001)
        return np.column_stack([1 - probability, probability])

    monkeypatch.setattr(gp, "peer", oracle)
    assert gp.main(SMALL) == 1
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["agree"] is False
