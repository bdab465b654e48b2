"""Compilation and runs hand their new objects to the collector's oldest generation, safely.

``fg.compile`` and ``fg.run`` pause the cyclic garbage collector and, on
exit, move the objects they allocated (plan, messages) to its oldest
generation (:func:`fgraph.collection.promote_young_objects`) instead of
leaving them for the young collections to walk again. These tests check
that this happens for a large batch, that it never touches objects the
program froze itself, that it stops at the limit between two full
collections, that a user's disabled collector stays disabled, and that a
dropped model is still collected. The numbers inferred do not depend on it:
the value tests of the suite run with it in place, and one test here
compares a chain's marginals with promotion switched off.
"""
import gc
import weakref

import pytest

import fgraph as fg
import fgraph.collection as collection
from fgraph.nodes import Normal


def chain(length):
    with fg.Model() as model:
        state = Normal("x1", mean=0.0, var=1.0)
        Normal("y1", mean=state, var=1.0, observed=0.5)
        for t in range(2, length + 1):
            state = Normal(f"x{t}", mean=state, var=0.5)
            Normal(f"y{t}", mean=state, var=1.0, observed=0.1 * t)
    return model


def in_oldest_generation(obj) -> bool:
    return any(item is obj for item in gc.get_objects(generation=2))


@pytest.fixture
def small_batches(monkeypatch):
    """Promote batches of a test-sized model; count promotions from a fresh full collection."""
    monkeypatch.setattr(collection, "PROMOTE_AT", 50)
    gc.collect()
    assert gc.isenabled()


def test_a_large_batch_reaches_the_oldest_generation(small_batches):
    model = chain(30)
    plan = fg.compile(model, algorithm="bp")
    assert in_oldest_generation(plan)
    assert gc.get_count()[0] < 50  # the young generation starts empty again
    result = fg.run(plan)
    assert in_oldest_generation(result)


def test_a_small_batch_is_left_to_the_young_collections(monkeypatch):
    monkeypatch.setattr(collection, "PROMOTE_AT", 10**9)
    gc.collect()
    plan = fg.compile(chain(30), algorithm="bp")
    assert not in_oldest_generation(plan)


def test_objects_the_program_froze_stay_frozen(small_batches):
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        plan = fg.compile(chain(30), algorithm="bp")
        assert gc.get_freeze_count() >= frozen
        assert not in_oldest_generation(plan)
    finally:
        gc.unfreeze()


def test_promotion_stops_at_the_limit_until_a_full_collection(small_batches, monkeypatch):
    monkeypatch.setattr(collection, "PROMOTE_LIMIT", 0)
    plan = fg.compile(chain(30), algorithm="bp")
    assert not in_oldest_generation(plan)
    monkeypatch.setattr(collection, "PROMOTE_LIMIT", 10**9)
    gc.collect()  # a full collection starts a new count
    plan = fg.compile(chain(30), algorithm="bp")
    assert in_oldest_generation(plan)


def test_a_disabled_collector_stays_disabled_and_untouched(small_batches):
    gc.disable()
    try:
        plan = fg.compile(chain(30), algorithm="bp")
        assert not gc.isenabled()
        assert not in_oldest_generation(plan)
    finally:
        gc.enable()


def test_a_dropped_model_is_still_collected(small_batches):
    model = chain(30)
    result = fg.run(fg.compile(model, algorithm="bp"))
    assert in_oldest_generation(result)
    gone = weakref.ref(model)
    del model, result
    gc.collect()
    assert gone() is None


def test_promotion_does_not_change_the_marginals(small_batches, monkeypatch):
    promoted = fg.infer(chain(30))
    monkeypatch.setattr(collection, "PROMOTE_AT", 10**9)
    fresh = fg.infer(chain(30))
    for t in range(1, 31):
        a, b = promoted.marginal(f"x{t}"), fresh.marginal(f"x{t}")
        assert float(a.mean) == float(b.mean) and float(a.var) == float(b.var)
    assert promoted.log_evidence == fresh.log_evidence


def test_the_messages_a_reading_computes_reach_the_oldest_generation():
    """On a tree the sweep goes towards the evidence reader; a marginal read later computes the messages it
    needs, which stay with the result: they are handed over however few they are."""
    gc.collect()
    result = fg.run(fg.compile(chain(30), algorithm="bp"))
    assert result.plan.on_demand
    result.marginal("x30")
    assert in_oldest_generation(result.messages("x30", "out")[0])


def _young_collections() -> int:
    return gc.get_stats()[0]["collections"]


def test_building_a_model_runs_no_collection_and_hands_its_objects_over(small_batches):
    """Inside a ``with fg.Model()`` block the collector waits: the statements' variables and nodes stay with
    the model, and a collection while they accumulate would walk them again."""
    gc.set_threshold(1, 1, 1)  # a collection at every allocation, were the collector running
    try:
        with fg.Model() as model:
            assert not gc.isenabled()
            before = _young_collections()
            x = Normal("x", mean=0.0, var=1.0)
            for t in range(60):
                Normal(f"y{t}", mean=x, var=1.0, observed=0.1 * t)
            assert _young_collections() == before
    finally:
        gc.set_threshold(700, 10, 10)
    assert gc.isenabled()
    assert in_oldest_generation(model)


def test_the_collector_runs_again_after_a_failed_or_nested_block():
    with pytest.raises(fg.ModelError):
        with fg.Model():
            Normal("x", mean=0.0, var=-1.0)
    assert gc.isenabled()
    with fg.Model() as outer:
        with outer:  # the same model entered again inside its own block
            Normal("x", mean=0.0, var=1.0)
        with fg.Model():
            Normal("z", mean=0.0, var=1.0)
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()  # a program's own choice is kept
    try:
        with fg.Model():
            Normal("x", mean=0.0, var=1.0)
        assert not gc.isenabled()
    finally:
        gc.enable()
