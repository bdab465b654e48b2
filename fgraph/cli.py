"""The ``fgraph`` command line (also ``python -m fgraph``).

::

    fgraph list                              # the examples, one line each
    fgraph run quickstart                    # run one, files go to out/quickstart/
    fgraph run quickstart --quick --out DIR  # the seconds-long version, files to DIR
    fgraph --version

On a terminal, ``fgraph run`` shows progress bars on stderr for the long
steps of an example (with tqdm installed); piped, redirected or under CI
(no terminal) it prints only the results. ``--progress`` / ``--no-progress`` override that choice.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import fgraph
from fgraph import examples
from fgraph.errors import FgraphError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fgraph",
        description="Message passing on Forney-style factor graphs: run the bundled examples.",
    )
    parser.add_argument("--version", action="version", version=f"fgraph {fgraph.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser("list", help="list the examples with a one-line description each")
    run = commands.add_parser("run", help="run an example and write its results to a directory")
    run.add_argument("example", help="example name (see `fgraph list`)")
    run.add_argument("--quick", action="store_true", help="small version that finishes in seconds")
    run.add_argument("--out", type=Path, default=None, metavar="DIR",
                     help="directory for the example's files (default: out/<example>)")
    run.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                     help="progress bars on stderr (needs tqdm; default: only when stderr is a terminal)")
    return parser


def list_examples() -> int:
    found = examples.available()
    if not found:
        print("no examples found")
        return 1
    width = max(len(name) for name in found)
    for name, description in found.items():
        print(f"{name:<{width}}  {description}")
    return 0


def run_example(name: str, quick: bool, out: Path | None, progress: bool | None = None,
                options: list | None = None) -> int:
    """Run example ``name``; ``progress=None`` shows progress bars when stderr is a terminal.

    ``options``: the command line's words after the common ones, parsed by the example's own
    ``add_arguments(parser)`` (e.g. ``fgraph run vad --snr 5``) and passed to its ``run`` as keywords.
    """
    try:
        module = examples.load(name)
    except KeyError as error:
        print(f"fgraph: {error.args[0]}", file=sys.stderr)
        return 2
    extra, code = _example_options(name, module, options or [])
    if extra is None:
        return code
    out = Path("out") / name if out is None else out
    out.mkdir(parents=True, exist_ok=True)
    if progress is None:
        progress = _is_terminal(sys.stderr)
    start = time.perf_counter()
    try:
        module.run(quick=quick, out=out, progress=progress, **extra)
    except FgraphError as error:
        print(f"fgraph: example {name!r} failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    elapsed = time.perf_counter() - start
    written = sorted(p.name for p in out.iterdir() if p.is_file())
    print(f"\n{name}: finished in {elapsed:.1f} s; files in {out}/: {', '.join(written) or '(none)'}")
    return 0


def _example_options(name: str, module, words: list) -> tuple:
    """(keywords for the example's ``run`` parsed from ``words``, 0), or (None, exit code) after an error or help."""
    add_arguments = getattr(module, "add_arguments", None)
    if add_arguments is None:
        if words:
            print(f"fgraph: example {name!r} takes no options of its own, got {' '.join(words)}", file=sys.stderr)
            return None, 2
        return {}, 0
    parser = argparse.ArgumentParser(prog=f"fgraph run {name}", description=getattr(module, "DESCRIPTION", None))
    add_arguments(parser)
    try:
        return vars(parser.parse_args(words)), 0
    except SystemExit as stop:  # argparse printed the error (code 2) or the help (code 0)
        return None, int(stop.code or 0)


def _is_terminal(stream) -> bool:
    """Whether ``stream`` is an interactive terminal (False for pipes, files and captured streams)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def main(argv: list | None = None) -> int:
    parser = build_parser()
    arguments, rest = parser.parse_known_args(argv)
    if arguments.command == "list":
        if rest:
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
        return list_examples()
    if arguments.command == "run":
        return run_example(arguments.example, arguments.quick, arguments.out, arguments.progress, rest)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    parser.print_help()
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
