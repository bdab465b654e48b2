"""Gaussian processes on the graph: regression with a known noise variance per point
(:mod:`~fgraph.models.gp.regression`) and its sparse variational form for large N (:mod:`~fgraph.models.gp.sparse`),
hyperparameters by the evidence (:mod:`~fgraph.models.gp.hyperparameters`),
and classification as heteroscedastic regression on the Gaussian pseudo-observations of the labels
(:mod:`~fgraph.models.gp.classifier`).

The names below are exported lazily: ``import fgraph.models.gp`` does not import scikit-learn.
"""
from fgraph.models.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "regression": ["GPPosterior", "gp_posterior", "log_evidence_gradients", "EvidenceGradients"],
    "hyperparameters": ["maximise_evidence", "EvidenceFit"],
    "variational": ["classification_bound", "gp_kl_divergences"],
    "sparse": ["SparseGPPosterior", "sparse_gp_posterior", "sparse_log_evidence_gradients", "kmeans_inducing_inputs"],
    "classifier": ["GPClassifier", "pseudo_observations", "pseudo_observation_derivatives"],
})
