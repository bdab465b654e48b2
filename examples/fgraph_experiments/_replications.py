"""What the TVB coverage studies (``gmm-tvb``, ``bmlr-tvb``) share: their settings, resumable replications in a
process pool, the Wilson interval of a coverage, the per-size aggregates, their table, their coverage and length
panels and their report (``results.md``, the figure, ``summary.json``).

**Replications on disk.** A study is a grid of (size, replication) tasks; every task's row is one JSON record of a
``replications`` directory, a results store (:mod:`fgraph.store`: written atomically as soon as it finishes, its
content hash in the manifest), named by the study's ``row_name``. The settings the rows depend on are the store's
identity (every setting except the ones that only say how many rows there are, ``per_run_keys``); a directory of
other settings is a :class:`ReplicationsMismatchError`, so a rerun with the same settings reads the finished rows
and fits only the others; a damaged row is reported and fitted again; several processes running the same study
into one directory share its rows.
"""
from __future__ import annotations

from concurrent.futures import as_completed
from pathlib import Path

import numpy as np

from fgraph.examples import progress_bar, pyplot, write_summary
from fgraph.models.workers import worker_count
from fgraph.store import Store, StoreMismatchError, write_text

__all__ = ["ReplicationsMismatchError", "study_settings", "open_records", "run_replications", "worker_jobs",
           "wilson", "aggregate", "results_table", "coverage_panels", "write_report"]


class ReplicationsMismatchError(StoreMismatchError):
    """The replications directory holds rows of other settings, or the settings are invalid."""


def study_settings(defaults: dict, replications: int | None, sizes: list | None) -> dict:
    """A copy of ``defaults`` (the study's full or quick settings) with the number of ``replications`` per size and
    the ``sizes`` asked for (None: the default's)."""
    settings = dict(defaults)
    if replications is not None:
        settings["replications"] = int(replications)
    if sizes is not None:
        settings["sizes"] = [int(size) for size in sizes]
    return settings


def open_records(directory: Path, settings: dict, label: str, per_run_keys=()) -> Store:
    """The results store of a study's records in ``directory``: its identity is ``settings`` without
    ``per_run_keys`` (the sizes and the number of replications, which a rerun may extend); a directory of other
    settings is a :class:`ReplicationsMismatchError` naming the keys that differ (``label``: the study)."""
    identity = {key: value for key, value in settings.items() if key not in per_run_keys}
    return Store(directory, identity, label, mismatch_error=ReplicationsMismatchError)


def run_replications(directory: Path, settings: dict, replicate, row_name, sizes_key: str, label: str,
                     jobs: int = 1, progress: bool = False) -> tuple:
    """Every (size, replication) row of ``settings`` (the sizes ``settings[sizes_key]``, ``settings["replications"]``
    of each): the finished ones read from the store in ``directory`` (record ``row_name(size, replication)``), the
    others fitted by ``replicate(size, replication, settings)`` (a module-level function: it is sent to ``jobs``
    worker processes) replication by replication across the sizes, and each written there as it finishes. Returns
    (the rows sorted by (size, replication), the number fitted now)."""
    store = open_records(directory, settings, label, (sizes_key, "replications"))
    sizes = settings[sizes_key]
    # replication-major, so that a study stopped part-way has (nearly) as many rows at every size
    tasks = sorted(((size, r) for size in sizes for r in range(settings["replications"])),
                   key=lambda task: (task[1], sizes.index(task[0])))
    names = {row_name(size, r): (size, r) for size, r in tasks}

    def execute(chosen):
        todo = [names[name] for name in chosen]
        if jobs <= 1 or len(todo) <= 1:
            for size, r in todo:
                yield row_name(size, r), replicate(size, r, settings)
            return
        # the pool the TVB tables use (joblib's reusable executor, shared with joblib.Parallel)
        from joblib.executor import get_memmapping_executor

        pool = get_memmapping_executor(min(jobs, len(todo)))
        futures = {pool.submit(replicate, size, r, settings): (size, r) for size, r in todo}
        try:
            for future in as_completed(futures):
                yield row_name(*futures[future]), future.result()
        finally:
            for future in futures:
                future.cancel()

    fitted = []
    with progress_bar(len(tasks), f"{label} replications", progress) as bar:
        def counted(name, value, computed):
            if computed:
                fitted.append(name)
                bar.update()

        rows = store.fill({name: list(task) for name, task in names.items()}, execute, counted)
    return [rows[row_name(*key)] for key in sorted(names.values())], len(fitted)


def worker_jobs(quick: bool, requested: int | None, label: str) -> int:
    """The worker processes over replications: ``requested`` (checked), else one per CPU (``quick``: 1)."""
    return worker_count((1 if quick else -1) if requested is None else int(requested), 10**9, label)


def wilson(successes: int, n: int, z: float = 1.959963984540054) -> tuple:
    """The 95 % Wilson score interval of a binomial proportion."""
    if n == 0:
        return float("nan"), float("nan")
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, min(p, float(centre - half))), min(1.0, max(p, float(centre + half)))


def aggregate(rows: list, sizes: list, methods: tuple, size_key: str) -> list:
    """Coverage (with its Wilson interval), mean and sd of the interval length, mean and median selected ω, and for
    TVB the fraction of replications that reached the level, per size (``row[size_key]``) and method (the rows'
    entries ``row[method]``: ``covers``, ``length``, ``omega``, ``reached``)."""
    table = []
    for size in sizes:
        mine = [row for row in rows if row[size_key] == size]
        for method in methods:
            entries = [row[method] for row in mine if method in row]
            if not entries:
                continue
            covers = sum(entry["covers"] for entry in entries)
            lengths = np.array([entry["length"] for entry in entries])
            omegas = np.array([entry["omega"] for entry in entries])
            result = {size_key: size, "method": method, "replications": len(entries),
                      "coverage": covers / len(entries), "coverage_ci": list(wilson(covers, len(entries))),
                      "mean_length": float(lengths.mean()), "sd_length": float(lengths.std()),
                      "mean_omega": float(omegas.mean()), "median_omega": float(np.median(omegas))}
            if method != "vb":
                result["reached"] = float(np.mean([entry["reached"] for entry in entries]))
            table.append(result)
    return table


def results_table(results: list, size_key: str, labels: dict) -> list:
    """The markdown lines of the aggregates (:func:`aggregate`): size, method (``labels``), coverage and its Wilson
    interval, mean length, mean selected ω, replications."""
    lines = [f"| {size_key.upper()} | method | coverage | 95% CI of coverage | mean length | mean selected ω | "
             "replications |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r[size_key]} | {labels[r['method']]} | {r['coverage']:.3f} | "
                     f"[{r['coverage_ci'][0]:.3f}, {r['coverage_ci'][1]:.3f}] | {r['mean_length']:.4f} | "
                     f"{r['mean_omega']:.4f} | {r['replications']} |")
    return lines


def coverage_panels(coverage_axes, length_axes, results: list, sizes: list, methods: tuple, labels: dict,
                    size_key: str, level: float, quantity: str) -> None:
    """Coverage against size (Wilson error bars, the nominal ``level`` dashed) on ``coverage_axes`` and the mean
    interval length against size on ``length_axes``, one line per method (shifted a little along the size axis in
    the coverage panel, so the error bars do not hide each other); ``quantity`` names what is covered."""
    offsets = np.linspace(-1, 1, len(methods)) * 0.01 * (max(sizes) - min(sizes) if len(sizes) > 1 else 100)
    for method, offset in zip(methods, offsets):
        mine = [r for r in results if r["method"] == method]
        x = np.array([r[size_key] for r in mine], dtype=float) + offset
        coverage = np.array([r["coverage"] for r in mine])
        ci = np.array([r["coverage_ci"] for r in mine]).reshape(-1, 2)
        error = np.clip([coverage - ci[:, 0], ci[:, 1] - coverage], 0, None)
        coverage_axes.errorbar(x, coverage, yerr=error, marker="o", capsize=3, label=labels[method])
        length_axes.plot(x - offset, [r["mean_length"] for r in mine], marker="o", label=labels[method])
    coverage_axes.axhline(level, color="k", linestyle="--", linewidth=1, label=f"nominal {level:.0%}")
    coverage_axes.set_ylabel(f"frequentist coverage of {quantity}")
    coverage_axes.set_ylim(-0.02, 1.02)
    coverage_axes.set_title("Coverage (95% Wilson intervals)")
    coverage_axes.legend(fontsize=8)
    length_axes.set_ylabel("mean interval length")
    length_axes.legend(fontsize=8)


def write_report(out: Path, example: str, quick: bool, settings: dict, jobs: int, fitted: int, seconds: float,
                 results: list, lines: list, figure) -> dict:
    """Write the study's report into ``out``: ``lines`` as ``results.md`` (and printed), the figure
    (``figure(plt)`` draws it and returns its file name; none without matplotlib) and ``summary.json``, the
    summary returned (the ``settings``, the worker processes ``jobs``, the rows ``fitted`` in this run, the
    ``seconds`` they took, the aggregates ``results``, the files)."""
    write_text(out / "results.md", "\n".join(lines) + "\n")
    print("\n".join(lines))
    files = ["results.md"]
    plt = pyplot()
    if plt is not None:
        files.append(figure(plt))
    summary = {"example": example, "quick": quick, "settings": settings, "jobs": jobs,
               "fitted_this_run": fitted, "seconds": seconds, "results": results,
               "files": files + ["replications", "summary.json"]}
    write_summary(out, summary)
    return summary
