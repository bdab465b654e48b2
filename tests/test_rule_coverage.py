"""Every registered rule and average energy runs in at least one passing test (see :mod:`tests.rule_coverage`).

This check runs last (``tests/conftest.py`` moves it there) and judges only
a run of the whole suite, ``python -m pytest -q``: a run of some tests
reaches only some rules, so it then skips and says why. A rule listed here
needs a table case (``tests/rules/<node>/test_<interface>.py`` through
``tests/rules/tables.py``), an energy a node test, with values worked out
by hand or by an independent oracle.
"""
import pytest

from tests import rule_coverage


def test_every_registered_rule_and_energy_is_reached_by_a_passing_test(request):
    recorder = rule_coverage.RECORDER
    if hasattr(request.config, "workerinput"):
        pytest.skip("the suite runs in several worker processes: the controller judges their records together at "
                    "the end of the session (tests/conftest.py)")
    if not recorder.whole_suite:
        pytest.skip(f"judges a run of the whole suite only ({recorder.why_not_whole}); run `python -m pytest -q`")
    report = rule_coverage.unreached_report(recorder.reached)
    assert not report, "registered functions that no passing test runs, by module:\n" + report


def test_the_record_sees_rules_called_through_the_registry():
    """The recorder sees a rule the way a table test calls it (and the registry lists it)."""
    from fgraph.families import PointMass
    from fgraph.nodes.addition import Addition
    from fgraph.rules.addition import in1
    from tests.rules.tables import message

    functions = rule_coverage.registered()
    assert in1.observed_out_constant_in2 in functions
    assert "Addition.in1(q_in2: PointMass, q_out: PointMass)" in functions[in1.observed_out_constant_in2]
    rule_coverage.RECORDER.start_test()
    message(Addition, "in1", {"q_out": PointMass(5.0), "q_in2": PointMass(2.0)})
    assert rule_coverage.RECORDER.current == {in1.observed_out_constant_in2}
    report = rule_coverage.unreached_report(set(functions) - {in1.observed_out_constant_in2})
    assert report == "fgraph.rules.addition.in1:\n    observed_out_constant_in2  <- " + functions[in1.observed_out_constant_in2]


def test_the_records_of_several_workers_are_judged_together():
    """Under pytest-xdist each worker reaches the rules of its share of the tests: the union is judged."""
    names = sorted(rule_coverage.names(rule_coverage.registered()))
    first, second = names[: len(names) // 2], names[len(names) // 2:]
    whole = {"whole_suite": True, "why_not_whole": ""}
    assert rule_coverage.judge_worker_records([{**whole, "rules_reached": first},
                                               {**whole, "rules_reached": second}]) == (True, "")
    judged, report = rule_coverage.judge_worker_records([{**whole, "rules_reached": first},
                                                         {**whole, "rules_reached": second[1:]}])
    assert judged and second[0].rpartition(".")[2] in report and not any(name.rpartition(".")[2] + "  <-" in report
                                                                        for name in second[1:2])
    assert rule_coverage.judge_worker_records([{**whole, "rules_reached": names},
                                               {"whole_suite": False, "why_not_whole": "some tests were deselected"}]
                                              ) == (False, "some tests were deselected")
