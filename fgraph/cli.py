"""The ``fgraph`` command line (also ``python -m fgraph``).

::

    fgraph list                              # the examples, one line each
    fgraph run quickstart                    # run one, files go to out/quickstart/
    fgraph run quickstart --quick --out DIR  # the seconds-long version, files to DIR
    fgraph run vad --help                    # the options of every example and those of vad
    fgraph vad speech.wav --plot speech.png  # the speech segments of a recording as it is
    fgraph --version

On a terminal, ``fgraph run`` shows progress bars on stderr for the long
steps of an example (with tqdm installed); piped, redirected or under CI
(no terminal) it prints only the results. ``--progress`` / ``--no-progress`` override that choice.

``--out DIR`` is the example's own directory (default ``out/<example>``): the example writes straight into it,
and the resumable ones read their finished parts back from it. So that two examples never mix their results, a
run marks the directory with its example (``DIR/.fgraph-example.json``) and another example pointed at it stops
before running.

A user's mistake — an option the example cannot use, a ``--out`` that is a file or cannot be written, the
directory of another example, a file that cannot be read or written during the run — is one line
``fgraph: ...`` on stderr saying what is wrong and what to do, exit status 2, found before the example starts
wherever it can be. An example whose computation fails (an :class:`~fgraph.errors.FgraphError`) is one line and
exit status 1. Anything else is a bug, and shows its traceback.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

import fgraph
from fgraph import examples
from fgraph.errors import FgraphError
from fgraph.store import write_json

#: the file that says which example owns a results directory
MARKER = ".fgraph-example.json"
OUT_HELP = "the directory this example writes into, default out/<example>; give each example its own"


class _Parser(argparse.ArgumentParser):
    """argparse, a usage mistake said in one line ``fgraph: ...`` (exit status 2) instead of the usage followed by
    ``prog: error: ...``. argparse's own messages (an unknown option, a missing value) say what is wrong but not
    what to do: they are followed by where the options are listed; those of the ``type`` functions say both."""

    GENERIC = re.compile(r"^(unrecognized arguments|the following arguments are required|ambiguous option|one of the "
                         r"arguments)|: (expected|invalid|ignored explicit argument|not allowed with)")

    def error(self, message):
        hint = f" (`{self.prog} --help` lists the options)" if self.GENERIC.search(message) else ""
        self.exit(2, f"fgraph: {message}{hint}\n")


class _Mistake(Exception):
    """A user's mistake found by the command line itself: its one line, without the ``fgraph: ``."""


def out_directory(text: str) -> Path:
    """``type`` of ``--out``: the path, if a directory can be written there; refused at once otherwise."""
    path = Path(text)
    problem = _out_problem(path)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return path


def _out_problem(path: Path) -> str | None:
    """Why the results cannot be written into ``path`` (a file, below a file, not writable), or None."""
    try:
        if path.exists() and not path.is_dir():
            return f"{path} is a file, not a directory; give a directory, which is made if it does not exist"
        existing = path
        while not existing.exists():  # the nearest ancestor that exists: where the directory would be made
            existing = existing.parent
    except OSError as error:
        return f"{path} cannot be examined ({error.strerror}); give another directory"
    if not existing.is_dir():
        return f"{existing} is a file, so {path} cannot be made below it; give another directory"
    if not os.access(existing, os.W_OK | os.X_OK):
        where = "" if existing == path else f", so {path} cannot be made in it"
        return f"{existing} is not writable{where}; give a directory you can write to"
    return None


def _add_run_options(parser) -> None:
    """The options of ``fgraph run`` every example has."""
    parser.add_argument("--quick", action="store_true", help="small version that finishes in seconds")
    parser.add_argument("--out", type=out_directory, default=None, metavar="DIR",
                        help=f"{OUT_HELP} (examples that resume read their finished parts back from it)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress bars on stderr (needs tqdm; default: only when stderr is a terminal)")


RUN_DESCRIPTION = "Run an example and write its results to its directory. `fgraph run EXAMPLE --help` also lists " \
                  "the example's own options."
RUN_USAGE = "fgraph run EXAMPLE [-h] [--quick] [--out DIR] [--progress | --no-progress] [EXAMPLE's own options]"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="fgraph",
        description="Message passing on Forney-style factor graphs: run the bundled examples.",
    )
    parser.add_argument("--version", action="version", version=f"fgraph {fgraph.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser("list", help="list the examples with a one-line description each")
    run = commands.add_parser("run", help="run an example and write its results to a directory",
                              description=RUN_DESCRIPTION, usage=RUN_USAGE, add_help=False)
    _add_run_help(run)
    _add_run_options(run)
    _add_vad_command(commands)
    return parser


VAD_DESCRIPTION = (
    "The speech segments of a WAV recording as it is, by the hidden-Markov switching model of fgraph.models.vad "
    "(fgraph.models.vad.recording.detect_speech): any rate (analysed at 16 kHz), mono or stereo, 8/16/24/32-bit PCM "
    "or float. Prints the segments (start, end, mean speech probability) and a one-line summary. A frame is speech "
    "when its mean speech probability exceeds the threshold; pauses shorter than --min-silence-ms between speech "
    "are filled, then speech shorter than --min-speech-ms is dropped. The noise level is measured on the quietest "
    "tenth of the recording, so it should hold some pause.")


def _add_vad_command(commands) -> None:
    """``fgraph vad FILE.wav [options]``: every value checked here, before the recording is read."""
    vad = commands.add_parser("vad", help="the speech segments of a WAV recording", description=VAD_DESCRIPTION)
    vad.add_argument("wav", metavar="FILE.wav", help="the recording (a WAV file)")
    vad.add_argument("--threshold", type=_probability, default=0.5, metavar="P",
                     help="a frame is speech when its mean speech probability exceeds P, in (0, 1) (default 0.5)")
    vad.add_argument("--frame-ms", type=_milliseconds(positive=True), default=10.0, metavar="MS",
                     help="frame length in milliseconds, > 0 (default 10)")
    vad.add_argument("--min-speech-ms", type=_milliseconds(), default=50.0, metavar="MS",
                     help="drop speech shorter than MS milliseconds (default 50)")
    vad.add_argument("--min-silence-ms", type=_milliseconds(), default=100.0, metavar="MS",
                     help="fill pauses shorter than MS milliseconds between speech (default 100)")
    vad.add_argument("--csv", type=_output_file((".csv",)), default=None, metavar="OUT.csv",
                     help="write the frame table: start_s, end_s, speech_probability, speech (1/0) per frame")
    vad.add_argument("--json", type=_output_file((".json",)), default=None, metavar="OUT.json",
                     help="write the segments, the frame table, the settings and the model's parameters")
    vad.add_argument("--plot", type=_figure_file, default=None, metavar="OUT.png",
                     help="draw the waveform, the speech probability and the segments (.png, .svg or .pdf; "
                          "needs matplotlib)")


def _probability(text: str) -> float:
    """``type`` of --threshold: a number strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 < value < 1.0:  # NaN too
        raise argparse.ArgumentTypeError(f"must be a probability strictly between 0 and 1, e.g. 0.5, got {text!r}")
    return value


def _milliseconds(positive: bool = False):
    """``type`` of a length in milliseconds: a finite number > 0 (``positive``) or >= 0."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not (value == value and value != float("inf") and (value > 0 if positive else value >= 0)):
            raise argparse.ArgumentTypeError(f"must be a number of milliseconds {'> 0' if positive else '>= 0'}, "
                                             f"got {text!r}")
        return value

    return parse


def _output_file(suffixes: tuple):
    """``type`` of a file to write: a path with one of ``suffixes`` whose directory exists and is writable, and
    that is not a directory itself; refused at once otherwise (before the recording is analysed)."""
    def parse(text: str) -> Path:
        path = Path(text)
        if path.suffix.lower() not in suffixes:
            raise argparse.ArgumentTypeError(f"{text!r} must end in {' or '.join(suffixes)}")
        if path.is_dir():
            raise argparse.ArgumentTypeError(f"{path} is a directory; give a file name, e.g. {path / ('out' + suffixes[0])}")
        parent = path.parent
        if not parent.is_dir():
            raise argparse.ArgumentTypeError(f"the directory {parent} of {path} does not exist; make it first")
        if not os.access(parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
            raise argparse.ArgumentTypeError(f"{path} cannot be written; give a file in a directory you can write to")
        return path

    return parse


FIGURE_SUFFIXES = (".png", ".svg", ".pdf")


def _figure_file(text: str) -> Path:
    """``type`` of --plot: a writable .png/.svg/.pdf path, with matplotlib installed."""
    path = _output_file(FIGURE_SUFFIXES)(text)
    try:
        import matplotlib  # noqa: F401 — only whether it is there; pyplot is imported when the figure is drawn
    except ImportError:
        raise argparse.ArgumentTypeError('needs matplotlib, which is not installed: pip install "fgraph-mp[plot]" '
                                         "(or run without --plot)") from None
    return path


def vad_command(arguments, rest: list) -> int:
    """``fgraph vad``: detect, print the segments and the summary, write the files asked for. Returns the exit
    status: 0, 2 for a user's mistake (a bad file or option: one line), 1 if the model fails."""
    from fgraph.models.vad import RecordingError, detect_speech

    if rest:
        return _say(f"unrecognized arguments: {' '.join(rest)} (`fgraph vad --help` lists the options)")
    try:
        found = detect_speech(arguments.wav, frame_ms=arguments.frame_ms, threshold=arguments.threshold,
                              min_speech_ms=arguments.min_speech_ms, min_silence_ms=arguments.min_silence_ms)
    except RecordingError as error:
        return _say(str(error))
    except FgraphError as error:
        print(f"fgraph: vad failed on {arguments.wav}: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    print(found.table() if found.segments else "no speech found")
    print(found.summary())
    for option, write in (("csv", found.frames.write_csv), ("json", found.write_json), ("plot", found.plot)):
        path = getattr(arguments, option)
        if path is None:
            continue
        try:
            write(path)
        except OSError as error:
            return _say(f"--{option} {path}: cannot write it ({error.strerror or error}); give a file in a "
                        "directory you can write to")
        print(f"wrote {path}")
    return 0


def _add_run_help(parser) -> None:
    # the example's options are parsed by a second parser: the help is printed once both are known
    parser.add_argument("example", nargs="?", metavar="EXAMPLE", help="example name (see `fgraph list`)")
    parser.add_argument("-h", "--help", action="store_true",
                        help="show this help (after EXAMPLE: with the example's own options) and exit")


def _run_parser() -> argparse.ArgumentParser:
    """``fgraph run`` without an example: for its help."""
    parser = _Parser(prog="fgraph run", description=RUN_DESCRIPTION, usage=RUN_USAGE, add_help=False)
    _add_run_help(parser)
    _add_run_options(parser)
    return parser


def _example_parser(name: str, module) -> tuple:
    """(the parser of ``fgraph run <name>``: the options every example has and the example's own, the names of the
    example's own options)."""
    parser = _Parser(prog=f"fgraph run {name}", description=getattr(module, "DESCRIPTION", None))
    _add_run_options(parser.add_argument_group("options of every example"))
    # argparse lists a parser's options only in ``_actions``: those added by the example are its own
    common = {action.dest for action in parser._actions}
    add_arguments = getattr(module, "add_arguments", None)
    if add_arguments is not None:
        add_arguments(parser)
    return parser, [action.dest for action in parser._actions if action.dest not in common]


def list_examples() -> int:
    found = examples.available()
    if not found:
        print("no examples found")
        return 1
    lab = examples.registered()
    width = max(len(name) for name in found)
    for name, description in found.items():
        # the paper reproductions come from the repository's examples/, not from the library
        print(f"{name:<{width}}  {'[lab] ' if name in lab else ''}{description}")
    print("\n[lab]: a paper reproduction of the repository's examples/ (from a checkout: pip install -e examples)"
          if lab else f"\n{examples.EXPERIMENTS_HINT}")
    return 0


def run_example(name: str, quick: bool, out: Path | None, progress: bool | None = None,
                options: list | None = None, show_help: bool = False) -> int:
    """Run example ``name``; ``progress=None`` shows progress bars when stderr is a terminal.

    ``options``: the command line's words after the common ones, parsed by the example's own
    ``add_arguments(parser)`` (e.g. ``fgraph run vad --snr 5``) and passed to its ``run`` as keywords.
    ``show_help``: print the options of every example and the example's own, run nothing.
    Returns the exit status (module docstring).
    """
    try:
        module = examples.load(name)
    except KeyError as error:
        return _say(error.args[0])
    except ImportError as error:  # an optional package the example imports is not installed
        line = examples.missing_package(error, f"example {name.replace('_', '-')!r}")
        if line is None:
            raise
        return _say(line)
    name = name.replace("_", "-")
    extra, code = _example_options(name, module, options or [], show_help)
    if extra is None:
        return code
    given = out is not None
    out = Path("out") / name if out is None else Path(out)
    try:
        _claim(out, name, given)
    except _Mistake as mistake:
        return _say(str(mistake))
    if progress is None:
        progress = _is_terminal(sys.stderr)
    start = time.perf_counter()
    try:
        module.run(quick=quick, out=out, progress=progress, **extra)
    except FgraphError as error:
        if _is_users_mistake(error):
            return _say(str(error))
        print(f"fgraph: example {name!r} failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        line = _os_error_line(name, error, out, extra)
        if line is None:
            raise  # a file of the example's own: a bug
        return _say(line)
    except ImportError as error:  # an optional package imported during the run
        line = examples.missing_package(error, f"example {name!r}")
        if line is None:
            raise
        return _say(line)
    elapsed = time.perf_counter() - start
    written = sorted(p.name for p in out.iterdir() if p.is_file() and p.name != MARKER)
    print(f"\n{name}: finished in {elapsed:.1f} s; files in {out}/: {', '.join(written) or '(none)'}")
    return 0


def _say(line: str) -> int:
    """Say a user's mistake in one line; its exit status."""
    print(f"fgraph: {line}", file=sys.stderr)
    return 2


def _example_options(name: str, module, words: list, show_help: bool = False) -> tuple:
    """(keywords for the example's ``run`` parsed from ``words``, 0), or (None, exit status) after a mistake or the
    help."""
    parser, own = _example_parser(name, module)
    if show_help:
        parser.print_help()
        return None, 0
    if words and not own:
        return None, _say(f"example {name!r} takes no options of its own, got {' '.join(words)}")
    try:
        parsed = parser.parse_args(words)
    except SystemExit as stop:  # argparse said the mistake (exit status 2)
        return None, int(stop.code or 0)
    return {dest: getattr(parsed, dest) for dest in own}, 0


def _claim(out: Path, name: str, given: bool) -> None:
    """Make ``out`` if need be and mark it as ``name``'s, unless it holds the results of another example
    (:class:`_Mistake`, before anything is written)."""
    where = f"--out {out}" if given else f"{out}"
    problem = _out_problem(out)
    if problem:
        raise _Mistake(f"{where}: {problem}" if given else f"cannot write the results into {out}: {problem} "
                       "with --out DIR")
    owner = _owner(out) if out.is_dir() else None
    if owner is not None and owner != name:
        raise _Mistake(f"{where} holds the results of example {owner!r}; give {name!r} a directory of its own"
                       + ("" if given else " with --out DIR"))
    try:
        out.mkdir(parents=True, exist_ok=True)
        if _recorded_example(out / MARKER) != name:
            write_json(out / MARKER, {"example": name})  # atomically: another run reads no marker or a whole one
    except OSError as error:
        raise _Mistake(f"{where}: cannot write there ({error.strerror}); give a directory you can write to") \
            from None


def _owner(out: Path) -> str | None:
    """The example whose results the directory ``out`` holds: the one its marker names, else the one its
    summary.json records (a run from before the marker), else None (empty, or results that do not say whose: they
    are not guessed, and the directory is adopted)."""
    return _recorded_example(out / MARKER) or _recorded_example(out / "summary.json")


def _recorded_example(path: Path) -> str | None:
    """The example a JSON file records under ``"example"`` (as ``fgraph run`` spells it), or None."""
    try:
        recorded = json.loads(path.read_text())
    except (OSError, ValueError):  # missing, unreadable or not JSON: it records nothing
        return None
    example = recorded.get("example") if isinstance(recorded, dict) else None
    return example.replace("_", "-") if isinstance(example, str) and example else None


def _is_users_mistake(error: FgraphError) -> bool:
    """Whether an error an example raised is a mistake in its options or its directory, not a failure of its
    computation: an option the run cannot use, a directory of results made with other settings, or a directory
    that cannot be written (each message names the option or directory, and what to do)."""
    from fgraph_experiments._replications import ReplicationsMismatchError
    from fgraph.store import StoreError, StoreMismatchError

    return isinstance(error, (examples.OptionError, ReplicationsMismatchError, StoreMismatchError, StoreError))


def _os_error_line(name: str, error: OSError, out: Path, extra: dict) -> str | None:
    """The line saying ``error`` if it is about a path the user gave: ``out`` or a path in it (the results cannot
    be written: no space, no permission), or a file option of the example; None for a path of the example's own."""
    results = Path(os.path.abspath(out))
    given = [Path(os.path.abspath(value)) for value in extra.values() if isinstance(value, (str, Path))]
    reason = error.strerror or str(error)
    for filename in (error.filename, error.filename2):
        if filename is None or isinstance(filename, int):
            continue
        path = Path(os.path.abspath(os.fsdecode(filename)))
        if path == results or results in path.parents:
            return (f"{path}: {reason}; example {name!r} stopped writing its results into {out}: free space or "
                    "make it writable, or give another --out")
        if path in given:
            return f"{path}: {reason}; example {name!r} stopped: check the file given to it"
    return None


def _is_terminal(stream) -> bool:
    """Whether ``stream`` is an interactive terminal (False for pipes, files and captured streams)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def main(argv: list | None = None) -> int:
    """The command line on ``argv`` (default ``sys.argv[1:]``); returns the exit status (module docstring)."""
    try:
        return _main(sys.argv[1:] if argv is None else list(argv))
    except KeyboardInterrupt:  # Ctrl-C: what was kept on disk stays; a rerun of a resumable example continues
        print("\nfgraph: interrupted", file=sys.stderr)
        return 130
    except SystemExit as stop:  # argparse: --version or a help (0), or a usage mistake it said (2)
        if stop.code is None or isinstance(stop.code, int):
            return stop.code or 0
        print(stop.code, file=sys.stderr)
        return 1


def _main(argv: list) -> int:
    parser = build_parser()
    arguments, rest = parser.parse_known_args(argv)
    if arguments.command == "list":
        if rest:
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
        return list_examples()
    if arguments.command == "run":
        if arguments.example is None:
            if arguments.help:
                _run_parser().print_help()
                return 0
            return _say("name the example to run, as in `fgraph run quickstart`; `fgraph list` shows them all")
        return run_example(arguments.example, arguments.quick, arguments.out, arguments.progress, rest,
                           show_help=arguments.help)
    if arguments.command == "vad":
        return vad_command(arguments, rest)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    parser.print_help()
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
