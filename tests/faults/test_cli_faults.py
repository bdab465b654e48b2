"""A user's mistake on the command line is one line `fgraph: ...` on stderr, exit status 2, no traceback.

* ``--out``: a file, a path below a file, a directory that cannot be written, a directory holding the results of
  another example (its marker, or the summary.json of an older run);
* every example's options: values argparse accepts but the run cannot use (non-positive counts, negative seeds,
  repeated values, SNRs out of range, missing or unreadable --wav and --data files), refused before the run;
* what is not a user's mistake (an error of the example's own code) still shows its traceback.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fgraph.cli import MARKER, main
from fgraph.errors import NumericalError
from fgraph import examples
from fgraph.examples import OptionError, quickstart
from fgraph.store import StoreMismatchError
from tests.cli_runs import ROOT


def fgraph_main(capsys, *words) -> tuple:
    """(exit status, stderr) of ``fgraph <words>`` run in this process."""
    code = main([str(word) for word in words])
    return code, capsys.readouterr().err


def assert_one_line_mistake(code, err, *names):
    """Exit status 2 and stderr one line ``fgraph: ...`` naming each of ``names``, no traceback."""
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("fgraph: "), err
    for name in names:
        assert str(name) in lines[0], (name, err)


def fgraph_process(*words) -> subprocess.CompletedProcess:
    """``python -m fgraph <words>`` in a subprocess (what a user sees on the terminal)."""
    return subprocess.run([sys.executable, "-m", "fgraph", *map(str, words)], cwd=ROOT, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=300)


# ------------------------------------------------------------------------------------------- --out
def test_out_naming_an_existing_file_is_refused(tmp_path, capsys):
    existing = tmp_path / "results.txt"
    existing.write_text("keep me\n")
    assert_one_line_mistake(*fgraph_main(capsys, "run", "quickstart", "--quick", "--out", existing), "--out",
                            existing, "not a directory")
    assert existing.read_text() == "keep me\n"


def test_out_below_a_file_is_refused(tmp_path, capsys):
    existing = tmp_path / "results.txt"
    existing.write_text("")
    below = existing / "run1"
    assert_one_line_mistake(*fgraph_main(capsys, "run", "quickstart", "--quick", "--out", below), "--out", below,
                            "is a file")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root writes into a directory of mode 0o500 all the same")
def test_out_in_an_unwritable_directory_is_refused(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        for target in (locked, locked / "new"):
            assert_one_line_mistake(*fgraph_main(capsys, "run", "quickstart", "--quick", "--out", target),
                                    "--out", locked, "not writable")
    finally:
        locked.chmod(0o700)


def test_out_in_a_directory_the_system_says_is_unwritable_is_refused(tmp_path, monkeypatch, capsys):
    """The case above where it cannot run (as root): the permission answered "no" by the system call itself."""
    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: False if Path(path) == locked
                        else real_access(path, mode, **kw))
    for target in (locked, locked / "new"):
        assert_one_line_mistake(*fgraph_main(capsys, "run", "quickstart", "--quick", "--out", target),
                                "--out", locked, "not writable")
    assert not (locked / "new").exists()


def test_the_command_line_shows_no_traceback_for_a_bad_out(tmp_path):
    existing = tmp_path / "results.txt"
    existing.write_text("")
    for target in (existing, existing / "below"):
        completed = fgraph_process("run", "quickstart", "--quick", "--out", target)
        assert_one_line_mistake(completed.returncode, completed.stderr, "--out", target)


def test_a_run_marks_its_directory_with_its_example(tmp_path, capsys):
    out = tmp_path / "q"
    assert main(["run", "quickstart", "--quick", "--out", str(out)]) == 0
    assert json.loads((out / MARKER).read_text()) == {"example": "quickstart"}
    assert not list(out.glob(f"{MARKER}*.tmp"))  # written atomically: no temporary left behind
    assert MARKER not in capsys.readouterr().out  # the files listed are the example's
    assert main(["run", "quickstart", "--quick", "--out", str(out)]) == 0  # its own directory: run again


def test_another_examples_directory_is_refused_before_running(tmp_path, capsys):
    """The collision of two examples given the same --out (gmm-tvb and bmlr-tvb would mix replications)."""
    out = tmp_path / "same"
    assert main(["run", "quickstart", "--quick", "--out", str(out)]) == 0
    before = sorted(p.name for p in out.iterdir())
    capsys.readouterr()
    code, err = fgraph_main(capsys, "run", "bmlr-tvb", "--quick", "--out", out)
    assert_one_line_mistake(code, err)
    assert err == (f"fgraph: --out {out} holds the results of example 'quickstart'; give 'bmlr-tvb' a directory "
                   "of its own\n")
    assert sorted(p.name for p in out.iterdir()) == before  # stopped before running: nothing written


def test_an_unmarked_directory_with_another_examples_summary_is_refused(tmp_path, capsys):
    """Results of a run from before the marker: summary.json says whose they are."""
    out = tmp_path / "old"
    out.mkdir()
    (out / "summary.json").write_text(json.dumps({"example": "model-comparison", "quick": True}))
    code, err = fgraph_main(capsys, "run", "quickstart", "--quick", "--out", out)
    assert_one_line_mistake(code, err)
    assert err == (f"fgraph: --out {out} holds the results of example 'model-comparison'; give 'quickstart' a "
                   "directory of its own\n")
    assert not (out / MARKER).exists()


@pytest.mark.parametrize("summary", [{"example": "quickstart"}, {"n": 3}, "not json"],
                         ids=["its-own-summary", "summary-without-example", "unreadable-summary"])
def test_an_unmarked_directory_of_an_older_run_is_adopted(tmp_path, capsys, summary):
    """Its own older results, or results that do not say whose they are (not guessed): adopted and marked."""
    out = tmp_path / "old"
    out.mkdir()
    (out / "summary.json").write_text(summary if isinstance(summary, str) else json.dumps(summary))
    (out / "notes.txt").write_text("mine\n")
    assert main(["run", "quickstart", "--quick", "--out", str(out)]) == 0
    assert json.loads((out / MARKER).read_text()) == {"example": "quickstart"}
    assert (out / "notes.txt").read_text() == "mine\n"


def test_the_example_name_is_compared_in_either_spelling(tmp_path, monkeypatch, capsys):
    from fgraph.examples import model_comparison

    out = tmp_path / "mc"
    out.mkdir()
    (out / MARKER).write_text(json.dumps({"example": "model-comparison"}))
    monkeypatch.setattr(model_comparison, "run", lambda quick, out, progress: {})
    assert main(["run", "model_comparison", "--quick", "--out", str(out)]) == 0  # its own directory
    code, err = fgraph_main(capsys, "run", "quickstart", "--quick", "--out", out)
    assert_one_line_mistake(code, err, "'model-comparison'", "'quickstart'")


# ------------------------------------------------------------------------------------ example options
def write_csv(path, text):
    path.write_text(text)
    return path


def write_wav(path, signal, rate=16000):
    from fgraph.datasets.audio import write_wav as write

    return write(path, signal, rate)


BAD_OPTIONS = {
    # vad: --seeds 0 was a ValueError from deep in the run, shown with its traceback
    "vad-seeds-0": (["vad", "--seeds", "0"], ["--seeds", "0"]),
    "vad-seeds-negative": (["vad", "--seeds", "-2"], ["--seeds", "-2"]),
    "vad-seeds-not-a-number": (["vad", "--seeds", "two"], ["--seeds", "two"]),
    "vad-snr-nan": (["vad", "--snr", "nan"], ["--snr", "nan"]),
    "vad-snr-infinite": (["vad", "--snr=-inf"], ["--snr", "-inf"]),
    "vad-snr-out-of-range": (["vad", "--snr", "-4000"], ["--snr", "-4000"]),
    "vad-snr-repeated": (["vad", "--snr", "5", "--snr", "0", "--snr", "5"], ["--snr", "5"]),
    "vad-wav-missing": (["vad", "--wav", "{tmp}/none.wav"], ["--wav", "none.wav"]),
    "vad-wav-directory": (["vad", "--wav", "{tmp}"], ["--wav", "{tmp}"]),
    "vad-wav-not-a-wav": (["vad", "--wav", "{text}"], ["--wav", "notes.wav"]),
    "vad-wav-silent": (["vad", "--wav", "{silent}"], ["--wav", "silent.wav"]),
    "faithful-data-missing": (["faithful", "--data", "{tmp}/none.csv"], ["--data", "none.csv"]),
    "faithful-data-three-columns": (["faithful", "--data", "{three}"], ["--data", "three.csv", "two columns"]),
    "faithful-data-not-numbers": (["faithful", "--data", "{words}"], ["--data", "words.csv", "not two numbers"]),
    "faithful-jobs-0": (["faithful", "--jobs", "0"], ["--jobs", "0"]),
    "faithful-jobs-minus-2": (["faithful", "--jobs", "-2"], ["--jobs", "-2"]),
    "gmm-tvb-replications-0": (["gmm-tvb", "--replications", "0"], ["--replications", "0"]),
    "gmm-tvb-size-3": (["gmm-tvb", "--sizes", "200", "3"], ["--sizes", "3"]),
    "gmm-tvb-size-repeated": (["gmm-tvb", "--sizes", "200", "200"], ["--sizes", "200"]),
    "gmm-tvb-jobs-0": (["gmm-tvb", "--jobs", "0"], ["--jobs", "0"]),
    "gmm-tvb-seed-negative": (["gmm-tvb", "--seed", "-1"], ["--seed", "-1"]),
    "bmlr-tvb-replications-0": (["bmlr-tvb", "--replications", "0"], ["--replications", "0"]),
    "bmlr-tvb-size-2": (["bmlr-tvb", "--sizes", "2"], ["--sizes", "2"]),
    "bmlr-tvb-size-repeated": (["bmlr-tvb", "--sizes", "50", "50"], ["--sizes", "50"]),
    "bmlr-tvb-data-sets-3": (["bmlr-tvb", "--data-sets", "3"], ["--data-sets", "3"]),
    "bmlr-tvb-noise-precision-negative": (["bmlr-tvb", "--noise-precision", "-1"], ["--noise-precision", "-1"]),
    "bmlr-tvb-noise-precision-word": (["bmlr-tvb", "--noise-precision", "known"], ["--noise-precision", "known"]),
    "bmlr-tvb-jobs-0": (["bmlr-tvb", "--jobs", "0"], ["--jobs", "0"]),
    "bmlr-tvb-seed-negative": (["bmlr-tvb", "--seed", "-3"], ["--seed", "-3"]),
    "likelihood-approx-splits-0": (["likelihood-approx", "--splits", "0"], ["--splits", "0"]),
    "likelihood-approx-unknown-data-set": (["likelihood-approx", "--datasets", "iris", "mnist"],
                                           ["--datasets", "mnist"]),
    "likelihood-approx-seed-negative": (["likelihood-approx", "--seed", "-1"], ["--seed", "-1"]),
    "online-logistic-seeds-0": (["online-logistic", "--seeds", "0"], ["--seeds", "0"]),
    "online-logistic-steps-0": (["online-logistic", "--steps", "0"], ["--steps", "0"]),
    "online-logistic-seed-negative": (["online-logistic", "--seed", "-1"], ["--seed", "-1"]),
    "unknown-option": (["vad", "--snrr", "5"], ["unrecognized arguments: --snrr"]),
    "options-of-an-example-without-options": (["quickstart", "--snr", "5"], ["quickstart", "--snr"]),
    "unknown-example": (["no-such-example"], ["no-such-example"]),
    "out-without-a-value": (["quickstart", "--out"], ["--out"]),
}


@pytest.fixture
def files(tmp_path):
    """The files the bad options name: a text file called .wav, a silent WAV, malformed CSVs."""
    text = tmp_path / "notes.wav"
    text.write_text("not a wave file\n")
    return {"tmp": str(tmp_path), "text": str(text),
            "silent": str(write_wav(tmp_path / "silent.wav", np.zeros(16000))),
            "three": str(write_csv(tmp_path / "three.csv", "a,b,c\n1,2,3\n4,5,6\n")),
            "words": str(write_csv(tmp_path / "words.csv", "a,b\n1,x\n2,3\n"))}


@pytest.mark.parametrize("case", BAD_OPTIONS)
def test_a_bad_example_option_is_one_line_before_the_run(case, files, tmp_path, monkeypatch, capsys):
    words, names = BAD_OPTIONS[case]
    started = []
    if words[0] in examples.available():  # the run must not start: its checks come first
        monkeypatch.setattr(examples.load(words[0]), "run", lambda **keywords: started.append(keywords) or {})
    out = tmp_path / "out"
    words = [word.format(**files) for word in words]
    command = ["run", words[0], "--quick", *(["--out", out] if "--out" not in words else []), *words[1:]]
    code, err = fgraph_main(capsys, *command)
    assert_one_line_mistake(code, err, *[name.format(**files) for name in names])
    assert not started
    assert not out.exists()  # nothing made or marked before the options were found wrong


def test_the_command_line_shows_no_traceback_for_vad_seeds_0(tmp_path):
    completed = fgraph_process("run", "vad", "--quick", "--seeds", "0", "--out", tmp_path / "o")
    assert_one_line_mistake(completed.returncode, completed.stderr, "--seeds")


def test_run_without_an_example_is_one_line(capsys):
    assert_one_line_mistake(*fgraph_main(capsys, "run"), "example")
    assert_one_line_mistake(*fgraph_main(capsys, "run", "--quick"), "example")


def test_a_mistake_in_the_common_options_is_one_line(capsys, tmp_path):
    assert_one_line_mistake(*fgraph_main(capsys, "run", "quickstart", "--quik", "--out", tmp_path),
                            "--quik")
    assert_one_line_mistake(*fgraph_main(capsys, "lst"), "lst")


# ------------------------------------------------------------------------- mistakes found during the run
def test_an_os_error_on_the_out_directory_during_the_run_is_one_line(tmp_path, monkeypatch, capsys):
    """Disk full or permissions changed while the example writes: a mistake of the place, named, not a bug."""
    out = tmp_path / "o"

    def failing_run(quick, out, progress):
        raise OSError(28, "No space left on device", str(out / "summary.json"))

    monkeypatch.setattr(quickstart, "run", failing_run)
    code, err = fgraph_main(capsys, "run", "quickstart", "--out", out)
    assert_one_line_mistake(code, err, out / "summary.json", "No space left on device")


def test_a_bug_in_an_example_still_shows_its_traceback(tmp_path, monkeypatch):
    def broken_run(quick, out, progress):
        raise ValueError("an internal mistake")

    monkeypatch.setattr(quickstart, "run", broken_run)
    with pytest.raises(ValueError, match="an internal mistake"):
        main(["run", "quickstart", "--out", str(tmp_path / "o")])

    def broken_io(quick, out, progress):
        raise FileNotFoundError(2, "No such file or directory", "/nonexistent/bundled/data.csv")

    monkeypatch.setattr(quickstart, "run", broken_io)
    with pytest.raises(FileNotFoundError):  # not a path the user gave: a bug, not a mistake
        main(["run", "quickstart", "--out", str(tmp_path / "o")])


@pytest.mark.parametrize("error, status, shown", [
    (OptionError("quickstart: --x must be 1"), 2, "fgraph: quickstart: --x must be 1\n"),
    (StoreMismatchError("gmm-tvb: out/gmm-tvb/replications holds records of other settings (differing: seed); give "
                        "another --out, or delete it to start again"),
     2, "fgraph: gmm-tvb: out/gmm-tvb/replications holds records of other settings"),
    (NumericalError("the message out of node 'y' is NaN"), 1,
     "fgraph: example 'quickstart' failed: NumericalError: the message out of node 'y' is NaN\n"),
], ids=["option-error", "directory-of-other-settings", "computation-failed"])
def test_an_error_the_example_raises_is_one_line(error, status, shown, tmp_path, monkeypatch, capsys):
    """Found by the run itself: a mistake in its options or directory (2), or a failure of its computation (1)."""
    def failing_run(quick, out, progress):
        raise error

    monkeypatch.setattr(quickstart, "run", failing_run)
    code, err = fgraph_main(capsys, "run", "quickstart", "--out", tmp_path / "o")
    assert code == status and err.startswith(shown) and len(err.splitlines()) == 1, err


def test_the_runs_own_checks_refuse_repeated_values(tmp_path):
    """The checks a Python caller of run() meets, as the command line's: repeated SNRs or sizes."""
    from fgraph_experiments import bmlr_tvb, gmm_tvb, vad

    with pytest.raises(OptionError, match="every SNR must be given once"):
        vad.run(quick=True, out=tmp_path / "v", snr=[5.0, 0.0, 5.0])
    with pytest.raises(OptionError, match="--seeds must be at least 1"):
        vad.run(quick=True, out=tmp_path / "v", seeds=0)
    with pytest.raises(OptionError, match="every size must be given once"):
        gmm_tvb.run(quick=True, out=tmp_path / "g", sizes=[200, 200])
    with pytest.raises(OptionError, match="every size must be given once"):
        bmlr_tvb.run(quick=True, out=tmp_path / "b", sizes=[50, 50])


def test_ctrl_c_is_one_line_and_exit_status_130(tmp_path, monkeypatch, capsys):
    import types

    from fgraph import examples
    from fgraph.cli import main

    def interrupted(**options):
        raise KeyboardInterrupt

    monkeypatch.setattr(examples, "load", lambda name: types.SimpleNamespace(run=interrupted, DESCRIPTION="x"))
    assert main(["run", "quickstart", "--out", str(tmp_path)]) == 130
    err = capsys.readouterr().err
    assert err.strip() == "fgraph: interrupted" and "Traceback" not in err
