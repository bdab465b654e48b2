"""benchmarks/hmm.py at a small size: ours and hmmlearn (both implementations) agree; a wrong peer fails."""
import json

import pytest

from benchmarks import hmm

pytest.importorskip("hmmlearn")


def test_the_hmm_benchmark_agrees_with_hmmlearn_and_fails_on_a_wrong_peer(monkeypatch, capsys):
    assert hmm.main(["--states", "3", "--steps", "500", "--repeats", "1"]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["benchmark"] == "hmm" and line["agree"] is True and (line["K"], line["T"]) == (3, 500)
    assert line["ratio"] == line["ours_s"] / line["peer_s"] and line["peer"].startswith("hmmlearn")
    assert line["max_probability_difference"] <= hmm.PROBABILITY_TOLERANCE
    honest = hmm.peer

    def shifted(y, p, implementation):  # one step's posterior off by a little
        found = honest(y, p, implementation)
        found["posterior"] = found["posterior"].copy()
        found["posterior"][10] = found["posterior"][10][::-1]
        return found

    monkeypatch.setattr(hmm, "peer", shifted)
    assert hmm.main(["--states", "3", "--steps", "500", "--repeats", "1"]) == 1
