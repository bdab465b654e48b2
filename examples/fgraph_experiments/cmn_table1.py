"""Table 1 of Heins et al. (CAVI-CMN) under eq. (4) and under the authors' settings, with the number each reports.

Table 1 gives one "WAIC" per data set. For CAVI the authors' script (``cavi_cmn_waic_uci.py`` of
VersesTech/cavi-cmn) computes it as the mean over its restarts of the mean over all rows of the *in-sample* log
predictive density, log p(y_n | x_n) under the fitted model's predictive at the training inputs, with no
p_waic term; for NUTS and BBVI it is ArviZ's elpd_waic divided by N. This study fits each data set whole
(z-scored as a whole, K = 20 experts, R restarts as copies of one graph, 200 sweeps) under two settings
(:data:`SETTINGS`):

* ``eq4``: eq. (4)'s priors, our initial state (random draws), one E-step pass per sweep;
* ``reference``: the authors' choices, each a named option of :mod:`fgraph.models.cmn` — the sticks' prior bias
  (``CMNPriors(stick_bias=True)``), the initial state at the prior means (``initial="prior-mean"``), eight
  E-step passes per sweep (their ``n_backwards_iters`` = 8);

and reports per restart the in-sample mean log predictive density under two predictives — ours
(:func:`fgraph.models.cmn.predictive.predictive_log_proba`: exact in the coefficients, quasi-Monte Carlo in x1)
and the authors' forward pass through the layers' bounds (:func:`fgraph.models.cmn.bound_predictive_log_proba`,
what their script scores) — mean, standard deviation, the restart of best ELBO — and the final ELBO. Each (data set, setting) is a record
of the run's results store (``<out>/fits/``), written when its fit is done: an interrupted run resumes at the
next one, a run with other options starts again.

``--quick``: iris with 2 restarts and 5 sweeps per setting, in seconds.
"""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import numpy as np

from fgraph.datasets import load_dataset
from fgraph.examples import worker_processes, write_summary
from fgraph.models.cmn import CMNPriors, bound_predictive_log_proba, build_cmn, fit_cmn, predictive_log_proba
from fgraph.store import Store, StoreMismatchError, write_text

DESCRIPTION = "CAVI-CMN's Table 1 (paper §4.2): in-sample log predictive density per point under eq. (4) and the authors' settings"

DATASETS = ("rice", "breast_cancer", "iris", "banknote", "sonar", "waveform", "vehicle")
#: Table 1's CAVI column (mean per point), as quoted in the issue that asked for this study
PAPER = {"rice": -0.1820, "breast_cancer": -0.0504, "iris": -0.0747, "banknote": -0.0206, "sonar": -0.1544,
         "waveform": -0.2921, "vehicle": -0.3281}
#: setting -> (priors, initial state, E-step passes per sweep)
SETTINGS = {
    "eq4": dict(stick_bias=False, initial="draws", e_step_passes=1),
    "reference": dict(stick_bias=True, initial="prior-mean", e_step_passes=8),
}
N_EXPERTS = 20
FULL = dict(datasets=DATASETS, n_restarts=16, iterations=200, predictive_samples=32, seed=1000)
QUICK = dict(datasets=("iris",), n_restarts=2, iterations=5, predictive_samples=8, seed=1000)


def zscored(X: np.ndarray) -> np.ndarray:
    scale = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(scale > 0, scale, 1.0)


def fit_one(name: str, setting: str, options: dict, n_jobs: int | None = None) -> dict:
    """One data set under one setting: the in-sample log predictive density of every restart, and its ELBO."""
    data = load_dataset(name)
    X, y = zscored(data.X), data.y
    chosen = SETTINGS[setting]
    started = time.perf_counter()
    network = build_cmn(X, y, N_EXPERTS, n_restarts=options["n_restarts"],
                        priors=CMNPriors(stick_bias=chosen["stick_bias"]))
    fit = fit_cmn(network, iterations=options["iterations"], seed=options["seed"], initial=chosen["initial"],
                  e_step_passes=chosen["e_step_passes"], n_jobs=n_jobs)
    log_proba = predictive_log_proba(fit.posteriors(), X, n_samples=options["predictive_samples"],
                                     random_state=options["seed"])
    per_restart = log_proba[:, np.arange(len(y)), y].mean(axis=1)
    bound = bound_predictive_log_proba(fit.posteriors(), X)[:, np.arange(len(y)), y].mean(axis=1)
    return {
        "dataset": name, "setting": setting, "n": int(len(y)),
        "lpd_per_restart": per_restart.tolist(), "lpd_mean": float(per_restart.mean()),
        "lpd_std": float(per_restart.std()), "best_restart": fit.best_restart,
        "lpd_best_elbo": float(per_restart[fit.best_restart]),
        "bound_lpd_per_restart": bound.tolist(), "bound_lpd_mean": float(bound.mean()),
        "bound_lpd_std": float(bound.std()),
        "elbo_final": fit.elbo[-1].tolist(), "seconds": time.perf_counter() - started,
    }


def table(rows: dict, datasets) -> str:
    """The in-sample mean log predictive density per point: mean ± std over restarts (the restart of best ELBO) under
    our predictive, and the mean under the authors' (bound) predictive, per setting, beside Table 1."""
    lines = ["| data set | N | Table 1 (CAVI) | eq. (4), ours | eq. (4), authors' predictive | reference, ours | "
             "reference, authors' predictive | the last − Table 1 |", "|---|---:|---:|---|---:|---|---:|---:|"]
    for name in datasets:
        cells = []
        for setting in SETTINGS:
            row = rows.get(f"{name}/{setting}")
            cells += (["–", "–"] if row is None else
                      [f"{row['lpd_mean']:.4f} ± {row['lpd_std']:.4f} ({row['lpd_best_elbo']:.4f})",
                       f"{row['bound_lpd_mean']:.4f} ± {row['bound_lpd_std']:.4f}"])
        reference = rows.get(f"{name}/reference")
        gap = "–" if reference is None else f"{reference['bound_lpd_mean'] - PAPER[name]:+.4f}"
        n = next((row["n"] for key, row in rows.items() if key.startswith(f"{name}/")), "–")
        lines.append(f"| {name} | {n} | {PAPER[name]:.4f} | {' | '.join(cells)} | {gap} |")
    return "\n".join(lines) + "\n"


def run(quick: bool = False, out: Path = Path("out/cmn-table1"), progress: bool = False, n_jobs: int | None = None,
        datasets=None) -> dict:
    """Fit every (data set, setting) not yet in ``out``'s store, then write ``results.md`` and ``summary.json``."""
    options = dict(QUICK if quick else FULL)
    if datasets:
        options["datasets"] = tuple(datasets)
    out = Path(out)
    identity = {key: value for key, value in options.items() if key != "datasets"}
    identity.update(n_experts=N_EXPERTS, settings=SETTINGS)
    try:
        store = Store(out / "fits", identity, "CMN Table 1 fits")
    except StoreMismatchError:  # another configuration's fits: this run's are other numbers
        shutil.rmtree(out / "fits")
        store = Store(out / "fits", identity, "CMN Table 1 fits")
    started = time.perf_counter()
    rows = {}
    for name in options["datasets"]:
        for setting in SETTINGS:
            key = f"{name}/{setting}"
            row = store.get(f"{name}-{setting}.json", key)
            if row is None:
                row = fit_one(name, setting, options, n_jobs)
                store.put(f"{name}-{setting}.json", row, key=key)
            rows[key] = row
            print(f"{name:14s} {setting:9s} in-sample LPD {row['lpd_mean']:.4f} ± {row['lpd_std']:.4f}, "
                  f"the authors' predictive {row['bound_lpd_mean']:.4f} (Table 1: {PAPER[name]:.4f}; "
                  f"{row['seconds']:.0f} s)")
    text = table(rows, options["datasets"])
    write_text(out / "results.md", text)
    summary = {"example": "cmn-table1", "quick": bool(quick), "seconds": time.perf_counter() - started,
               "options": identity, "paper": PAPER, "rows": rows, "files": ["summary.json", "results.md"]}
    write_summary(out, summary)
    return summary


def add_arguments(parser) -> None:
    """The options of ``fgraph run cmn-table1``."""
    parser.add_argument("--jobs", dest="n_jobs", type=worker_processes, default=None,
                        help="worker processes for the restarts (-1: one per CPU; default 1)")
    parser.add_argument("--datasets", nargs="+", choices=DATASETS, default=None,
                        help="the data sets (default: all seven; --quick: iris)")
