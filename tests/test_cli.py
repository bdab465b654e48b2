"""The command line: `fgraph list` and `fgraph run <example> --quick --out DIR`."""
import json
import subprocess
import sys

from fgraph.cli import main


def test_list_names_the_quickstart(capsys):
    assert main(["list"]) == 0
    assert "quickstart" in capsys.readouterr().out


def test_run_quickstart_writes_a_summary(tmp_path, capsys):
    assert main(["run", "quickstart", "--quick", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary  # the example's numbers; their correctness is tested in tests/models
    assert "quickstart: finished" in capsys.readouterr().out


def test_unknown_example_is_an_error(capsys):
    assert main(["run", "no-such-example", "--out", "unused"]) == 2
    assert "no-such-example" in capsys.readouterr().err


def test_python_dash_m_fgraph_works():
    completed = subprocess.run([sys.executable, "-m", "fgraph", "--version"], capture_output=True, text=True, check=True)
    assert completed.stdout.startswith("fgraph ")
