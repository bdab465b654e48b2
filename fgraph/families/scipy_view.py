"""A marginal as a frozen ``scipy.stats`` distribution: ``result.marginal("x").to_scipy()``.

For quantiles, intervals, CDFs and everything else scipy offers on a posterior marginal. The parameters map as

================================  =====================================================================
family                            scipy
================================  =====================================================================
univariate normal                 ``norm(loc=mean, scale=√var)``
``Gamma(shape, rate)``            ``gamma(a=shape, scale=1/rate)``
``InverseGamma(shape, scale)``    ``invgamma(a=shape, scale=scale)``
``Beta(a, b)``                    ``beta(a, b)``
``Bernoulli(p)``                  ``bernoulli(p)``
multivariate normal               ``multivariate_normal(mean, cov)``
``Dirichlet(α)``                  ``dirichlet(α)``
``Categorical(p)``                ``rv_discrete(values=(0..K−1, p))`` (the state's index)
``Wishart(ν, S)``                 ``wishart(df=ν, scale=S)``
================================  =====================================================================

The univariate ones keep the batch (scipy broadcasts their parameters: ``.ppf(0.975)`` has the batch shape);
scipy's multivariate and discrete distributions take one parameter set, so a batched marginal is refused with
the way out (``q[i].to_scipy()``). Messages that are not distributions (a likelihood with flat directions), point
masses and mixtures have no scipy counterpart and say so.
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.families.base import SCIPY_VIEW
from fgraph.families.bernoulli import Bernoulli
from fgraph.families.beta import Beta
from fgraph.families.categorical import Categorical
from fgraph.families.dirichlet import Dirichlet
from fgraph.families.gamma import Gamma
from fgraph.families.inverse_gamma import InverseGamma, InverseGammaLikelihood
from fgraph.families.mvnormal import GaussianLikelihood, MultivariateNormal
from fgraph.families.normal import UnivariateNormal
from fgraph.families.wishart import Wishart

__all__ = ["to_scipy"]


def _one(distribution, kind: str):
    if distribution.batch_shape:
        raise ModelError(f"to_scipy: scipy's {kind} takes one parameter set, and this {type(distribution).__name__} "
                         f"has the batch shape {distribution.batch_shape}; select one element first, "
                         "e.g. q[0].to_scipy()")


def to_scipy(distribution):
    """The frozen ``scipy.stats`` distribution equal to ``distribution`` (module docstring)."""
    from scipy import stats  # on first use: `import fgraph` does not load scipy

    name = type(distribution).__name__
    if isinstance(distribution, (GaussianLikelihood, InverseGammaLikelihood)):
        raise ModelError(f"to_scipy: a {name} is a likelihood with flat directions, not a distribution; "
                         "multiply it with a prior first")
    if isinstance(distribution, UnivariateNormal):
        return stats.norm(loc=np.asarray(distribution.mean), scale=np.sqrt(np.asarray(distribution.var)))
    if isinstance(distribution, Gamma):
        return stats.gamma(a=np.asarray(distribution.shape), scale=1.0 / np.asarray(distribution.rate))
    if isinstance(distribution, InverseGamma):
        return stats.invgamma(a=np.asarray(distribution.shape), scale=np.asarray(distribution.scale))
    if isinstance(distribution, Beta):
        return stats.beta(np.asarray(distribution.a), np.asarray(distribution.b))
    if isinstance(distribution, Bernoulli):
        return stats.bernoulli(np.asarray(distribution.p))
    if isinstance(distribution, MultivariateNormal):
        _one(distribution, "multivariate_normal")
        return stats.multivariate_normal(np.asarray(distribution.mean), np.asarray(distribution.cov))
    if isinstance(distribution, Dirichlet):
        _one(distribution, "dirichlet")
        return stats.dirichlet(np.asarray(distribution.alpha))
    if isinstance(distribution, Categorical):
        _one(distribution, "rv_discrete")
        probabilities = np.asarray(distribution.probabilities, dtype=float)
        return stats.rv_discrete(values=(np.arange(probabilities.shape[-1]), probabilities))
    if isinstance(distribution, Wishart):
        _one(distribution, "wishart")
        return stats.wishart(df=float(distribution.df), scale=np.asarray(distribution.scale))
    raise ModelError(f"to_scipy: a {name} has no scipy.stats counterpart (point masses and mixtures have none); "
                     "read its moments (.mean, .var) or sample it (.sample(rng))")


SCIPY_VIEW["to_scipy"] = to_scipy
