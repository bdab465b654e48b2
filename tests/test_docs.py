"""The docs run as written and quote what the code prints.

Every fenced block in README.md and docs/**/*.md names its language, and the
language (with an HTML comment on the line before the fence) says what is
done with it:

* Every ```python block runs on its own, in a fresh namespace, in a
  temporary directory, with what it prints captured: it holds its imports
  and the data it needs, so a reader can paste any one block and run it.
* A ```python block that shows part of a file of the repository rather than
  a program (the node, its rules and its test in docs/adding-a-node.md) is
  marked ``<!-- excerpt: <path> -->``. It is not run: its lines, comments and
  blank lines aside, must occur in that file in order, so the excerpt shows
  the code the suite tests.
* ```text blocks are not run (formulas, directory trees, error messages). An
  output listing is marked: ``<!-- output -->`` means it is what the python
  blocks above it (since the previous listing) print;
  ``<!-- output: fgraph run <example> [--quick] -->`` means it is what that
  command prints: the printed text line by line, where a line ``...``
  stands for any number of lines left out (timings, round-off, lines the
  page does not discuss).
* ```bash blocks are not run: they install the package or run the examples,
  and the command line is tested in tests/test_cli.py.

Numbers in the prose come from runs too: every tuple of numbers with a
decimal point, such as "(0.172, 0.507, 0.322)", must also appear in the
page's python code or in one of its checked listings. (docs/benchmarks.md is
exempt: its numbers are measurements on the machine it names, made by the
scripts in benchmarks/.)

Two listings are checked only on request: the full `fgraph run mixed-model`
takes 15-25 s and the full `fgraph run faithful` about 30 s, too long for
every test run (SLOW_COMMANDS). Set FGRAPH_TEST_FULL_EXAMPLES=1
to check it against the command; without it, its numbers are checked against
the example's numpy reference computations on the same data (a fraction of a
second), and the engine's agreement with those references is tested on the
quick run (tests/examples/test_mixed_model_example.py).
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from tests.cli_runs import fgraph_command

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted(str(path.relative_to(ROOT)) for path in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])

# commands whose listings are checked against a run only with FGRAPH_TEST_FULL_EXAMPLES=1, and why
SLOW_COMMANDS = {
    "fgraph run mixed-model": "the full mixed-model run takes 15-25 s; set FGRAPH_TEST_FULL_EXAMPLES=1 to check its "
                              "listing against a run (its numbers are checked against numpy references by default)",
    "fgraph run faithful": "the full faithful run builds a TVB table of 10,200 fits (about 30 s); set "
                           "FGRAPH_TEST_FULL_EXAMPLES=1 to check its listing against a run (the quick run is tested "
                           "in tests/examples/test_faithful_example.py)",
}
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<language>[^`\s]*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*(?P<kind>excerpt|output)\s*(?::\s*(?P<argument>.*?))?\s*-->\s*$")
# a tuple of two or more numbers, not the arguments of a function such as N(0.5, 1)
NUMBER = r"\s*[−-]?\d+(?:\.\d+)?(?:e[−-]?\d+)?\s*"
TUPLE = re.compile(rf"(?<![\w\]])\(({NUMBER}(?:,{NUMBER})+)\)")


@dataclass
class Block:
    """A fenced block: its language, its marker comment (kind, argument) if any, its text, the fence's line."""

    language: str
    marker: tuple | None
    text: str
    line: int


def blocks_of(page: str) -> list:
    """The fenced blocks of ``page`` in order, their text dedented by the fence's indentation."""
    lines = (ROOT / page).read_text().splitlines()
    found, number = [], 0
    while number < len(lines):
        opening = FENCE.match(lines[number])
        if not opening:
            number += 1
            continue
        indent = len(opening["indent"])
        previous = next((line for line in reversed(lines[:number]) if line.strip()), "")
        marker = MARKER.match(previous)
        if not marker and previous.strip().startswith("<!--"):
            marker = {"kind": "unknown", "argument": previous.strip()}
        fence_line, body, number = number + 1, [], number + 1
        while number < len(lines) and not FENCE.match(lines[number]):
            line = lines[number]
            body.append(line[indent:] if not line[:indent].strip() else line.lstrip())
            number += 1
        assert number < len(lines), f"{page}: the block opened at line {fence_line} is never closed"
        found.append(Block(opening["language"], (marker["kind"], marker["argument"]) if marker else None,
                           "\n".join(body) + "\n", fence_line))
        number += 1  # the closing fence
    return found


def assert_listing(quoted: str, printed: str, where: str) -> None:
    """``quoted`` is ``printed`` line by line, a line ``...`` standing for any number of lines.

    Trailing spaces and blank lines at either end are ignored.
    """
    pattern = "".join(r"(?:[^\n]*\n)*?" if line.strip() == "..." else re.escape(line.rstrip()) + r"\n"
                      for line in quoted.strip("\n").splitlines())
    text = "".join(line.rstrip() + "\n" for line in printed.strip("\n").splitlines())
    assert re.fullmatch(pattern, text), (
        f"{where}: the listing is not what was printed.\n--- quoted:\n{quoted}\n--- printed:\n{printed}")


@pytest.mark.parametrize("page", PAGES)
def test_every_block_names_its_language_and_its_marker_fits(page):
    for block in blocks_of(page):
        where = f"{page}, block at line {block.line}"
        assert block.language, f"{where} has no language; use ```python (run), ```text (not run) or ```bash"
        kind = block.marker[0] if block.marker else None
        assert kind != "unknown", (f"{where}: {block.marker[1]} is not a marker of these tests; "
                                   "use <!-- excerpt: <path> -->, <!-- output --> or <!-- output: fgraph run ... -->")
        assert kind != "excerpt" or block.language == "python", f"{where}: an excerpt is a ```python block"
        assert kind != "output" or block.language == "text", f"{where}: an output listing is a ```text block"


@pytest.mark.parametrize("page", [page for page in PAGES if any(b.language == "python" for b in blocks_of(page))])
def test_python_blocks_run_and_print_what_the_page_shows(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    printed = io.StringIO()
    for block in blocks_of(page):
        where = f"{page}, block at line {block.line}"
        if block.language == "python" and block.marker is None:
            namespace = {}  # each block alone, as a reader pastes it
            with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
                exec(compile(block.text, where, "exec"), namespace)
        elif block.marker == ("output", None):
            assert_listing(block.text, printed.getvalue(), where)
            printed = io.StringIO()


def marked(kind: str) -> list:
    """``(page, block)`` for every block with a ``kind`` marker, as pytest parameters."""
    return [pytest.param(page, block, id=f"{page}:{block.line}")
            for page in PAGES for block in blocks_of(page) if block.marker and block.marker[0] == kind]


def code_lines(text: str) -> list:
    """The lines of Python source ``text``, stripped, without comments, blank lines and ``...`` lines."""
    lines = text.splitlines()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            row, column = token.start
            lines[row - 1] = lines[row - 1][:column]
    return [line.strip() for line in lines if line.strip() not in ("", "...")]


@pytest.mark.parametrize("page, block", marked("excerpt"))
def test_excerpts_are_the_code_they_show(page, block):
    source = ROOT / block.marker[1]
    assert source.is_file(), f"{page}, line {block.line}: the excerpt names {block.marker[1]}, which does not exist"
    remaining = iter(code_lines(source.read_text()))
    for line in code_lines(block.text):
        assert any(line == other for other in remaining), (
            f"{page}, line {block.line}: {line!r} is not in {block.marker[1]} (or not in this order)")


@pytest.mark.parametrize("page, block", [p for p in marked("output") if p.values[1].marker[1]])
def test_command_listings_are_what_the_command_prints(page, block):
    command = block.marker[1]
    if command in SLOW_COMMANDS and not os.environ.get("FGRAPH_TEST_FULL_EXAMPLES"):
        pytest.skip(SLOW_COMMANDS[command])
    completed = fgraph_command(command)
    assert completed.returncode == 0, completed.stderr
    assert_listing(block.text, completed.stdout, f"{page}, line {block.line} ({command})")


@pytest.mark.parametrize("page", [page for page in PAGES if page != "docs/benchmarks.md"])
def test_numbers_in_the_prose_come_from_checked_listings(page):
    def is_checked(block):
        return (block.language == "python" and block.marker is None) or (block.marker or ("",))[0] == "output"

    checked = "\n".join(block.text for block in blocks_of(page) if is_checked(block))
    checked = " ".join(checked.replace("−", "-").split())
    prose = re.sub(r"```.*?```", "", (ROOT / page).read_text(), flags=re.S)
    for match in TUPLE.finditer(prose):
        numbers = [number.strip().replace("−", "-") for number in match[1].split(",")]
        if all(re.fullmatch(r"-?\d+", number) for number in numbers):
            continue  # integers: shapes and indices, not results
        assert ", ".join(numbers) in checked, (
            f"{page}: {match[0]} is quoted in the text but printed by none of the page's checked listings or code")


def test_full_mixed_model_listing_equals_the_numpy_references():
    """The listing of the full `fgraph run mixed-model`, recomputed without the engine on the run's data.

    Every number of the two method sections comes from the example's numpy
    computations (the quadrature mixture density or the moment-matched
    Gaussian, averaging in closed form, coordinate ascent for the
    combination); the engine's own values, printed before the brackets,
    equal them to the printed digits (tested on the quick run in
    tests/examples/test_mixed_model_example.py).
    """
    from fgraph.examples import mixed_model as example

    def show(values):
        return "(" + ", ".join(f"{v:.1e}" if 0 < v < 1e-4 else f"{v:.4f}" for v in values) + ")"

    page = "docs/examples/mixed-model.md"
    listing = next(block.text for block in blocks_of(page) if block.marker == ("output", "fgraph run mixed-model"))
    y = example.simulate(example.SIZE, np.random.default_rng(example.SEED))
    true_fit = np.mean(-0.5 * (np.log(2 * np.pi) + y**2))
    header = f"Mixed model y = a·b + c, c ∈ {example.SHIFTS.tolist()}, fitted to N = {y.size} draws of N(0, 1)"
    expected = [header, "..."]  # the density check's line is the quick run's (the same first 100 draws)
    for label, density in (("grid density (default)", example.log_product_density_grid),
                           ("moment matching N(0, 1.25)", example.log_product_density_moment_matched)):
        loglik = example.shifted_log_likelihoods(y, density)
        posterior, log_evidence = example.direct_averaging(loglik)
        weights = example.direct_combination(loglik, example.ITERATIONS)
        change = np.max(np.abs(weights - example.direct_combination(loglik, example.ITERATIONS - 1)))
        averaging_fit = example.mean_log_predictive(y, posterior, loglik)
        combination_fit = example.mean_log_predictive(y, weights, loglik)
        expected += [
            f"  {label}:",
            f"    averaging   p(c | y)  = {show(posterior)}   log p(y) = {log_evidence:.4f}   "
            f"[direct numpy: {show(posterior)}, log p(y) = {log_evidence:.4f}]",
            f"    combination E_q[π]    = {show(weights)}   after {example.ITERATIONS} iterations "
            f"(last change {change:.1e}) [numpy CAVI: {show(weights)}]",
            f"    mean log predictive density of the data: averaging {averaging_fit:.4f}, "
            f"combination {combination_fit:.4f} (true N(0, 1): {true_fit:.4f})",
        ]
    assert_listing("\n".join(expected + ["..."]), listing, f"{page}, the listing of the full run")


def test_readme_example_is_the_quickstart(tmp_path, monkeypatch):
    """The README's example is the two models of `fgraph run quickstart` on its data: they print the same numbers."""
    from fgraph.examples import quickstart

    monkeypatch.chdir(tmp_path)
    namespace = {}
    with contextlib.redirect_stdout(io.StringIO()):
        for block in blocks_of("README.md"):
            if block.language == "python" and block.marker is None:
                exec(compile(block.text, "README.md", "exec"), namespace)
        y = quickstart.simulate(quickstart.SIZE, np.random.default_rng(quickstart.SEED))
        known_precision = quickstart.unknown_mean(y)
        unknown_precision = quickstart.unknown_mean_and_precision(y, iterations=50)
    np.testing.assert_array_equal(namespace["y"], y)
    readme = (ROOT / "README.md").read_text()
    assert (f"E[mu] = {known_precision['posterior_mean']:.6f}, "
            f"log p(y) = {known_precision['log_evidence']:.6f}") in readme
    np.testing.assert_allclose(namespace["result"].free_energy, unknown_precision["free_energy"], rtol=1e-12)
