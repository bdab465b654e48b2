"""How any TVB table is built: the split and the bootstrap resamples, the cells' blocks, their executors (this
process, a local process pool, a Dask cluster) and the resumable build in a results store (:mod:`fgraph.store`).

A table's cells are (ω index, role) pairs (:mod:`fgraph.models.tvb.table`: ``FULL``, ``SPLIT``, the resamples).
Cells of equal data size are fitted together as copies of one graph, ``block_size`` cells per graph
(:func:`plan_blocks`); every block is one task, run through a model's *setting* — any object with ``function`` (a
module-level block fit, which a process pool or a cluster pickles by name), ``data`` (its first argument, shared by
every block, scattered once to a cluster) and ``arguments(indices, omegas)`` (the whole argument tuple of one
block) — the same blocks whichever executor runs them, so the same numbers.

With a ``path`` the directory is a results store (:func:`build_table`): every finished block is written at once
(npz, atomically, its content hash and cells in the manifest, the settings its identity); a build interrupted for
any reason, kill -9 included, is resumed by calling it again with the same arguments, and recomputes only the
blocks that were not written, or that are damaged or foreign (reported by name); several processes may build one
directory at once and share its blocks. The last one to finish writes the table
(:meth:`fgraph.models.tvb.table.Table.save`).

Every fitted cell is aligned to one reference fit (:func:`align_components`), so that component k is the same
cluster in every cell. The models' settings and block fits are in :mod:`fgraph.models.tvb.gmm` and
:mod:`fgraph.models.tvb.bmlr`.
"""
from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np

from fgraph.errors import ModelError
from fgraph.models.tvb.errors import CorruptTableError, TableMismatchError, TVBError
from fgraph.models.tvb.table import FULL, SPLIT, TABLE_JSON
from fgraph.store import CorruptRecordWarning, Store, directory_lock, prepare_directory

__all__ = ["draw_split", "draw_resamples", "cell_task", "align_components", "plan_blocks", "job_count",
           "build_table", "assemble_cells"]

START_NPZ, BLOCKS = "start.npz", "blocks"


def draw_split(rng: np.random.Generator, N: int, n_bootstrap: int) -> tuple:
    """A random split into halves X₁ (⌊N/2⌋ points) and X₂ (the rest) and B resamples of X₂ with replacement, each
    of |X₂| points: (split (n₁,), holdout (n₂,), bootstrap (B, n₂)), indices into X."""
    order = rng.permutation(N)
    n1 = N // 2
    split, holdout = np.sort(order[:n1]), np.sort(order[n1:])
    bootstrap = holdout[rng.integers(0, holdout.size, size=(n_bootstrap, holdout.size))]
    return split, holdout, bootstrap


def draw_resamples(seed: int, N: int, n_bootstrap: int, resampling: str, m: int) -> dict:
    """The split and the resamples of a table (``split`` (S, n₁), ``holdout`` (S, n₂), ``bootstrap`` (S, B, n₂);
    S = 1 for ``resampling="common"``, m for ``"per_omega"``), drawn from ``np.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    draws = [draw_split(rng, N, n_bootstrap) for _ in range(1 if resampling == "common" else m)]
    return {key: np.stack([draw[j] for draw in draws]) for j, key in enumerate(("split", "holdout", "bootstrap"))}


def cell_task(N: int, grid: np.ndarray, resampling: str, split: np.ndarray, bootstrap: np.ndarray):
    """``task(cells)`` → (indices (R, n), omegas (R,)) of a block's cells (ω index, role): the whole data, X₁ or a
    resample of X₂ (those of the cell's ω for ``"per_omega"``), at the cell's ω."""
    def cell_indices(i: int, role: int) -> np.ndarray:
        s = 0 if resampling == "common" else i
        if role == FULL:
            return np.arange(N)
        return split[s] if role == SPLIT else bootstrap[s, role - 2]

    def task(cells) -> tuple:
        return np.stack([cell_indices(i, role) for i, role in cells]), grid[cells[:, 0]]

    return task


def align_components(posteriors: dict, reference_mean: np.ndarray, metric: np.ndarray) -> dict:
    """Permute the components of every fit (leading axis R) to the closest match of the reference means."""
    mean = posteriors["mean"]
    R, K, _ = mean.shape
    difference = mean[:, :, None, :] - reference_mean[None, None, :, :]  # (R, K fitted, K reference, d)
    cost = np.einsum("rkji,il,rkjl->rkj", difference, metric, difference)
    if K <= 6:
        permutations = np.array(list(itertools.permutations(range(K))))  # (P, K): reference j ← fitted perm[j]
        totals = cost[:, permutations, np.arange(K)].sum(-1)  # (R, P)
        order = permutations[np.argmin(totals, axis=1)]  # (R, K)
    else:
        from scipy.optimize import linear_sum_assignment

        order = np.empty((R, K), dtype=int)
        for r in range(R):
            fitted, matched = linear_sum_assignment(cost[r])
            order[r, matched] = fitted
    rows = np.arange(R)[:, None]
    return {key: value[rows, order] for key, value in posteriors.items()}


def plan_blocks(m: int, n_bootstrap: int, sizes: tuple, block_size: int) -> list:
    """The blocks: lists of cells (ω index, role) of equal data size, ``block_size`` at most, in a fixed order
    (whole data, then X₁, then the resamples; X₁ and the resamples together when their sizes are equal)."""
    _, n1, n2 = sizes
    groups = [[(i, FULL) for i in range(m)]]
    split = [(i, SPLIT) for i in range(m)]
    resamples = [(i, 2 + b) for i in range(m) for b in range(n_bootstrap)]
    groups += [split + resamples] if n1 == n2 else [split, resamples]
    return [np.array(group[s:s + block_size]) for group in groups for s in range(0, len(group), block_size)]


def _execute(setting, tasks: list, jobs: int, client):
    """Yield (block number, result) as the blocks finish: in this process (``jobs`` = 1, no client), in a local
    process pool of ``jobs`` workers, or on a Dask cluster. ``setting`` is any object with ``function`` (a
    module-level block fit), ``data`` (its first argument, shared by every block) and ``arguments(indices, omegas)``
    (the whole argument tuple of one block): the GMM's (:mod:`fgraph.models.tvb.gmm`) or the BMLR's
    (:mod:`fgraph.models.tvb.bmlr`)."""
    if client is not None:
        yield from _execute_dask(setting, tasks, client)
        return
    if jobs == 1:
        for number, indices, omegas in tasks:
            yield number, setting.function(*setting.arguments(indices, omegas))
        return
    from concurrent.futures import as_completed

    # joblib's own reusable executor: loky's, taken directly, would replace the one joblib.Parallel shares
    # (fgraph.models.workers) with an instance joblib cannot use
    from joblib.executor import get_memmapping_executor

    executor = get_memmapping_executor(jobs)
    function = setting.function
    futures = {executor.submit(function, *setting.arguments(indices, omegas)): number
               for number, indices, omegas in tasks}
    try:
        for future in as_completed(futures):
            yield futures[future], future.result()
    finally:
        for future in futures:
            future.cancel()


def _execute_dask(setting, tasks: list, client):
    try:
        import distributed
    except ImportError:
        raise TVBError("TVB: a Dask client needs dask.distributed: pip install 'fgraph-mp[distributed]'") from None
    own = isinstance(client, str)
    if own:
        client = distributed.Client(client)
    elif not isinstance(client, distributed.Client):
        raise TVBError(f"TVB: client must be a dask.distributed Client or a scheduler address, got {client!r}")
    futures = {}
    try:
        data = client.scatter(setting.data, broadcast=True)
        function = setting.function
        for number, indices, omegas in tasks:
            arguments = (data,) + setting.arguments(indices, omegas)[1:]
            futures[client.submit(function, *arguments, pure=False)] = number
        for future in distributed.as_completed(list(futures)):
            yield futures[future], future.result()
    finally:
        if futures:
            client.cancel(list(futures))
        if own:
            client.close()


def job_count(n_jobs, parts: int, caller: str) -> int:
    """The workers of the local process pool for ``parts`` blocks (:func:`fgraph.models.workers.worker_count`; a bad
    ``n_jobs`` is a :class:`~fgraph.models.tvb.errors.TVBError` naming ``caller``)."""
    from fgraph.models.workers import worker_count

    try:
        return worker_count(n_jobs, parts, caller)
    except ModelError as error:
        raise TVBError(str(error)) from None


# ------------------------------------------------------------ the generic build: a directory, blocks, resuming
def _block_name(number: int) -> str:
    return f"{BLOCKS}/block_{number:05d}.npz"


def _block_key(number: int, cells: np.ndarray, omegas: np.ndarray) -> dict:
    """What block ``number`` holds: its cells (ω index, role) and their powers — checked on every read, so a block
    of another grid or plan is never taken for this one."""
    return {"block": number, "cells": np.asarray(cells), "omegas": np.asarray(omegas, dtype=float)}


def _run_blocks(setting, blocks: list, task, store: Store | None, jobs: int, client, progress,
                description: str = "TVB table", finished=None) -> dict | None:
    """Every block's result {number: arrays}, or None if ``finished()`` says another process finished the table.

    Without a ``store`` every block is fitted by :func:`_execute`. With one (:class:`fgraph.store.Store`), the
    blocks it holds are read back (verified by content hash and by the cells and ω they hold) and the others
    fitted and written each as it finishes, shared with any other process building the same directory
    (:meth:`fgraph.store.Store.fill`). ``task(cells)`` gives a block's (indices, omegas)."""
    from fgraph.progress import ProgressBar

    arguments = [tuple(task(cells)) for cells in blocks]

    def execute(numbers):
        tasks = [(number,) + arguments[number] for number in numbers]
        for number, result in _execute(setting, tasks, jobs, client):
            yield number, dict(result, cells=blocks[number])

    enabled = sys.stderr.isatty() if progress is None else bool(progress)
    with ProgressBar(len(blocks), description, "block", enabled=enabled) as bar:
        if store is None:
            results = {}
            for number, result in execute(range(len(blocks))):
                results[number] = result
                bar.update(1)
            return results
        names = {_block_name(number): number for number in range(len(blocks))}
        wanted = {name: _block_key(number, blocks[number], arguments[number][1]) for name, number in names.items()}
        filled = store.fill(wanted, lambda chosen: ((_block_name(number), result) for number, result
                                                    in execute([names[name] for name in chosen])),
                            on_value=lambda *_: bar.update(1), stop=finished)
    return None if filled is None else {names[name]: value for name, value in filled.items()}


def _finished_table(directory: Path, table_class, metadata: dict):
    """The finished table in ``directory`` if it is one of these settings (None if there is none, or if its files
    are corrupted: reported, and rebuilt by the caller); a finished table of other settings is a
    :class:`TableMismatchError` naming the keys that differ."""
    if not (directory / TABLE_JSON).exists():
        return None
    try:
        table = table_class.load(directory)
    except CorruptTableError as error:
        import warnings

        warnings.warn(f"{error}; rebuilding it", CorruptRecordWarning, stacklevel=3)
        return None
    except TVBError:
        return None  # no finished table here (the settings file of an unfinished build of an older version)
    changed = sorted(key for key in metadata if table.metadata.get(key) != metadata[key])
    if changed:
        raise TableMismatchError(f"TVB: {directory} holds a {table_class.kind} of other data or settings "
                                 f"(differing: {', '.join(changed)}); give another path, or delete it to rebuild")
    return table


def build_table(path, metadata: dict, table_class, reference, prepare, blocks: list, jobs: int, client, progress):
    """Build a TVB table, in memory or resumably in the directory ``path`` — the one procedure of every TVB table.

    reference() : the arrays every cell depends on besides the settings (the reference fit, the split and the
        resamples), computed once per directory (``start.npz``; deterministic in the settings).
    prepare(start) : (setting, task, assemble) from those arrays — the blocks' executor interface
        (:func:`_execute`), ``task(cells)`` → (indices, omegas) of a block, and ``assemble(results)`` → the table.

    In a directory (module docstring, :mod:`fgraph.store`): a finished table of these settings is loaded;
    otherwise the start and every block are read back when finished and fitted when not, by whichever of the
    processes building the same directory claims them first; the last one to finish writes the table."""
    label = table_class.kind
    if path is None:
        setting, task, assemble = prepare(reference())
        return assemble(_run_blocks(setting, blocks, task, None, jobs, client, progress, label))
    directory = prepare_directory(path, label)
    with directory_lock(directory):
        table = _finished_table(directory, table_class, metadata)
    if table is not None:
        return table
    store = Store(directory, metadata, label, mismatch_error=TableMismatchError)
    start = store.compute_once(START_NPZ, {"start": metadata}, reference)
    setting, task, assemble = prepare(start)

    def finished() -> bool:
        with directory_lock(directory):
            return _finished_table(directory, table_class, metadata) is not None

    results = _run_blocks(setting, blocks, task, store, jobs, client, progress, label, finished)
    if results is None:
        return table_class.load(directory)
    table = assemble(results)
    with store.locked():
        table.save(directory)
    store.remove([START_NPZ] + [_block_name(number) for number in range(len(blocks))])
    store.clear_claims()
    return table


def assemble_cells(m: int, width: int, blocks: list, results: dict, keys) -> dict:
    """The blocks' per-cell arrays placed into (m, width, ...) arrays at their cells (ω index, role)."""
    first = results[0]
    arrays = {key: np.zeros((m, width) + first[key].shape[1:], dtype=first[key].dtype) for key in keys}
    for number, cells in enumerate(blocks):
        for key, array in arrays.items():
            array[cells[:, 0], cells[:, 1]] = results[number][key]
    return arrays

