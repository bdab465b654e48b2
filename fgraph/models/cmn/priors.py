"""The priors of the conditional mixture network, eq. (4) of Heins et al. (CAVI-CMN).

One definition shared by the graph (:mod:`fgraph.models.cmn`) and the
baselines (:mod:`fgraph_experiments.baselines`), so that every method fits the
same model.

**The sticks' prior bias** (``stick_bias``, on by default; the authors' code, not eq. (4)). The authors'
implementation (VersesTech/cavi-cmn, ``MultinomialRegression.__init__``) gives the intercept of stick j of J the
prior mean −log(J − j), for the gate's K − 1 sticks and the output's L − 1: at x = 0 the prior means then give
every class (expert) the same probability, σ(−log(J − j)) = 1/(J − j + 1) of what the sticks before it left.
Eq. (4) has zero means (``stick_bias=False``), which at x = 0 give class j < J the share 2^−(j+1) and the last
2^−J: half to the first class, whatever the labels' order. With the bias and the initial state at the prior
means (the defaults of :func:`fgraph.models.cmn.graph.fit_cmn` and ``CMNClassifier``) the held-out log predictive
density is better than eq. (4)'s on most of the paper's data sets (``docs/cmn-experiments.md``, "Held-out: which
setting is the better model").
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from fgraph.errors import ModelError

__all__ = ["CMNPriors"]


@dataclass(frozen=True)
class CMNPriors:
    """Eq. (4): A_k | Λ_k ~ MN(0, Λ_k⁻¹, v0 I), λ_ki ~ Gamma(a0, rate b0), β0_j ~ N(b_j, σ0² I), β1_l ~ N(b_l, σ1² I)
    with the sticks' prior means b zero but for the intercepts −log(J − j) (``stick_bias``, module docstring);
    ``CMNPriors(stick_bias=False)`` is eq. (4) exactly."""

    v0: float = 10.0
    a0: float = 2.0
    b0: float = 1.0
    sigma0: float = 5.0
    sigma1: float = 5.0
    #: the intercepts' prior means −log(J − j) of the authors' code (module docstring); False: eq. (4)'s zeros
    stick_bias: bool = True

    def stick_prior_means(self, sticks: int, size: int) -> np.ndarray:
        """The prior means of ``sticks`` stick-breaking coefficient vectors of length ``size`` (the intercept last),
        shape (sticks, size): zeros, or with ``stick_bias`` the intercepts −log(sticks − j)."""
        means = np.zeros((sticks, size))
        if self.stick_bias:
            means[:, -1] = -np.log(sticks - np.arange(sticks))
        return means

    def __post_init__(self):
        if not isinstance(self.stick_bias, (bool, np.bool_)):
            raise ModelError(f"CMNPriors: stick_bias must be True or False, got {self.stick_bias!r}")
        for name in ("v0", "a0", "b0", "sigma0", "sigma1"):
            value = getattr(self, name)
            if not isinstance(value, numbers.Real) or not np.isfinite(value) or value <= 0:
                raise ModelError(f"CMNPriors: {name} must be a positive finite number, got {value!r}")
