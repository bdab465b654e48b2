"""The first-call benchmark: its children run, ours and the peer agree, and a disagreement exits non-zero."""
import json

import pytest

from benchmarks import first_call


def test_one_repeat_runs_and_agrees():
    report = first_call.run(quick=True, repeats=1)
    assert report["agree"] is True and report["ratio"] > 0
    assert set(report["settings"]) == {"no_numba", "numba_cold", "numba_warm"}
    assert report["settings"]["no_numba"]["numba_imported"] is False
    assert report["quality"]["iterations"][0] == report["quality"]["iterations"][1]
    json.dumps(report)


def test_a_disagreeing_peer_is_caught(monkeypatch, capsys):
    ours = {"answers": [1.0, -40.0, 41.0, 2.0, 4.0], "iterations": 5}
    assert first_call.agrees(ours, dict(ours))
    assert not first_call.agrees(ours, {**ours, "answers": [1.0, -40.0, 41.0 + 1e-6, 2.0, 4.0]})
    assert not first_call.agrees(ours, {**ours, "iterations": 6})
    monkeypatch.setattr(first_call, "run", lambda quick: {"benchmark": "first_call", "agree": False})
    with pytest.raises(SystemExit) as stopped:
        first_call.main(["--quick"])
    assert stopped.value.code == 1 and json.loads(capsys.readouterr().out.splitlines()[-1])["agree"] is False
