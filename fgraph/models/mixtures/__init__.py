"""Mixtures as graphs of nodes: the Bayesian Gaussian mixture (:mod:`~fgraph.models.mixtures.gmm`) and its
scikit-learn estimator ``BayesianGMM`` (:mod:`~fgraph.models.mixtures.bayesian_gmm`), and the Bayesian mixture linear
regression of the TVB paper (:mod:`~fgraph.models.mixtures.bmlr`), each with fractional VB (the power ω).

The names below are exported lazily: ``import fgraph.models.mixtures`` does not import scikit-learn. Both models
have an ``expected_log_weights`` and a ``log_responsibilities``; those are imported from their modules.
"""
from fgraph.models.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "gmm": ["GMMPriors", "GMMNetwork", "build_gmm", "gmm_schedule", "initial_responsibilities", "fit_gmm", "GMMFit",
            "fit_gmm_copies", "GMMCopiesFit", "predictive_log_density", "sklearn_lower_bound_offset"],
    "bayesian_gmm": ["BayesianGMM"],
    "bmlr": ["BMLRPriors", "BMLRNetwork", "BMLRFit", "build_bmlr", "build_bmlr_from_statistics", "bmlr_statistics",
             "RegressionStatistics", "bmlr_schedule", "fit_bmlr", "random_responsibilities", "pooled_noise_precision",
             "coefficient_sum", "coefficient_sum_interval"],
})
