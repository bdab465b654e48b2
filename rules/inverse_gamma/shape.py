"""Messages out of the InverseGamma node towards ``shape`` (not conjugate: a GammaShapeLikelihood).

As a function of the shape α, ``exp E_q[log InverseGamma(out | α, β)]
= exp(α (E[log β] - E[log out]) - log Γ(α)) · exp(-E[log out] - E[β] E[1/out])``,
the same non-conjugate form as for the Gamma node's shape (see
``rules/gamma/shape.py`` for the representation and why).
"""
from fgraph.families import Distribution
from fgraph.families.gamma_shape import GammaShapeLikelihood
from fgraph.registry import rule
from fgraph.nodes.inverse_gamma import InverseGammaNode


@rule(InverseGammaNode, "shape")
def mean_field(q_out: Distribution, q_scale: Distribution) -> GammaShapeLikelihood:
    """exp(κ) exp(α c - log Γ(α)) with ``c = E[log β] - E[log out]``, ``κ = -E[log out] - E[β] E[1/out]``.

    Exact (the sum-product message) for a clamped ``out`` and ``scale``.
    """
    mean_log_out = q_out.mean_log
    eta = (0.0, q_scale.mean_log - mean_log_out, -1.0)  # (α - 1, -b, -n) for α = 1, n = 1
    return GammaShapeLikelihood.from_coefficient(eta, -mean_log_out - q_scale.mean * q_out.mean_inverse)
