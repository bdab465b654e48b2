"""Small models shared by several test modules."""
from __future__ import annotations

import fgraph as fg
from nodes import Normal
from nodes.normal import NormalMeanVariance


def loopy_gaussian_model(y=1.7):
    """x ~ N(0, 1); two factors N(z | x, 1) and N(z | x, 2) between the same pair (one loop); y ~ N(z, 1).

    Exact posterior: z's two factors combine into N(z | x, 2/3), so the model
    is the chain x ~ N(0, 1), z | x ~ N(x, 2/3), y | z ~ N(z, 1).
    """
    with fg.Model() as model:
        x = Normal("x", mean=0.0, var=1.0)
        z = Normal("z", mean=x, var=1.0)
        model.add_node(NormalMeanVariance, "second", {"out": z, "mean": x, "var": 2.0})
        Normal("y", mean=z, var=1.0, observed=y)
    return model
