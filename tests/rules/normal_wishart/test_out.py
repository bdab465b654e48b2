"""Table test of the normal–Wishart prior node towards ``out``: the factor itself."""
import numpy as np

from fgraph.families import PointMass
from fgraph.families.normal_wishart import NormalWishart
from fgraph.nodes.normal_wishart import NormalWishartNode
from tests.rules.tables import assert_message, message


def test_out_is_the_prior_itself():
    W = np.array([[2.0, 0.5], [0.5, 1.0]])
    result = message(NormalWishartNode, "out", {"q_mean": PointMass(np.array([1.0, -1.0]), 1),
                                                "q_precision_scale": PointMass(0.5), "q_scale": PointMass(W, 2),
                                                "q_df": PointMass(3.0)})
    # E[Λ] = ν W, E[Λμ] = ν W m = 3 (1.5, −0.5), E[μᵀΛμ] = d/β + ν mᵀWm = 4 + 3 · 2
    assert_message(result, {"family": NormalWishart, "location": [1.0, -1.0], "precision_scale": 0.5, "scale": W,
                            "df": 3.0, "mean_precision": 3.0 * W, "mean_precision_times_mean": [4.5, -1.5],
                            "mean_quadratic": 10.0})
