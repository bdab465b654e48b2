"""A plate of Gaussian likelihood messages given by their sums; the elements formed only if asked.

Over a plate of N observations ``(x_n, y_n)`` each sending a global vector
``β`` (dimension D) a Gaussian message ``exp(ξ_nᵀβ − ½ βᵀ W_n β)``, the
equality node of ``β`` reads only the sums ``Σ_n ξ_n`` and ``Σ_n W_n``
(:meth:`~fgraph.families.base.ExponentialFamily.natural_parameter_totals`).
A rule often has them from a couple of matrix products over the data
(``Σ_n w_n x_n x_nᵀ = Xᵀ diag(w) X``) while the elements would be N D×D
matrices: 350 MB for N = 10⁵, D = 21. :class:`GaussianLikelihoodOnDemand`
holds the sums and a function that makes the elements, called only when
something needs them (a product with another plate, a power, an element).
"""
from __future__ import annotations

import numpy as np

from fgraph.families.mvnormal import GaussianLikelihood

__all__ = ["GaussianLikelihoodOnDemand"]


class GaussianLikelihoodOnDemand(GaussianLikelihood):
    """N Gaussian likelihoods ``exp(ξ_nᵀx − ½ xᵀ W_n x)`` (coefficient 0) given by ``Σ ξ_n`` and ``Σ W_n``.

    Parameters
    ----------
    elements : callable () -> (ndarray ``batch + (D,)``, ndarray ``batch + (D, D)``)
        The per-element weighted means ``ξ_n`` and precisions ``W_n``; they
        must sum to ``totals``.
    batch_shape : tuple
    totals : (ndarray ``(D,)``, ndarray ``(D, D)``)
        ``Σ_n ξ_n`` and ``Σ_n W_n`` over every batch axis (after the first ``keep``).
    keep : int
        Leading batch axes not summed in ``totals`` (shapes ``batch_shape[:keep] + (D,)`` and
        ``+ (D, D)``): the copies of a model with copies, each with its own sums.
    log_scale : array broadcastable to ``batch_shape``, optional
        The log-coefficients κ_n (a sum-product message carries the evidence); 0 by default (a
        variational message is defined up to a constant).
    """

    def __init__(self, elements, batch_shape: tuple, totals: tuple, keep: int = 0, log_scale=None):
        weighted_mean_total, precision_total = (np.asarray(t, dtype=float) for t in totals)
        self._elements = elements
        self._batch_shape = tuple(batch_shape)
        self._event_shape = weighted_mean_total.shape[-1:]
        if weighted_mean_total.shape != self._batch_shape[:keep] + self._event_shape:
            raise ValueError(f"the totals have shape {weighted_mean_total.shape}; summed over the batch {batch_shape} "
                             f"but its first {keep} axes they have {self._batch_shape[:keep] + self._event_shape}")
        self.with_natural_parameter_totals((weighted_mean_total, -0.5 * precision_total), keep)
        self._set_log_scale(log_scale)

    def __getattr__(self, name):
        # the stored parameters of the base class, made on first use
        if name in ("_weighted_mean", "_precision"):
            weighted_mean, precision = (np.asarray(a, dtype=float) for a in self._elements())
            expected = (self._batch_shape + self._event_shape, self._batch_shape + self._event_shape * 2)
            if (weighted_mean.shape, precision.shape) != expected:
                raise ValueError(f"the elements have shapes {weighted_mean.shape} and {precision.shape}; "
                                 f"the message's are {expected}")
            self.__dict__["_weighted_mean"], self.__dict__["_precision"] = weighted_mean, precision
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @classmethod
    def from_natural(cls, eta, log_scale=None):
        """Parameters made from others (an element, a power) are plain likelihoods."""
        return GaussianLikelihood.from_natural(eta, log_scale)

    def elements_formed(self) -> bool:
        """Whether the per-element parameters have been made (something asked for them)."""
        return "_precision" in self.__dict__

    def __repr__(self):
        return f"GaussianLikelihoodOnDemand(dim={self.dim}, batch_shape={self.batch_shape})"
