"""The estimators' ``to_arviz``: posterior draws of the parameters and pointwise log-likelihoods as ArviZ data.

Each estimator supplies two functions of its fitted posterior:

* ``draw(count, rng) -> {name: array (count, ...)}`` — ``count`` draws of its parameters from q;
* ``log_likelihood(draws, X, labels, rng) -> array (count, n_samples)`` — ``log p(y_i | x_i, θ_s)`` at every draw
  ``θ_s`` (``labels``: the rows' class indices into ``classes_``; ``None`` for a density estimator, whose
  observation is ``X`` itself; ``rng`` for a log-likelihood that integrates a latent variable by Monte Carlo).
  It may also return ``(array, latent)``: ``latent`` a dict of the per-row latent values it drew
  (``{name: (count, n_samples, ...)}``), stored in ``posterior`` beside the parameters.

:func:`export` checks the inputs, draws, and builds the ``arviz.InferenceData`` with the one builder of
:func:`fgraph.arviz_export.inference_data`: ``posterior`` (one chain), and, given the data, ``log_likelihood``
and ``observed_data`` under the name ``y`` (``X`` for a density estimator), so that ``arviz.waic`` and
``arviz.loo`` apply. The estimators keep no training data: without ``X`` (and ``y``) the export holds the
posterior alone.
"""
from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from fgraph.arviz_export import check_draws, import_arviz, inference_data
from fgraph.errors import DataError
from fgraph.models.estimators import validate_data

__all__ = ["export", "class_indices"]


def export(estimator, X, y, draws: int, seed, draw, log_likelihood, supervised: bool = True, dims: dict | None = None):
    """The ``arviz.InferenceData`` of a fitted estimator (module docstring); ``dims`` names the axes of the
    variables after (chain, draw), as in ``arviz.from_dict``, the observation's axis included."""
    import_arviz()  # before any work: a missing arviz is said first
    check_is_fitted(estimator)
    count, _, rng = check_draws(draws, 1, seed)
    name = type(estimator).__name__
    if supervised and (X is None) != (y is None):
        raise DataError(f"{name}.to_arviz: pass both X and y (for the log_likelihood group) or neither "
                        "(the posterior alone)")
    parameters = draw(count, rng)
    posterior = {key: np.asarray(value)[None] for key, value in parameters.items()}
    if X is None:
        return inference_data(posterior, dims=dims)
    X = validate_data(estimator, X, reset=False)
    labels = class_indices(estimator, X, y) if supervised else None
    values = log_likelihood(parameters, X, labels, rng)
    if isinstance(values, tuple):
        values, latent = values
        posterior.update({key: np.asarray(value)[None] for key, value in latent.items()})
    observed = "y" if supervised else "X"
    return inference_data(posterior, {observed: np.asarray(values, dtype=float)[None]},
                          {observed: np.asarray(y) if supervised else X}, dims=dims)


def class_indices(estimator, X, y) -> np.ndarray:
    """``y`` as indices into the estimator's ``classes_``; a DataError for a label it was not fitted to."""
    y = np.asarray(y)
    name = type(estimator).__name__
    if y.shape != (len(X),):
        raise DataError(f"{name}.to_arviz: y must hold one label per row of X ({len(X)}), got shape {y.shape}")
    classes = estimator.classes_
    indices = np.clip(np.searchsorted(classes, y), 0, len(classes) - 1)
    unknown = classes[indices] != y
    if np.any(unknown):
        raise DataError(f"{name}.to_arviz: y holds labels the estimator was not fitted to, e.g. "
                        f"{y[np.argmax(unknown)].item()!r}; its classes are {classes.tolist()}")
    return indices
