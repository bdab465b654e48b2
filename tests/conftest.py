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


def pytest_collectreport(report):
    # a module skipped as a whole (pytest.importorskip of an optional package at its top) was collected and
    # judged: its tests cannot run here, and a rule only they reach is reported unreached
    if report.skipped and str(report.nodeid).endswith(".py"):
        rule_coverage.RECORDER.skipped_modules.add((rule_coverage.TESTS.parent / report.nodeid).resolve())


def pytest_deselected(items):
    if items:
        rule_coverage.RECORDER.deselected = True


def pytest_collection_finish(session):
    recorder = rule_coverage.RECORDER
    collected = {Path(str(item.fspath)).resolve() for item in session.items}
    missing = rule_coverage.suite_modules() - collected - recorder.skipped_modules
    if getattr(recorder, "deselected", False):
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


# ------------------------------------------------------------------ several worker processes (pytest-xdist, -n)
#: what each worker sent at its end: its record and whether it collected the whole suite
_WORKER_RECORDS: list = []


def pytest_sessionfinish(session, exitstatus):
    recorder = rule_coverage.RECORDER
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # a worker: the controller judges the union of the workers' records
        workeroutput["rules_reached"] = sorted(rule_coverage.names(recorder.reached))
        workeroutput["whole_suite"] = recorder.whole_suite
        workeroutput["why_not_whole"] = recorder.why_not_whole
        return
    if not _WORKER_RECORDS or exitstatus != 0:
        return  # one process (judged by tests/test_rule_coverage.py), or a run that failed already
    judged, report = rule_coverage.judge_worker_records(_WORKER_RECORDS)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if not judged:
        reporter.write_line(f"rule coverage not judged: {report}")
    elif report:
        reporter.write_line("registered functions that no passing test runs, by module:\n" + report, red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    else:
        reporter.write_line(f"rule coverage: every registered rule and energy is reached by a passing test "
                            f"(the records of {len(_WORKER_RECORDS)} workers)")


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    _WORKER_RECORDS.append(getattr(node, "workeroutput", {}))
