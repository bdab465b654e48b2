"""Eq. (4) against the authors' settings on held-out data: which is the better CAVI-CMN model?

``fgraph run cmn-table1`` shows that the authors' settings reproduce Table 1's *in-sample* number; this study asks
which setting predicts better on data the fit has not seen. For each of the seven UCI data sets it takes the
paper's held-out split exactly as ``fgraph run cmn-uci`` does (:func:`fgraph.datasets.train_test_splits` with the
sizes of :data:`fgraph.datasets.DEFAULT_SPLITS` and the split seed of cmn-uci: nested stratified training sets and
one stratified test set, z-scored by the training statistics) at the *largest* training size, and fits the CMN
(K = 20 experts, R restarts as copies of one graph, 200 sweeps; the fit's seed is the one cmn-uci gives that
training size) under the two settings of :data:`fgraph_experiments.cmn_table1.SETTINGS`:

* ``eq4``: eq. (4)'s priors as written (``CMNPriors(stick_bias=False)``), drawn coefficients
  (``initial="draws"``), one E-step pass per sweep;
* ``reference``: the authors' choices (``CMNPriors(stick_bias=True)``, ``initial="prior-mean"``, eight E-step
  passes per sweep; ``CMNClassifier.with_authors_settings()``).

``--parts`` fits eq. (4) with the reference setting's choices one by one (:data:`PART_SETTINGS`); its
``initial-bias`` is what :func:`fgraph.models.cmn.fit_cmn` and ``CMNClassifier()`` fit by default.

Every restart is scored on the test set under two predictives — ours
(:func:`fgraph.models.cmn.predictive_log_proba`: exact in the coefficients, quasi-Monte Carlo in x1, 128 points as
in cmn-uci) and the authors' forward pass through the layers' bounds
(:func:`fgraph.models.cmn.bound_predictive_log_proba`) — by test accuracy, mean log predictive density per point
(LPD) and expected calibration error (20 bins), with cmn-uci's scoring
(:func:`fgraph_experiments._cmn_experiment.scores`), so the numbers compare with its tables (the ``eq4`` fits are
cmn-uci's CAVI fits at that training size, restart for restart). Beside them, the same fits' in-sample LPD on their
training rows. Reported per data set, setting and predictive: mean ± standard deviation over the restarts and the
restart of best ELBO; per data set, which setting has the better test LPD and whether the difference is larger than
the restarts' spread (the larger of the two standard deviations).

Each (data set, setting) is a record of the run's results store (``<out>/fits/``), written when its fit is scored:
an interrupted run resumes at the next one, and ``--datasets`` picks some of them (the others stay in the store). A
directory of fits made with other options (``--quick`` and the full study, another version of this study) is
refused by name (:class:`fgraph.store.StoreMismatchError`, naming the options that differ): give another ``--out``
or delete ``<out>/fits`` to start again. Outputs: ``results.md`` (the table and one line per data set),
``summary.json`` (every restart's numbers).

``--quick``: iris with 2 restarts and 5 sweeps per setting, in seconds.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from fgraph.datasets import DEFAULT_SPLITS, load_dataset, train_test_splits
from fgraph.examples import Distinct, OptionError, progress_bar, worker_processes, write_summary
from fgraph.models.cmn import CMNPriors, bound_predictive_log_proba, build_cmn, fit_cmn, predictive_log_proba
from fgraph.store import Store, write_text
from fgraph_experiments import cmn_table1
from fgraph_experiments._cmn_experiment import ECE_BINS, scores

DESCRIPTION = ("CAVI-CMN under eq. (4) and the authors' settings on the held-out test sets of 7 UCI data sets: "
               "test accuracy, LPD and ECE under both predictives")

#: the data sets of Table 1, smallest training set first (a run does them in this order)
DATASETS = tuple(sorted(cmn_table1.DATASETS, key=lambda name: DEFAULT_SPLITS[name].train_sizes[-1]))
#: setting -> (priors, initial state, E-step passes per sweep): cmn-table1's
SETTINGS = cmn_table1.SETTINGS
#: the reference setting's choices one by one on top of eq. (4) (``--parts``): its initial state alone, and with the
#: sticks' prior bias; the eight E-step passes make the rest of the reference setting
PART_SETTINGS = {"initial": dict(stick_bias=False, initial="prior-mean", e_step_passes=1),
                 "initial-bias": dict(stick_bias=True, initial="prior-mean", e_step_passes=1)}
N_EXPERTS = cmn_table1.N_EXPERTS
#: the predictives every restart is scored under: ours and the authors' forward pass through the bounds
PREDICTIVES = {"ours": "our predictive (predictive_log_proba)",
               "authors": "the authors' predictive (bound_predictive_log_proba)"}
#: ``seed`` is cmn-uci's (the split's seed; the fit at training size i has seed + i, its predictive the same seed)
FULL = dict(datasets=DATASETS, n_restarts=16, iterations=200, predictive_samples=128, seed=0)
QUICK = dict(datasets=("iris",), n_restarts=2, iterations=5, predictive_samples=8, seed=0)


def heldout_split(name: str, seed: int) -> tuple:
    """(the split at data set ``name``'s largest training size, the seed cmn-uci fits that size with, the number of
    classes): the nested stratified splits of :data:`~fgraph.datasets.DEFAULT_SPLITS` drawn with ``seed``, as
    cmn-uci draws them."""
    sizes = DEFAULT_SPLITS[name]
    data = load_dataset(name)
    splits = train_test_splits(data.X, data.y, sizes.train_sizes, sizes.test_size, random_state=seed)
    return splits[-1], seed + len(splits) - 1, int(data.n_classes)


def fit_one(name: str, setting: str, options: dict, n_jobs: int | None = None) -> dict:
    """One data set under one setting: every restart's test accuracy, LPD and ECE under both predictives, and its
    final ELBO."""
    split, fit_seed, n_classes = heldout_split(name, options["seed"])
    chosen = {**SETTINGS, **PART_SETTINGS}[setting]
    started = time.perf_counter()
    network = build_cmn(split.X_train, split.y_train, N_EXPERTS, n_restarts=options["n_restarts"],
                        n_classes=n_classes, priors=CMNPriors(stick_bias=chosen["stick_bias"]))
    fit = fit_cmn(network, iterations=options["iterations"], seed=fit_seed, initial=chosen["initial"],
                  e_step_passes=chosen["e_step_passes"], n_jobs=n_jobs)
    fit_seconds = time.perf_counter() - started
    posteriors = fit.posteriors()

    def predictives(X) -> dict:
        return {"ours": predictive_log_proba(posteriors, X, options["predictive_samples"], fit_seed, n_jobs=n_jobs),
                "authors": bound_predictive_log_proba(posteriors, X)}

    log_proba, in_sample = predictives(split.X_test), predictives(split.X_train)
    rows = np.arange(split.train_size)
    return {
        "dataset": name, "setting": setting, "train_size": split.train_size, "test_size": int(split.test_index.size),
        "n_classes": n_classes, "fit_seed": fit_seed, "best_restart": int(fit.best_restart),
        "elbo_final": fit.elbo[-1].tolist(),
        "predictives": {predictive: {metric: values.tolist()
                                     for metric, values in scores(np.exp(values), split.y_test).items()}
                        for predictive, values in log_proba.items()},
        # the same fits' in-sample mean log predictive density (on the training rows), beside the test LPD
        "train_lpd": {predictive: values[:, rows, split.y_train].mean(axis=1).tolist()
                      for predictive, values in in_sample.items()},
        "fit_seconds": fit_seconds, "seconds": time.perf_counter() - started,
    }


def summarised(row: dict) -> dict:
    """Per predictive and metric of a record (test accuracy, LPD, ECE and the training rows' LPD): mean and standard
    deviation over the restarts, and the value of the restart of best ELBO."""
    found = {}
    for predictive, metrics in row["predictives"].items():
        found[predictive] = {}
        for metric, values in {**metrics, "train_lpd": row["train_lpd"][predictive]}.items():
            values = np.asarray(values, dtype=float)
            found[predictive][metric] = {"mean": float(values.mean()), "std": float(values.std()),
                                         "best_elbo": float(values[row["best_restart"]])}
    return found


def comparison(rows: dict, name: str) -> dict | None:
    """Which setting has the better test LPD on data set ``name``, per predictive: the difference of the means
    (eq4 − reference, nats per point; positive: eq. (4) is better), the restarts' spread (the larger standard
    deviation) and whether the difference exceeds it; the same for the restarts of best ELBO and for the ECE
    (lower is better). None until both settings are fitted."""
    eq4, reference = rows.get(f"{name}/eq4"), rows.get(f"{name}/reference")
    if eq4 is None or reference is None:
        return None
    a, b = summarised(eq4), summarised(reference)
    found = {}
    for predictive in PREDICTIVES:
        lpd_a, lpd_b = a[predictive]["lpd"], b[predictive]["lpd"]
        ece_a, ece_b = a[predictive]["ece"], b[predictive]["ece"]
        difference = lpd_a["mean"] - lpd_b["mean"]
        spread = max(lpd_a["std"], lpd_b["std"])
        found[predictive] = {
            "better_lpd": "eq4" if difference > 0 else "reference", "lpd_difference": difference,
            "lpd_spread": spread, "beyond_spread": bool(abs(difference) > spread),
            "best_elbo_lpd_difference": lpd_a["best_elbo"] - lpd_b["best_elbo"],
            "better_ece": "eq4" if ece_a["mean"] < ece_b["mean"] else "reference",
            "ece_difference": ece_a["mean"] - ece_b["mean"],
        }
    return found


def _cell(entry: dict, digits: int) -> str:
    return f"{entry['mean']:.{digits}f} ± {entry['std']:.{digits}f} ({entry['best_elbo']:.{digits}f})"


def table(rows: dict, datasets) -> str:
    """The markdown of ``results.md``: per data set, setting and predictive the test accuracy, LPD and ECE (mean ±
    sd over restarts, the restart of best ELBO in brackets), then one line per data set comparing the settings."""
    lines = ["| data set | N train | N test | setting | predictive | accuracy | LPD | ECE | in-sample LPD |",
             "|---|---:|---:|---|---|---|---|---|---|"]
    for name in datasets:
        for setting in SETTINGS:
            row = rows.get(f"{name}/{setting}")
            if row is None:
                continue
            found = summarised(row)
            for predictive in PREDICTIVES:
                entry = found[predictive]
                lines.append(f"| {name} | {row['train_size']} | {row['test_size']} | {setting} | {predictive} | "
                             f"{_cell(entry['accuracy'], 3)} | {_cell(entry['lpd'], 4)} | {_cell(entry['ece'], 3)} | "
                             f"{entry['train_lpd']['mean']:.4f} |")
    note = ("Test accuracy, LPD and ECE: mean ± standard deviation over the restarts (the restart of best ELBO); "
            "LPD: mean log predictive density per test point (nats, higher is better); ECE: "
            f"{ECE_BINS} bins (lower is better); in-sample LPD: the same fits' LPD on their training rows, mean "
            "over the restarts.")
    lines += ["", note, ""]
    wins = {predictive: {"eq4": 0, "reference": 0} for predictive in PREDICTIVES}
    for name in datasets:
        compared = comparison(rows, name)
        if compared is None:
            continue
        parts = []
        for predictive, entry in compared.items():
            wins[predictive][entry["better_lpd"]] += 1
            best = entry["best_elbo_lpd_difference"]
            parts.append(f"{predictive}: {entry['better_lpd']} by {abs(entry['lpd_difference']):.4f}, "
                         f"{'larger' if entry['beyond_spread'] else 'not larger'} than the restarts' spread "
                         f"{entry['lpd_spread']:.4f} (the restarts of best ELBO: {'eq4' if best > 0 else 'reference'} "
                         f"by {abs(best):.4f}), lower ECE {entry['better_ece']}")
        lines.append(f"* {name}, the better test LPD under " + "; under ".join(parts) + ".")
    if any(sum(count.values()) for count in wins.values()):
        lines += ["", "Better test LPD (mean over restarts), data sets won: " + "; ".join(
            f"{predictive}: eq4 {count['eq4']}, reference {count['reference']}" for predictive, count in wins.items())
            + "."]
    return "\n".join(lines) + "\n"


def run(quick: bool = False, out: Path = Path("out/cmn-heldout"), progress: bool = False, n_jobs: int | None = None,
        datasets=None, parts: bool = False) -> dict:
    """Fit every (data set, setting) not yet in ``out``'s store, then write ``results.md`` and ``summary.json``;
    with ``parts``, also the settings of :data:`PART_SETTINGS` (a store of their own, ``<out>/parts/``) and
    ``parts.md``: the test LPD of eq. (4), each part and the reference setting side by side."""
    options = dict(QUICK if quick else FULL)
    if datasets:
        unknown = [name for name in datasets if name not in DATASETS]
        if unknown:
            raise OptionError(f"--datasets: unknown data set {', '.join(map(repr, unknown))}; choose from "
                              f"{', '.join(DATASETS)}")
        options["datasets"] = tuple(dict.fromkeys(datasets))
    out = Path(out)
    identity = {key: value for key, value in options.items() if key != "datasets"}
    identity.update(n_experts=N_EXPERTS, settings=SETTINGS, split="DEFAULT_SPLITS, largest training size",
                    ece_bins=ECE_BINS)
    store = Store(out / "fits", identity, "CMN held-out fits")  # other options: StoreMismatchError naming them
    started = time.perf_counter()
    rows = {}
    with progress_bar(len(options["datasets"]) * len(SETTINGS), "cmn-heldout", progress) as bar:
        for name in options["datasets"]:
            for setting in SETTINGS:
                key = f"{name}/{setting}"
                bar.set_postfix_str(key)
                row = store.get(f"{name}-{setting}.json", key)
                if row is None:
                    row = store.put(f"{name}-{setting}.json", fit_one(name, setting, options, n_jobs), key=key)
                rows[key] = row
                found = summarised(row)
                print(f"{name:14s} {setting:9s} test accuracy {found['ours']['accuracy']['mean']:.3f}, LPD "
                      f"{found['ours']['lpd']['mean']:.4f} ± {found['ours']['lpd']['std']:.4f} (the authors' "
                      f"predictive {found['authors']['lpd']['mean']:.4f}), ECE {found['ours']['ece']['mean']:.3f} "
                      f"({row['seconds']:.0f} s)")
                bar.update()
    write_text(out / "results.md", table(rows, options["datasets"]))
    part_rows = _fit_parts(out, identity, options, n_jobs, progress) if parts else {}
    if part_rows:
        write_text(out / "parts.md", parts_table({**rows, **part_rows}, options["datasets"]))
    summary = {
        "example": "cmn-heldout", "quick": bool(quick), "seconds": time.perf_counter() - started,
        "seconds_of_fits": sum(row["seconds"] for row in rows.values()),
        "options": identity, "datasets": list(options["datasets"]),
        "scores": {key: summarised(row) for key, row in rows.items()},
        "comparison": {name: comparison(rows, name) for name in options["datasets"]},
        "rows": rows, "files": ["summary.json", "results.md"] + (["parts.md"] if part_rows else []),
    }
    if part_rows:
        summary["part_scores"] = {key: summarised(row) for key, row in part_rows.items()}
    write_summary(out, summary)
    return summary


def _fit_parts(out: Path, identity: dict, options: dict, n_jobs, progress) -> dict:
    """Every (data set, part setting) record, fitted when missing, of the store ``<out>/parts/``."""
    store = Store(out / "parts", dict(identity, settings=PART_SETTINGS), "CMN held-out fits, the parts")
    rows = {}
    with progress_bar(len(options["datasets"]) * len(PART_SETTINGS), "cmn-heldout parts", progress) as bar:
        for name in options["datasets"]:
            for setting in PART_SETTINGS:
                key = f"{name}/{setting}"
                row = store.get(f"{name}-{setting}.json", key)
                if row is None:
                    row = store.put(f"{name}-{setting}.json", fit_one(name, setting, options, n_jobs), key=key)
                rows[key] = row
                bar.update()
    return rows


def parts_table(rows: dict, datasets) -> str:
    """The markdown of ``parts.md``: per data set the test LPD (our predictive, mean ± sd over restarts) of eq. (4),
    each part of the reference setting added to it, and the reference setting."""
    order = ("eq4", *PART_SETTINGS, "reference")
    lines = ["| data set | " + " | ".join(order) + " |", "|---|" + "---|" * len(order)]
    for name in datasets:
        cells = []
        for setting in order:
            row = rows.get(f"{name}/{setting}")
            lpd = summarised(row)["ours"]["lpd"] if row is not None else None
            cells.append("–" if lpd is None else f"{lpd['mean']:.4f} ± {lpd['std']:.4f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "Test LPD per point under our predictive, mean ± standard deviation over the restarts: eq. (4); its "
              "initial state replaced by the reference setting's (prior means); that and the sticks' prior bias; "
              "the reference setting (both, and eight E-step passes per sweep)."]
    return "\n".join(lines) + "\n"


def add_arguments(parser) -> None:
    """The options of ``fgraph run cmn-heldout``."""
    parser.add_argument("--jobs", dest="n_jobs", type=worker_processes, default=None,
                        help="worker processes for the restarts (-1: one per CPU; default 1)")
    parser.add_argument("--parts", action="store_true",
                        help="also fit the reference setting's parts on top of eq. (4) (its initial state; and the "
                             "sticks' prior bias), into <out>/parts/, and write parts.md")
    parser.add_argument("--datasets", nargs="+", choices=DATASETS, action=Distinct, default=None,
                        help="the data sets (default: all seven, smallest first; --quick: iris)")
