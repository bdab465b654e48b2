"""The conditional mixture network on seven UCI data sets by CAVI, against MLE, BBVI and NUTS (Heins et al., §4.2).

Data sets: waveform, vehicle, rice, breast cancer, sonar, banknote, iris (``fgraph.datasets``), each
with nested stratified training sets of doubling size and one stratified test set (Appendix C;
:data:`fgraph.datasets.DEFAULT_SPLITS`), z-scored by the training statistics. Model: the CMN of
:mod:`fgraph.models.cmn` with K = 20 experts and h = L − 1, fitted by CAVI with 16 restarts as copies
of one graph (one fit per training size). Reported per training size: test accuracy, log predictive
density and expected calibration error (20 bins) of every restart's own predictive (mean ± std over
restarts), seconds per iteration and iterations to 95 % of the final ELBO (Appendix E); per data set
WAIC on the full data (ArviZ). With the ``baselines`` extra installed the same runs fit maximum
likelihood and black-box VI with the same restarts, and NUTS on the small sets, and report CAVI's
agreement with NUTS. See :mod:`fgraph_experiments._cmn_experiment` for the details.

Outputs in ``out``: ``<dataset>.json`` (written as each data set finishes; a rerun with the same
settings reuses it), ``<dataset>_traces.npz``, ``<dataset>.png`` and ``<dataset>_reliability.png``,
``results.md`` (the tables) and ``summary.json``.

The full run (:data:`FULL`) is the paper's scale and takes hours on a small machine; ``--quick``
(:data:`QUICK`) fits iris at two tiny training sizes with 2 restarts and no baselines, in seconds.
Other scopes: ``run(..., config=ExperimentConfig(...))`` from Python, e.g. :data:`MEDIUM`, the configuration
of the results in ``docs/cmn-experiments.md``.
"""
from __future__ import annotations

import time
from pathlib import Path

from fgraph.examples import write_summary
from fgraph.store import write_text
from fgraph_experiments._cmn_experiment import (
    ExperimentConfig, arviz_available, baselines_available, print_result, results_table, run_dataset,
)

DESCRIPTION = "conditional mixture network by CAVI on 7 UCI data sets: accuracy, LPD, ECE, WAIC, runtime, vs MLE/BBVI/NUTS (paper §4.2)"

DATASETS = ("waveform", "vehicle", "rice", "breast_cancer", "sonar", "banknote", "iris")
SMALL_DATASETS = ("breast_cancer", "sonar", "iris")  # NUTS runs on these

FULL = ExperimentConfig(datasets=DATASETS, n_experts=20, n_restarts=16, iterations=200, predictive_samples=128,
                        waic_draws=100, waic_inner=32, mle_steps=20000, bbvi_steps=20000,
                        nuts_datasets=SMALL_DATASETS)
# the configuration measured in docs/cmn-experiments.md: the three smallest sets at their first three training sizes,
# fewer CAVI iterations and baseline steps, NUTS on iris only
MEDIUM = ExperimentConfig(datasets=("iris", "sonar", "breast_cancer"), n_experts=20, n_restarts=16, iterations=100,
                          max_sizes=3, predictive_samples=64, waic_draws=50, waic_inner=16, mle_steps=2000,
                          bbvi_steps=1000, nuts_datasets=("iris",), nuts_warmup=100, nuts_samples=50,
                          nuts_chains=4)
QUICK = ExperimentConfig(datasets=("iris",), n_experts=20, n_restarts=2, iterations=8, max_sizes=2,
                         predictive_samples=16, waic_draws=20, waic_inner=8, baselines=False)


def run(quick: bool = False, out: Path = Path("out/cmn-uci"), progress: bool = False,
        config: ExperimentConfig | None = None) -> dict:
    """Run every data set of ``config`` (default :data:`QUICK` or :data:`FULL`); write the files listed above."""
    config = config or (QUICK if quick else FULL)
    return run_experiment("cmn-uci", config, quick, Path(out), progress)


def run_experiment(example: str, config: ExperimentConfig, quick: bool, out: Path, progress: bool,
                   extra: dict | None = None) -> dict:
    """Run ``config``'s data sets one by one (each written when done), then the tables and the summary."""
    out.mkdir(parents=True, exist_ok=True)
    if config.baselines and not baselines_available():
        print("the baselines extra is not installed (pip install -e 'examples[baselines]'): CAVI only")
    if config.waic and not arviz_available():
        print("ArviZ is not installed (pip install -e 'examples[baselines]'): no WAIC")
    started = time.perf_counter()
    results = []
    for name in config.datasets:
        result = run_dataset(name, config, out, progress)
        print_result(result)
        results.append(result)
    table = results_table(results)
    write_text(out / "results.md", table)
    files = ["summary.json", "results.md"] + [f for result in results for f in result["files"]]
    summary = {
        "example": example, "quick": bool(quick), "seconds": time.perf_counter() - started,
        "datasets": {result["dataset"]: result for result in results}, **(extra or {}), "files": files,
    }
    write_summary(out, summary)
    return summary
