"""Addition with a mixture on one input: the mixture passes through component by component, weights unchanged.

Every combination registered in ``rules/addition/mixture.py`` has a case,
with the components worked out by hand: in1 = out − in2, in2 = out − in1,
out = in1 + in2, means adding or subtracting and variances adding (a point
mass has variance 0). The inputs are chosen so that no two targets give the
same answer for the same inputs.
"""
import numpy as np
import pytest

from fgraph.families import Mixture, NormalMeanVariance, PointMass, UnivariateNormal
from fgraph.nodes.addition import Addition
from fgraph.rules.addition.mixture import MIXTURE_INPUTS
from tests.rules.tables import message

WEIGHTS = np.array([0.3, 0.7])


def point_masses(*values):
    return Mixture.create(np.log(WEIGHTS), [PointMass(v) for v in values])


def normals(*pairs):
    return Mixture.create(np.log(WEIGHTS), [NormalMeanVariance(m, v) for m, v in pairs])


SWITCHED = point_masses(1.0, 2.0)  # a switch between the constants 1 and 2
GAUSSIANS = normals((1.0, 2.0), (-1.0, 0.5))  # 0.3 N(1, 2) + 0.7 N(−1, 0.5)
OTHER = NormalMeanVariance(1.5, 3.0)
Y, C = PointMass(5.0), PointMass(0.25)

CASES = [
    # ------------------------------------------------------------ towards in1 = out − in2
    pytest.param("in1", {"q_out": Y, "m_in2": SWITCHED}, PointMass, [4.0, 3.0], None, id="in1-observed-out-switched"),
    pytest.param("in1", {"q_out": Y, "m_in2": GAUSSIANS}, UnivariateNormal, [4.0, 6.0], [2.0, 0.5],
                 id="in1-observed-out-gaussians"),
    # m_out(in1 + c): means μ_k − 0.25
    pytest.param("in1", {"m_out": GAUSSIANS, "q_in2": C}, UnivariateNormal, [0.75, -1.25], [2.0, 0.5],
                 id="in1-mixture-out-constant-in2"),
    pytest.param("in1", {"m_out": SWITCHED, "q_in2": C}, PointMass, [0.75, 1.75], None,
                 id="in1-switched-out-constant-in2"),
    # μ_k − 1.5, v_k + 3
    pytest.param("in1", {"m_out": GAUSSIANS, "m_in2": OTHER}, UnivariateNormal, [-0.5, -2.5], [5.0, 3.5],
                 id="in1-mixture-out"),
    # 1.5 − μ_k, 3 + v_k
    pytest.param("in1", {"m_out": OTHER, "m_in2": GAUSSIANS}, UnivariateNormal, [0.5, 2.5], [5.0, 3.5],
                 id="in1-mixture-in2"),
    pytest.param("in1", {"m_out": OTHER, "m_in2": SWITCHED}, UnivariateNormal, [0.5, -0.5], [3.0, 3.0],
                 id="in1-switched-in2"),
    # ------------------------------------------------------------ towards in2 = out − in1
    pytest.param("in2", {"q_out": Y, "m_in1": SWITCHED}, PointMass, [4.0, 3.0], None, id="in2-observed-out-switched"),
    pytest.param("in2", {"q_out": Y, "m_in1": GAUSSIANS}, UnivariateNormal, [4.0, 6.0], [2.0, 0.5],
                 id="in2-observed-out-gaussians"),
    pytest.param("in2", {"m_out": GAUSSIANS, "q_in1": C}, UnivariateNormal, [0.75, -1.25], [2.0, 0.5],
                 id="in2-mixture-out-constant-in1"),
    pytest.param("in2", {"m_out": GAUSSIANS, "m_in1": OTHER}, UnivariateNormal, [-0.5, -2.5], [5.0, 3.5],
                 id="in2-mixture-out"),
    pytest.param("in2", {"m_out": OTHER, "m_in1": GAUSSIANS}, UnivariateNormal, [0.5, 2.5], [5.0, 3.5],
                 id="in2-mixture-in1"),
    # ------------------------------------------------------------ towards out = in1 + in2
    # μ_k + 0.25
    pytest.param("out", {"m_in1": GAUSSIANS, "q_in2": C}, UnivariateNormal, [1.25, -0.75], [2.0, 0.5],
                 id="out-mixture-in1-constant-in2"),
    pytest.param("out", {"q_in1": C, "m_in2": GAUSSIANS}, UnivariateNormal, [1.25, -0.75], [2.0, 0.5],
                 id="out-constant-in1-mixture-in2"),
    # μ_k + 1.5, v_k + 3
    pytest.param("out", {"m_in1": GAUSSIANS, "m_in2": OTHER}, UnivariateNormal, [2.5, 0.5], [5.0, 3.5],
                 id="out-mixture-in1"),
    pytest.param("out", {"m_in1": OTHER, "m_in2": GAUSSIANS}, UnivariateNormal, [2.5, 0.5], [5.0, 3.5],
                 id="out-mixture-in2"),
]


@pytest.mark.parametrize("target, inputs, family, means, variances", CASES)
def test_mixture_passes_through_component_by_component(target, inputs, family, means, variances):
    result = message(Addition, target, inputs)
    assert isinstance(result, Mixture) and result.component_family is family
    np.testing.assert_allclose(result.log_scale, 0.0, atol=1e-12)
    np.testing.assert_allclose(result.weights, WEIGHTS, rtol=1e-12)
    np.testing.assert_allclose([c.mean for c in result.components], means, rtol=1e-12)
    if variances is not None:
        np.testing.assert_allclose([c.var for c in result.components], variances, rtol=1e-12)


def test_every_registered_combination_has_a_case():
    """The table above covers every input combination the module registers."""
    def signature(inputs):
        return frozenset((name, Mixture if isinstance(value, Mixture) else
                          PointMass if isinstance(value, PointMass) else UnivariateNormal)
                         for name, value in inputs.items())

    covered = {(case.values[0], signature(case.values[1])) for case in CASES}
    for target, combinations in MIXTURE_INPUTS.items():
        for families in combinations:
            assert (target, frozenset(families.items())) in covered, (target, families)

