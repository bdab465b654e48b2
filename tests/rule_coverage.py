"""Which registered rules and average energies the test suite runs.

Every message rule, marginal rule, plate rule and average energy that the
project registers (the functions under ``rules/`` and ``nodes/``) must run
inside at least one test that passes; the tests compare values (the table
tests of ``tests/rules/tables.py`` call rules through the registry and
compare every parameter, the node and model tests compare energies and free
energies with quadrature, closed forms and references), so a rule that no
passing test runs is a rule whose values nothing checks.

How a call is seen: every rule the engine or a table test calls goes through
:class:`fgraph.registry.BoundRule` (also the wrappers that distribute a
mixture over its components or read point-mass messages as clamped values
call the inner rule's ``BoundRule``). :func:`install` wraps its
``__call__`` once, for the test session, to record the function called; the
hooks in ``tests/conftest.py`` keep the calls made by each test and add them
to the reached set when that test passes. A new rule that gets a table case
through ``tests/rules/tables.py`` is therefore counted without anything
being listed here.

The judgement (``tests/test_rule_coverage.py``) is only meaningful when the
whole suite ran: ``tests/conftest.py`` records whether every test module was
collected and nothing was deselected, and the check skips otherwise. When the
suite runs in several worker processes (pytest-xdist, ``-n``), each worker
reaches only the rules of its share of the tests: each sends its record to the
controller, which judges the union at the end of the session (the run fails
with the report when a rule is unreached).
"""
from __future__ import annotations

from pathlib import Path

from fgraph import registry

#: Modules whose registered functions are the project's own (tests register probes of their own).
PROJECT_PACKAGES = ("fgraph.rules.", "fgraph.nodes.")

TESTS = Path(__file__).resolve().parent


class Recorder:
    """The functions called through the registry during the current test, and those reached by passing tests."""

    def __init__(self):
        self.current: set = set()
        self.reached: set = set()
        self.whole_suite = False
        self.why_not_whole = "the collection did not finish"
        self.skipped_modules: set = set()  # test modules skipped as a whole at collection (a missing optional package)

    def called(self, function) -> None:
        self.current.add(function)

    def start_test(self) -> None:
        self.current = set()

    def test_passed(self) -> None:
        self.reached |= self.current


RECORDER = Recorder()
_installed = False


def install() -> None:
    """Record every call of a registered function through :class:`~fgraph.registry.BoundRule` or the engine (idempotent)."""
    global _installed
    if _installed:
        return
    call = registry.BoundRule.__call__

    def recording_call(self, inputs, node, index=None):
        RECORDER.called(self.function)
        return call(self, inputs, node, index)

    registry.BoundRule.__call__ = recording_call
    # the engine calls rules with their arguments fetched from its state, past BoundRule.__call__
    from fgraph.calls import Call

    run = Call.run

    def recording_run(self, state, node_plan):
        RECORDER.called(self.registered)
        return run(self, state, node_plan)

    Call.run = recording_run
    _installed = True


def registered() -> dict:
    """Every function the project registers: function -> description ``kind node.target (inputs)``."""
    registry.load_rule_packages()
    functions = {}
    for (kind, node_type, target, names, operator), entry in registry._REGISTRY.items():
        for families, (function, *_rest) in entry.meta.items():
            if not function.__module__.startswith(PROJECT_PACKAGES):
                continue
            inputs = ", ".join(f"{n}: {getattr(f, '__name__', f)}" for n, f in zip(names, families))
            where = node_type.__name__ if target is None else f"{node_type.__name__}.{target}"
            suffix = f" [operator {operator!r}]" if operator else ""
            functions[function] = f"{kind} {where}({inputs}){suffix}"
    return functions


def names(functions) -> set:
    """``module.qualname`` of each function: what a worker process sends of its record (functions do not travel)."""
    return {f"{function.__module__}.{function.__qualname__}" for function in functions}


def unreached_report(reached: set) -> str:
    """The registered functions not in ``reached`` (functions, or their :func:`names`), grouped by module ('' when
    there are none)."""
    reached = {item if isinstance(item, str) else next(iter(names([item]))) for item in reached}
    by_module: dict = {}
    for function, description in registered().items():
        if next(iter(names([function]))) not in reached:
            by_module.setdefault(function.__module__, []).append(f"{function.__qualname__}  <- {description}")
    lines = []
    for module in sorted(by_module):
        lines.append(f"{module}:")
        lines.extend(f"    {entry}" for entry in sorted(by_module[module]))
    return "\n".join(lines)


def suite_modules() -> set:
    """Every test module of the suite (the files pytest collects from ``tests/``)."""
    return {path.resolve() for path in TESTS.rglob("test_*.py")}


def judge_worker_records(records: list) -> tuple:
    """The judgement of a run on several workers from what each sent (``rules_reached``: :func:`names`,
    ``whole_suite``, ``why_not_whole``): ``(judged, report)``, with ``judged`` False (and the reason as ``report``)
    when some worker did not see the whole suite, else the :func:`unreached_report` of the union of their records
    ('' when every registered function was reached)."""
    partial = [record.get("why_not_whole", "a worker sent no record") for record in records
               if not record.get("whole_suite")]
    if partial:
        return False, partial[0]
    return True, unreached_report(set().union(*(record["rules_reached"] for record in records)))
