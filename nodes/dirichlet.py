"""Dirichlet factor node: f(out, alpha) = Dir(out | alpha) = prod_k out_k**(alpha_k - 1) / B(alpha).

``out`` is a probability vector of length K and ``alpha`` a vector of K
positive concentrations (event rank 1 for both).
"""
from __future__ import annotations


from fgraph.families import Distribution, PointMass
from fgraph.families.dirichlet import log_multivariate_beta
from fgraph.model import random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.support import OPEN_SIMPLEX, POSITIVE
from fgraph.nodes.categorical import num_categories_of, times_log

__all__ = ["Dirichlet", "DirichletNode"]


class DirichletNode(FactorNode):
    energy_is_log_density = True
    interfaces = ("out", "alpha")
    event_ndims = {"out": 1, "alpha": 1}
    support = {"out": OPEN_SIMPLEX, "alpha": POSITIVE}

    @classmethod
    def out_event_shape(cls, parameters) -> tuple:
        return (num_categories_of(parameters["alpha"], axis=-1),)


def Dirichlet(name, alpha, observed=None, batch_shape=None, power=1.0):
    """Factor: adds to the model a probability vector ``name ~ Dir(alpha)``; ``alpha`` (shape ``batch + (K,)``, > 0) is fixed."""
    return random_variable(DirichletNode, name, {"alpha": alpha}, observed, batch_shape, power)


@average_energy(DirichletNode)
def _dirichlet_energy(q_out: Distribution, q_alpha: PointMass):
    """``-sum_k (alpha_k - 1) E[log out_k] + log B(alpha)`` for fixed concentrations."""
    alpha = q_alpha.value
    return -times_log(alpha - 1.0, q_out.mean_log).sum(axis=-1) + log_multivariate_beta(alpha)
