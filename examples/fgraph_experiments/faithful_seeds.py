"""Old Faithful (the TVB paper, §7) over split seeds: how much the selected ω and the TVB intervals depend on the
random split and resamples, under our defaults and under the authors' choices.

``fgraph run faithful`` builds one TVB table, from one split seed; the ω it selects moves with that seed (0.22,
0.81, 0.93, 0.33 for π at seeds 0–3). This study builds the table of the bundled Old Faithful data (raw columns,
minutes) for ``--seeds`` split seeds under each setting of :data:`fgraph_experiments.gmm_tvb.SETTINGS` — ``ours``
(scikit-learn's priors, one split and one set of resamples for every ω, B = 100, ties to the nominal level) and
``authors`` (their priors W₀ = cov(X), ν₀ = d + 2, a new split and resamples per ω, k-means starts, their
stopping, ties to the largest ω, B = 500) — on the paper's range of ω (``--grid-size`` values in [0.001, 1]; the
paper has 500, the default here 100), and reports per quantity (π, the four mean coordinates, the two sums, as
``fgraph run faithful``) and setting: the selected ω over the seeds (min, median, max), the lower and upper ends of
the TVB interval (median and range) and the plain VB interval, which no seed changes.

Every table is built into ``out/tables/<setting>/seed<k>/`` (a resumable TVB table: a rerun reads it back, an
interrupted build resumes). ``--quick``: every other row, 2 seeds, 6 ω, B = 6 (B = 8 for the authors').

Outputs in ``out``: ``results.md``, ``summary.json``, ``tables/``.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from fgraph.examples import whole_number, worker_processes, write_summary
from fgraph.examples.faithful import LEVEL, load_faithful, quantities
from fgraph.models.tvb import FULL, build_tvb_table, omega_grid
from fgraph.store import write_text
from fgraph_experiments import gmm_tvb

DESCRIPTION = ("Old Faithful (TVB paper §7) over split seeds: the spread of the selected omega and of the TVB "
               "intervals, under our defaults and the authors' choices")

FULL_SCOPE = {"seeds": 10, "grid_size": 100, "bootstrap": {"ours": 100, "authors": 500}}
QUICK_SCOPE = {"seeds": 2, "grid_size": 6, "bootstrap": {"ours": 6, "authors": 8}}


def add_arguments(parser) -> None:
    """The options of ``fgraph run faithful-seeds``."""
    parser.add_argument("--seeds", type=whole_number(1), default=None,
                        help="split seeds 0 .. S-1 (default 10; --quick: 2)")
    parser.add_argument("--grid-size", dest="grid_size", type=whole_number(2), default=None, metavar="M",
                        help="values of ω log-spaced in [0.001, 1] (default 100; the paper's 500)")
    parser.add_argument("--settings", nargs="+", choices=tuple(gmm_tvb.SETTINGS), default=None,
                        help="the settings to run (default both)")
    parser.add_argument("--jobs", type=worker_processes, default=None,
                        help="worker processes for each table (-1 or default: one per CPU; --quick: 1)")


def _selections(table, ties: str) -> list:
    """Per quantity: the VB interval, and ω and the interval chosen by eq. (6) with the tie rule ``ties``."""
    vb_means = table.mean[-1, FULL]
    order = [int(k) for k in np.argsort(vb_means[:, 0])]  # cluster 1: the short eruptions
    rows = []
    for label, spec in quantities(order):
        s = table.select(spec, LEVEL, ties=ties)
        rows.append({"quantity": label, "omega": float(s.omega), "tvb": [float(s.interval.lower),
                                                                         float(s.interval.upper)],
                     "vb": [float(s.vb.lower), float(s.vb.upper)], "coverage": float(s.coverage[s.index])})
    return rows


def _spread(values) -> dict:
    values = np.asarray(values, dtype=float)
    return {"min": float(values.min()), "median": float(np.median(values)), "max": float(values.max())}


def run(quick: bool = False, out: Path = Path("out/faithful-seeds"), progress: bool = False,
        seeds: int | None = None, grid_size: int | None = None, settings: list | None = None,
        jobs: int | None = None) -> dict:
    """Build every (setting, seed) table (module docstring) and write the report into ``out``."""
    out = Path(out)
    scope = QUICK_SCOPE if quick else FULL_SCOPE
    X, names = load_faithful()
    if quick:
        X = X[::2]
    n_seeds = int(seeds or scope["seeds"])
    m = int(grid_size or scope["grid_size"])
    n_jobs = (1 if quick else -1) if jobs is None else jobs
    chosen = list(settings or gmm_tvb.SETTINGS)
    start = time.perf_counter()
    results = {}
    for setting in chosen:
        study = {"options": gmm_tvb.SETTINGS[setting]["options"]}
        arguments = gmm_tvb.table_arguments(study)
        ties = gmm_tvb.OPTIONS["ties"][study["options"]["ties"]]["ties"]
        per_seed = []
        for seed in range(n_seeds):
            table = build_tvb_table(X, 2, path=out / "tables" / setting / f"seed{seed}", grid=omega_grid(m),
                                    n_bootstrap=scope["bootstrap"][setting], seed=seed, n_jobs=n_jobs,
                                    progress=progress, **arguments)
            per_seed.append(_selections(table, ties))
        results[setting] = {
            row["quantity"]: {"omega": _spread([rows[i]["omega"] for rows in per_seed]),
                              "omegas": [rows[i]["omega"] for rows in per_seed],
                              "lower": _spread([rows[i]["tvb"][0] for rows in per_seed]),
                              "upper": _spread([rows[i]["tvb"][1] for rows in per_seed]),
                              "vb": per_seed[0][i]["vb"]}
            for i, row in enumerate(per_seed[0])}
    seconds = time.perf_counter() - start
    lines = [f"# Old Faithful over split seeds: selected ω and TVB {LEVEL:.0%} intervals", "",
             (f"N = {len(X)} ({'every other row, ' if quick else ''}raw columns, minutes); seeds 0–{n_seeds - 1}; "
              f"{m} ω log-spaced in [0.001, 1]; B = " + ", ".join(f"{scope['bootstrap'][s]} ({s})" for s in chosen)
              + f". {seconds:.1f} s (tables already built are read back)."), "",
             "| quantity | setting | VB interval | selected ω: min / median / max | TVB lower: median [min, max] | "
             "TVB upper: median [min, max] |", "|---|---|---|---|---|---|"]
    for quantity in results[chosen[0]]:
        for setting in chosen:
            r = results[setting][quantity]
            lines.append(f"| {quantity} | {setting} | [{r['vb'][0]:.4f}, {r['vb'][1]:.4f}] | "
                         f"{r['omega']['min']:.3f} / {r['omega']['median']:.3f} / {r['omega']['max']:.3f} | "
                         f"{r['lower']['median']:.4f} [{r['lower']['min']:.4f}, {r['lower']['max']:.4f}] | "
                         f"{r['upper']['median']:.4f} [{r['upper']['min']:.4f}, {r['upper']['max']:.4f}] |")
    write_text(out / "results.md", "\n".join(lines) + "\n")
    print("\n".join(lines))
    summary = {"example": "faithful-seeds", "quick": quick, "n": len(X), "columns": names, "seeds": n_seeds,
               "grid_size": m, "bootstrap": {s: scope["bootstrap"][s] for s in chosen}, "seconds": seconds,
               "results": results, "files": ["results.md", "summary.json", "tables"]}
    write_summary(out, summary)
    return summary
