"""Python's cyclic garbage collector around compilation and runs.

Compiling a graph and running it allocate many small objects (sockets,
steps, messages) that stay alive as long as the plan or the result does;
every automatic collection while they accumulate walks all of them again.
:func:`cycle_collection_paused` pauses the collector for such a section and
hands what it left behind to the oldest generation in one step.
"""
from __future__ import annotations

import gc

#: A compilation or run that leaves at least this many new objects to the cycle collector hands them to its
#: oldest generation at once (see :func:`cycle_collection_paused`); fewer are left to the young collections.
PROMOTE_AT = 10_000
#: At most this many objects are handed over between two full collections; beyond, the collector's own
#: accounting takes over again (it starts a full collection once enough survivors reached the oldest generation).
PROMOTE_LIMIT = 1_000_000


class cycle_collection_paused:
    """Pause Python's cyclic garbage collector while compiling or running (restored on exit).

    Compilation and sweeps allocate many small objects that stay alive as
    long as the plan or the result (sockets, steps, messages); every automatic
    collection while they accumulate walks all of them again, which on a graph
    of 10^4 nodes cost about a third of the time. Reference counting still
    frees what is dropped, and what the collector would have found waits for
    its next pass.

    On exit the new objects are handed to the oldest generation
    (:func:`promote_young_objects`): left in the youngest, the first
    collections after the call would walk all of them once more, and again
    in the middle generation (on a chain of 10^4 nodes, a quarter of the
    time of build + compile + run + reading every marginal). ``promote_at``:
    the fewest new objects worth handing over (default :data:`PROMOTE_AT`; 0 for a
    section whose new objects all stay, such as the messages a reading computes).
    (A class rather than a generator: entered around every run, its own cost counts on a small model.)
    """

    __slots__ = ("promote_at", "enabled")

    def __init__(self, promote_at: int | None = None):
        self.promote_at = promote_at

    def __enter__(self):
        self.enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exception):
        if self.enabled:
            promote_young_objects(self.promote_at)
            gc.enable()
        return False


_promotion = {"full_collections": -1, "promoted": 0}  # objects handed over since the last full collection


def promote_young_objects(promote_at: int | None = None) -> None:
    """Move every object of the young generations to the oldest, without walking them.

    ``gc.freeze()`` moves all tracked objects to the permanent generation and
    ``gc.unfreeze()`` all of those to the oldest generation, in constant time.
    Nothing becomes uncollectable: a full collection (``gc.collect()``, or the
    collector's own, started by the survivors it counts) still examines them.
    It is done only for a batch of at least ``promote_at`` objects (default :data:`PROMOTE_AT`), never when
    the program froze objects itself (unfreezing would release them), and for
    at most ``PROMOTE_LIMIT`` objects between two full collections, so that
    cyclic garbage among them (e.g. models dropped in a loop) cannot pile up
    unseen by the collector's accounting.
    """
    young = gc.get_count()[0]  # tracked objects allocated (less freed) since the last young collection
    if young < max(PROMOTE_AT if promote_at is None else promote_at, 1) or gc.get_freeze_count():
        return
    full_collections = gc.get_stats()[-1]["collections"]
    if full_collections != _promotion["full_collections"]:
        _promotion["full_collections"], _promotion["promoted"] = full_collections, 0
    if _promotion["promoted"] + young > PROMOTE_LIMIT:
        return
    _promotion["promoted"] += young
    gc.freeze()
    gc.unfreeze()
