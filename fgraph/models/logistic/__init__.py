"""Bayesian logistic regression: binary (:mod:`~fgraph.models.logistic.binary`) and K classes
(:mod:`~fgraph.models.logistic.multinomial`) as scikit-learn classifiers fitted by message passing, the exact model's
evidence lower bound that chooses a Gaussian likelihood approximation's α_ε (:mod:`~fgraph.models.logistic.bound`),
and the conjugate Gaussian update the approximations stream with (:mod:`~fgraph.models.logistic.conjugate`).

The names below are exported lazily: ``import fgraph.models.logistic`` does not import scikit-learn.
"""
from fgraph.models.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "binary": ["BayesianLogisticRegression", "predictive_log_probabilities", "LIKELIHOODS"],
    "multinomial": ["MultinomialLogisticRegression", "stick_breaking_log_probabilities"],
    "bound": ["BoundChoice", "exact_bound", "approximate_posterior", "choose_epsilon", "exact_softmax_bound",
              "approximate_softmax_posterior", "choose_softmax_epsilon", "expected_log_softmax",
              "expected_softmax", "stick_breaking_log_probabilities_at"],
    "conjugate": ["observe_linear", "observe_one"],
})
