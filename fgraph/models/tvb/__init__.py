"""Trustworthy variational Bayes (Liu & Li, "Bend to mend"): fractional VB fits over a grid of ω × bootstrap
resamples (the TVB table), credible intervals of functionals, and ω calibrated by the grid (Algorithm 2) or
sequentially (Algorithm 1).

The model-independent part: the arguments and the paper's grid (:mod:`~fgraph.models.tvb.arguments`), the errors
(:mod:`~fgraph.models.tvb.errors`), the base of every table — roles, coverage, the choice of ω, files —
(:mod:`~fgraph.models.tvb.table`) and how a table is built — split, resamples, blocks, executors, the resumable
build in a results store — (:mod:`~fgraph.models.tvb.build`). The models: the Gaussian mixture's table and
Algorithm 1 (:mod:`~fgraph.models.tvb.gmm`) with its functionals and credible intervals
(:mod:`~fgraph.models.tvb.intervals`), and the Bayesian mixture linear regression's table
(:mod:`~fgraph.models.tvb.bmlr`). The models use the model-independent part through its public names only.
"""
from fgraph.models.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "errors": ["TVBError", "GridError", "PowerRangeError", "BootstrapCountError", "FunctionalError",
               "UnknownFunctionalError", "TableMismatchError", "CorruptTableError"],
    "arguments": ["omega_grid"],
    "table": ["FULL", "SPLIT", "TVBSelection", "choose_omega"],
    "intervals": ["Intervals", "Functional", "Weight", "MeanProjection", "MonteCarlo", "functional",
                  "credible_intervals"],
    "gmm": ["TVBTable", "build_tvb_table", "SequentialTVB", "sequential_tvb"],
    "bmlr": ["BMLRTVBTable", "build_bmlr_tvb_table", "CoefficientProjection", "coefficient_functional",
             "bmlr_credible_intervals"],
})
