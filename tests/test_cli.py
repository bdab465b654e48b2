"""The command line: `fgraph list` and `fgraph run <example> --quick --out DIR`, with progress bars on a terminal."""
import io
import json
import subprocess
import sys
import types

import pytest

from fgraph import examples
from fgraph.cli import main
from tests.cli_runs import fgraph_command


def test_list_names_the_quickstart(capsys):
    assert main(["list"]) == 0
    assert "quickstart" in capsys.readouterr().out


def test_list_says_which_examples_come_from_the_repositorys_examples(capsys, monkeypatch):
    """The paper reproductions register from the lab (examples/); without it, the list says where they are."""
    from fgraph import examples

    assert main(["list"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert "[lab]" in lines["gmm-tvb"] and "[lab]" not in lines["quickstart"]
    monkeypatch.setattr(examples, "registered", lambda: {})
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "gmm-tvb" not in out and "pip install -e examples" in out


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


# ---------------------------------------------------------------- progress on a terminal only
class RecordingBar:
    """Stands in for tqdm: records each bar's description, total and the steps it was advanced."""

    made: list = []

    def __init__(self, total, desc, leave=True, file=None, unit=None):  # examples' bars, and fgraph.progress's
        self.total, self.desc, self.steps, self.closed = total, desc, 0, False
        RecordingBar.made.append(self)

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.close()

    def update(self, steps=1):
        self.steps += steps

    def set_postfix_str(self, text):
        pass

    def set_postfix(self, status, refresh=True):
        pass

    def close(self):
        self.closed = True


@pytest.fixture
def recorded_bars(monkeypatch):
    """Replace tqdm by RecordingBar for the examples; the bars made during the test."""
    fake = types.ModuleType("tqdm.auto")
    fake.tqdm = RecordingBar
    monkeypatch.setitem(sys.modules, "tqdm.auto", fake)
    RecordingBar.made = []
    return RecordingBar.made


class Terminal(io.StringIO):
    """A stderr that says it is an interactive terminal."""

    def isatty(self):
        return True


def test_run_without_a_terminal_prints_only_results():
    """stdout and stderr are pipes: no progress bar, nothing on stderr."""
    completed = fgraph_command("fgraph run mixed-model --quick")
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    assert "mixed-model: finished" in completed.stdout


@pytest.mark.parametrize("stderr, flags, shown", [
    (Terminal(), [], True),
    (Terminal(), ["--no-progress"], False),
    (io.StringIO(), [], False),
    (io.StringIO(), ["--progress"], True),
], ids=["terminal", "terminal-no-progress", "pipe", "pipe-progress"])
def test_progress_is_shown_on_a_terminal_or_when_asked(stderr, flags, shown, recorded_bars, tmp_path, monkeypatch,
                                                       capsys):
    monkeypatch.setattr(sys, "stderr", stderr)
    assert main(["run", "quickstart", "--quick", "--out", str(tmp_path), *flags]) == 0
    assert [(bar.desc, bar.total) for bar in recorded_bars] == ([("VMP sweeps", 10)] if shown else [])


# each example made small (its quick sizes patched) and the bars it must show, advanced to the end
SMALL_RUNS = {
    "quickstart": ({}, [("VMP sweeps", 10, 5)]),  # converged after 5 of at most 10 sweeps
    "mixed-model": ({"QUICK_SIZE": 12, "QUICK_ITERATIONS": 3},
                    [("density check (adaptive quadrature)", 12, 12), ("combination (grid density)", 3, 3),
                     ("combination (moment matching)", 3, 3)]),
    "model-comparison": ({"QUICK_SIZES": (1, 5)},
                         [("online combination", 5, 5), ("averaging, selection, variational combination", 2, 2)]),
    "faithful": ({"QUICK_GRID": 2, "QUICK_BOOTSTRAP": 1}, [("TVB table", 2, 2)]),  # whole data; halves
}


@pytest.mark.parametrize("name", SMALL_RUNS)
def test_every_example_advances_its_progress_bars(name, recorded_bars, tmp_path, monkeypatch, capsys):
    patches, bars = SMALL_RUNS[name]
    module = examples.load(name)
    for constant, value in patches.items():
        monkeypatch.setattr(module, constant, value)
    assert main(["run", name, "--quick", "--progress", "--out", str(tmp_path)]) == 0
    assert [(bar.desc, bar.total, bar.steps) for bar in recorded_bars] == bars
    assert all(bar.closed for bar in recorded_bars)


def test_progress_uses_tqdm_on_stderr(tmp_path, capsys):
    assert main(["run", "quickstart", "--quick", "--progress", "--out", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "VMP sweeps" in captured.err and "VMP sweeps" not in captured.out


def test_without_tqdm_progress_is_silent(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # `from tqdm.auto import tqdm` raises ImportError
    assert main(["run", "quickstart", "--quick", "--progress", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().err == ""


# ---------------------------------------------------------------- help
def test_run_help_of_an_example_shows_the_common_and_its_own_options(capsys):
    """The example's options are parsed by a second parser: its help lists them beside the common ones."""
    assert main(["run", "vad", "--help"]) == 0
    shown = capsys.readouterr().out
    for option in ("--quick", "--out", "--progress", "--wav", "--snr", "--seeds"):
        assert option in shown, option
    assert "fgraph run vad" in shown


def test_run_help_says_what_out_means(capsys):
    for words in (["run", "--help"], ["run", "quickstart", "--help"]):
        assert main(words) == 0
        shown = " ".join(capsys.readouterr().out.split())  # argparse wraps the help text
        assert ("the directory this example writes into, default out/<example>; give each example its own"
                in shown), words
