"""The priors of the conditional mixture network, eq. (4) of Heins et al. (CAVI-CMN).

One definition shared by the graph (:mod:`fgraph.models.cmn`) and the
baselines (:mod:`fgraph_experiments.baselines`), so that every method fits the
same model.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from fgraph.errors import ModelError

__all__ = ["CMNPriors"]


@dataclass(frozen=True)
class CMNPriors:
    """Eq. (4): A_k | Λ_k ~ MN(0, Λ_k⁻¹, v0 I), λ_ki ~ Gamma(a0, rate b0), β0 ~ N(0, σ0² I), β1 ~ N(0, σ1² I)."""

    v0: float = 10.0
    a0: float = 2.0
    b0: float = 1.0
    sigma0: float = 5.0
    sigma1: float = 5.0

    def __post_init__(self):
        for name in ("v0", "a0", "b0", "sigma0", "sigma1"):
            value = getattr(self, name)
            if not isinstance(value, numbers.Real) or not np.isfinite(value) or value <= 0:
                raise ModelError(f"CMNPriors: {name} must be a positive finite number, got {value!r}")
