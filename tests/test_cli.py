"""The command line: `fgraph list` and `fgraph run <example> --quick --out DIR`, with progress bars on a terminal."""
import importlib.util
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


@pytest.mark.parametrize("name, own", [("likelihood-approx", ("--splits", "--datasets", "--seed")),
                                       ("online-logistic", ("--seeds", "--steps", "--seed"))])
def test_run_help_of_the_lab_examples_shows_their_options(name, own, capsys):
    assert main(["run", name, "--help"]) == 0
    shown = capsys.readouterr().out
    assert all(option in shown for option in own + ("--quick", "--out")), shown


# ---------------------------------------------------------------- optional packages
def test_a_missing_optional_package_is_one_line_naming_the_extra(tmp_path, monkeypatch, capsys):
    """Raised on import (as an example's ImportError raised while handling the missing module) or during the run."""
    def missing(name):
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    def load_without_sklearn(name):
        try:
            missing("sklearn.metrics")
        except ImportError as error:
            raise ImportError(f"needs scikit-learn ({error})") from None

    monkeypatch.setattr(examples, "load", load_without_sklearn)
    assert main(["run", "vad", "--quick", "--out", str(tmp_path / "vad")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "example 'vad' needs scikit-learn" in err and 'pip install "fgraph-mp[examples]"' in err
    running = types.ModuleType("running")
    running.run = lambda quick, out, progress: missing("webrtcvad")
    monkeypatch.setattr(examples, "load", lambda name: running)
    assert main(["run", "running", "--out", str(tmp_path / "running")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install webrtcvad-wheels" in err


def test_a_missing_module_of_fgraph_itself_is_a_bug_with_its_traceback(monkeypatch):
    def broken(name):
        raise ModuleNotFoundError("No module named 'fgraph.nowhere'", name="fgraph.nowhere")

    monkeypatch.setattr(examples, "load", broken)
    with pytest.raises(ModuleNotFoundError):
        main(["run", "vad", "--out", "unused"])


def test_without_matplotlib_the_quickstart_says_its_figure_is_skipped(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` raises ImportError
    monkeypatch.setattr(examples, "_figures_skipped_said", False)
    assert main(["run", "quickstart", "--quick", "--out", str(tmp_path)]) == 0
    assert examples.FIGURES_SKIPPED in capsys.readouterr().out.splitlines()
    assert not (tmp_path / "free_energy.png").exists()


# ---------------------------------------------------------------- fgraph vad
def bursts_wav(path, rate=16000):
    """A WAV of faint noise with voiced bursts at 0.4-0.9 s and 1.3-2.1 s (2.6 s, 16-bit)."""
    import numpy as np
    from scipy.io import wavfile

    rng = np.random.default_rng(0)
    t = np.arange(int(2.6 * rate)) / rate
    x = rng.normal(0.0, 0.002, t.size)
    for a, b in [(0.4, 0.9), (1.3, 2.1)]:
        inside = (t >= a) & (t < b)
        x[inside] += 0.3 * np.sign(np.sin(2 * np.pi * 150 * t[inside])) * np.abs(np.sin(2 * np.pi * 7 * t[inside]))
    wavfile.write(path, rate, np.round(x * 32767).astype(np.int16))
    return path


def test_vad_prints_the_segments_and_writes_the_files(tmp_path, capsys):
    wav = bursts_wav(tmp_path / "speech.wav", rate=22050)
    files = {"--csv": tmp_path / "frames.csv", "--json": tmp_path / "speech.json", "--plot": tmp_path / "speech.png"}
    if importlib.util.find_spec("matplotlib") is None:
        del files["--plot"]
    words = ["vad", str(wav), "--threshold", "0.6"] + [w for option, path in files.items() for w in (option, str(path))]
    assert main(words) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["start", "(s)", "end", "(s)", "probability"]
    rows = [[float(v) for v in line.split()] for line in out[1:3]]
    assert [row[:2] for row in rows] == [[0.4, 0.9], [1.3, 2.1]]
    assert out[3].startswith("speech.wav: 2.60 s at 22050 Hz, 2 speech segments, 1.30 s of speech")
    assert "threshold 0.6" in out[3]
    stored = json.loads(files["--json"].read_text())
    assert [(s["start_s"], s["end_s"]) for s in stored["segments"]] == [(0.4, 0.9), (1.3, 2.1)]
    assert files["--csv"].read_text().startswith("start_s,end_s,speech_probability,speech\n")
    for path in files.values():
        assert f"wrote {path}" in out


@pytest.mark.parametrize("words, said", [
    (["missing.wav"], "missing.wav does not exist"),
    (["notwav.wav"], "notwav.wav cannot be read as a WAV file"),
    (["speech.wav", "--threshold", "1.5"], "argument --threshold: must be a probability"),
    (["speech.wav", "--frame-ms", "ten"], "argument --frame-ms: must be a number of milliseconds > 0"),
    (["speech.wav", "--min-silence-ms", "-5"], "argument --min-silence-ms"),
    (["speech.wav", "--csv", "no-such-dir/f.csv"], "the directory no-such-dir of no-such-dir/f.csv does not exist"),
    (["speech.wav", "--json", "out.txt"], "must end in .json"),
    (["speech.wav", "--plot", "out.gif"], "must end in .png or .svg or .pdf"),
    (["speech.wav", "--loud"], "unrecognized arguments: --loud"),
    ([], "the following arguments are required: FILE.wav"),
], ids=["missing", "not-wav", "threshold", "frame-ms", "min-silence", "csv-dir", "json-suffix", "plot-suffix",
        "unknown-option", "no-file"])
def test_vad_mistakes_are_one_line(words, said, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    bursts_wav(tmp_path / "speech.wav")
    (tmp_path / "notwav.wav").write_text("not a wav file")
    assert main(["vad", *words]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fgraph: ") and err.count("\n") == 1 and said in err, err


def test_vad_help_documents_its_options(capsys):
    assert main(["vad", "--help"]) == 0
    shown = capsys.readouterr().out
    for option in ("FILE.wav", "--threshold", "--frame-ms", "--min-speech-ms", "--min-silence-ms", "--csv", "--json",
                   "--plot"):
        assert option in shown, option


def test_vad_from_the_shell_prints_no_traceback(tmp_path):
    completed = subprocess.run([sys.executable, "-m", "fgraph", "vad", str(tmp_path / "none.wav")],
                               capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert completed.returncode == 2 and completed.stdout == ""
    assert completed.stderr == f"fgraph: {tmp_path / 'none.wav'} does not exist; give the path of a WAV file\n"
