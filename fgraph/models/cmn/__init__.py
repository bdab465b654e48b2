"""The conditional mixture network (CAVI-CMN of Heins et al.): the graph, its schedule and fit
(:mod:`~fgraph.models.cmn.graph`), the priors of eq. (4) (:mod:`~fgraph.models.cmn.priors`), the posterior
predictive and pointwise log-likelihoods (:mod:`~fgraph.models.cmn.predictive`), the authors' bound predictive
(:mod:`~fgraph.models.cmn.bound_predictive`) and the scikit-learn
``CMNClassifier`` (:mod:`~fgraph.models.cmn.classifier`).

The names below are exported lazily: ``import fgraph.models.cmn`` does not import scikit-learn.
"""
from fgraph.models.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "graph": ["CMNNetwork", "build_cmn", "cmn_schedule", "initial_state", "fit_cmn", "posteriors"],
    "priors": ["CMNPriors"],
    "predictive": ["predictive_log_proba", "standard_t_points", "posterior_draws", "pointwise_log_likelihood",
                   "log_likelihood_given_draws", "gate_log_probabilities", "expert_t_parameters", "expected_sigmoid",
                   "stick_probabilities"],
    "bound_predictive": ["bound_predictive_log_proba"],
    "classifier": ["CMNClassifier"],
})
