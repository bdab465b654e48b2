"""Messages out of the Gamma node towards ``shape``: not conjugate, a GammaShapeLikelihood.

As a function of the shape ``a``,

    exp E_q[log Gamma(out | a, β)] = exp(a (E[log β] + E[log out]) - log Γ(a)) · exp(-E[log out] - E[β] E[out]),

which no standard family represents (``log Γ(a)`` is a sufficient
statistic). The message is kept exactly, as the density
``a^(α-1) exp(-b a) / Γ(a)^n`` with ``α = 1``, ``b = -(E[log β] + E[log out])``
and ``n = 1`` (:class:`~fgraph.families.gamma_shape.GammaShapeLikelihood`,
ReactiveMP's ``GammaShapeLikelihood(1, E[log β] + E[log out])``). Its product
with a Gamma prior on the shape stays in that family and is normalised, with
its moments ``E[a]``, ``E[log a]`` and ``E[log Γ(a)]``, by one-dimensional
quadrature. So the VMP update of the shape is the exact mean-field update —
no projection onto a Gamma (Laplace or moment matching) — and the free
energy keeps decreasing; the price is a quadrature per update of the shape.
"""
from fgraph.families import Distribution, PointMass
from fgraph.families.gamma_shape import GammaShapeLikelihood
from fgraph.plates import EmpiricalMoments
from fgraph.registry import plate_rule, rule
from fgraph.nodes.gamma import GammaNode


@rule(GammaNode, "shape")
def mean_field(q_out: Distribution, q_rate: Distribution) -> GammaShapeLikelihood:
    """exp E_q[log Gamma(out | a, β)] = exp(κ) exp(a c - log Γ(a)), ``c = E[log β] + E[log out]``.

    Returned with its coefficient ``κ = -E[log out] - E[β] E[out]`` (log-scale
    ``κ + log ∫ exp(a c - log Γ(a)) da``), so that with a clamped ``out`` and
    ``rate`` it is the exact sum-product message (the likelihood of the
    shape, which integrates to a finite value).
    """
    mean_log_out = q_out.mean_log
    eta = (0.0, q_rate.mean_log + mean_log_out, -1.0)  # (α - 1, -b, -n) for α = 1, n = 1
    return GammaShapeLikelihood.from_coefficient(eta, -mean_log_out - q_rate.mean * q_out.mean)


@plate_rule(GammaNode, "shape")
def observed_plate(q_out: EmpiricalMoments, q_rate: PointMass) -> GammaShapeLikelihood:
    """Π_i Gamma(x_i | a, β) over N observations = exp(κ) exp(a N (log β + mean log x) - N log Γ(a)).

    ``κ = -N (mean log x) - β N (mean x)``: one quadrature for the plate.
    """
    count = q_out.count
    mean_log_out = q_out.mean_log
    eta = (0.0, count * (q_rate.mean_log + mean_log_out), -count)
    return GammaShapeLikelihood.from_coefficient(eta, -count * (mean_log_out + q_rate.mean * q_out.mean))
