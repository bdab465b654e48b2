"""Bayesian model reduction: the posterior under another prior, without refitting."""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.families.dirichlet import Dirichlet as DirichletDistribution
from fgraph.families.dirichlet import log_multivariate_beta


def dirichlet_model_reduction(posterior_alpha, prior_alpha, reduced_alpha):
    """Replace the prior of a Dirichlet posterior without refitting (Bayesian model reduction).

    For a posterior ``Dir(α̃)`` obtained under the prior ``Dir(α)`` from a
    likelihood that does not depend on the prior, the posterior under the
    prior ``Dir(α')`` is ``Dir(α̃ − α + α')`` and the log evidence changes by

        log B(α̃ − α + α') − log B(α̃) − log B(α') + log B(α),

    with ``B`` the multivariate Beta function (Friston, Parr and Zeidman
    2019). Arrays broadcast over leading (batch) axes; the last axis holds the
    K concentrations.

    Returns
    -------
    (Dirichlet, change in log evidence in nats, shape batch)
    """
    posterior_alpha, prior_alpha, reduced_alpha = (np.asarray(a, dtype=float) for a in (posterior_alpha, prior_alpha, reduced_alpha))
    for argument, value in (("posterior_alpha", posterior_alpha), ("prior_alpha", prior_alpha), ("reduced_alpha", reduced_alpha)):
        if value.ndim < 1 or not np.all(np.isfinite(value)) or np.any(value <= 0.0):
            raise ModelError(f"{argument} must be a vector of positive, finite concentrations, got {value!r}")
    alpha = posterior_alpha - prior_alpha + reduced_alpha
    if np.any(alpha <= 0.0):
        raise ModelError(
            "the reduced posterior α̃ − α + α' has a non-positive concentration; the reduced prior must not "
            "remove more than the data added"
        )
    change = (
        log_multivariate_beta(alpha)
        - log_multivariate_beta(posterior_alpha)
        - log_multivariate_beta(reduced_alpha)
        + log_multivariate_beta(prior_alpha)
    )
    return DirichletDistribution(alpha), change
