"""Models assembled from nodes, with scikit-learn estimators on top, one package per model family.

A model here is a graph of :mod:`fgraph.nodes` built, compiled and run by the engine; the estimators wrap it in
scikit-learn's interface (``fit``, ``predict_proba``, ``score``, pipelines, cross-validation). This package sits
above the nodes and rules, beside :mod:`fgraph.comparison`: ``import fgraph`` does not load it, and
``import fgraph.models`` loads none of the families (nor scikit-learn) until a name is used::

    from fgraph.models import BayesianLogisticRegression, MultinomialLogisticRegression, BayesianGMM, CMNClassifier
    from fgraph.models import GPClassifier

The families:

* :mod:`fgraph.models.logistic` — binary and multinomial Bayesian logistic regression, the exact model's bound
  that chooses a likelihood approximation, the conjugate Gaussian update they stream with;
* :mod:`fgraph.models.cmn` — the conditional mixture network (CAVI-CMN): graph, priors, predictive, classifier;
* :mod:`fgraph.models.gp` — Gaussian processes: exact regression on the graph with its evidence and gradients, the
  sparse variational GP, the exact model's bound, and :class:`~fgraph.models.gp.GPClassifier`;
* :mod:`fgraph.models.mixtures` — the Bayesian Gaussian mixture (graph and estimator) and the Bayesian mixture
  linear regression;
* :mod:`fgraph.models.tvb` — Trustworthy VB: the TVB tables of both mixtures, credible intervals, the choice of ω;
* :mod:`fgraph.models.vad` — voice activity detection by a hidden Markov switch.

Shared by several families: :mod:`fgraph.models.estimators` (the estimators' input checks),
:mod:`fgraph.models.streaming` (:class:`~fgraph.models.streaming.OnlineFilter`), :mod:`fgraph.models.convergence`
and :mod:`fgraph.models.workers`. The experiments' baselines are :mod:`fgraph_experiments.vad_baselines`,
:mod:`fgraph_experiments.online_baselines` and :mod:`fgraph_experiments.baselines` (JAX).

scikit-learn is an optional dependency (the ``models`` extra: ``pip install fgraph-mp[models]``).
"""
from fgraph.models.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "logistic.binary": ["BayesianLogisticRegression"],
    "logistic.multinomial": ["MultinomialLogisticRegression"],
    "mixtures.bayesian_gmm": ["BayesianGMM"],
    "cmn.classifier": ["CMNClassifier"],
    "gp.classifier": ["GPClassifier"],
})
