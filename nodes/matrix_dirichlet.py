"""MatrixDirichlet factor node: f(out, alpha) = prod_j Dir(out[:, j] | alpha[:, j]).

``out`` is a column-stochastic ``K_out x K_in`` matrix (a transition matrix
whose column ``j`` is the distribution of the next state given state ``j``)
and ``alpha`` the matching matrix of positive concentrations (event rank 2).
"""
from __future__ import annotations

import numpy as np

from fgraph.families import Distribution, PointMass
from fgraph.families.dirichlet import log_multivariate_beta
from fgraph.model import Variable, random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.support import OPEN_COLUMN_STOCHASTIC, POSITIVE
from fgraph.nodes.categorical import times_log

__all__ = ["MatrixDirichlet", "MatrixDirichletNode"]


class MatrixDirichletNode(FactorNode):
    interfaces = ("out", "alpha")
    event_ndims = {"out": 2, "alpha": 2}
    support = {"out": OPEN_COLUMN_STOCHASTIC, "alpha": POSITIVE}

    @classmethod
    def out_event_shape(cls, parameters) -> tuple:
        alpha = parameters["alpha"]
        shape = alpha.event_shape if isinstance(alpha, Variable) else np.shape(alpha)
        return tuple(shape[-2:])


def MatrixDirichlet(name, alpha, observed=None, batch_shape=None, power=1.0):
    """Factor: adds to the model a column-stochastic matrix ``name`` with independent ``Dir(alpha[:, j])`` columns.

    ``alpha`` has shape ``batch + (K_out, K_in)`` (> 0, fixed). Used as the
    prior of the matrix of a discrete ``Transition`` node.
    """
    return random_variable(MatrixDirichletNode, name, {"alpha": alpha}, observed, batch_shape, power)


@average_energy(MatrixDirichletNode)
def _matrix_dirichlet_energy(q_out: Distribution, q_alpha: PointMass):
    """``-sum_ij (alpha_ij - 1) E[log out_ij] + sum_j log B(alpha[:, j])`` for fixed concentrations."""
    alpha = q_alpha.value
    log_normaliser = log_multivariate_beta(np.swapaxes(alpha, -1, -2)).sum(axis=-1)
    return -times_log(alpha - 1.0, q_out.mean_log).sum(axis=(-2, -1)) + log_normaliser
