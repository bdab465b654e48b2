"""Session hooks: record which registered rules the passing tests run (see :mod:`tests.rule_coverage`)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests import rule_coverage

rule_coverage.install()

#: The check that judges the record; it runs after every other test.
COVERAGE_CHECK = "test_rule_coverage.py"


def pytest_collection_modifyitems(session, config, items):
    last = [item for item in items if Path(str(item.fspath)).name == COVERAGE_CHECK]
    items[:] = [item for item in items if item not in last] + last


def pytest_deselected(items):
    if items:
        rule_coverage.RECORDER.deselected = True


def pytest_collection_finish(session):
    recorder = rule_coverage.RECORDER
    collected = {Path(str(item.fspath)).resolve() for item in session.items}
    missing = rule_coverage.suite_modules() - collected
    if hasattr(session.config, "workerinput"):
        recorder.whole_suite, recorder.why_not_whole = False, "tests run in several worker processes"
    elif getattr(recorder, "deselected", False):
        recorder.whole_suite, recorder.why_not_whole = False, "some tests were deselected"
    elif session.testsfailed:
        recorder.whole_suite, recorder.why_not_whole = False, "some test modules failed to import"
    elif missing:
        example = sorted(str(p.relative_to(rule_coverage.TESTS.parent)) for p in missing)[:3]
        recorder.whole_suite = False
        recorder.why_not_whole = f"{len(missing)} test module(s) were not collected (e.g. {', '.join(example)})"
    else:
        recorder.whole_suite, recorder.why_not_whole = True, ""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    rule_coverage.RECORDER.start_test()
    yield


def pytest_runtest_logreport(report):
    # the rules a test ran count once its call has passed
    if report.when == "call" and report.passed:
        rule_coverage.RECORDER.test_passed()


@pytest.fixture(params=["numpy", "compiled"])
def recursion_path(request):
    """Run a test on both paths of the chains' recursions: the numpy scans and the compiled loops (fgraph.jit)."""
    from fgraph import jit

    if request.param == "compiled" and not jit.AVAILABLE:
        pytest.skip("numba is not installed (the fast extra): no compiled loops to test")
    with jit.compiled_loops(request.param == "compiled"):
        yield request.param
