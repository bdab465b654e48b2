"""Every univariate sum-product rule against numerical integration of factor × incoming messages.

For each case the rule's message, evaluated as ``log_scale + logpdf(t)`` on a
grid of points ``t``, must equal ``log ∫ f(t, x) Π m_j(x_j) dx`` computed by
quadrature (see ``tests/rules/quadrature.py``), and its log-scale must equal
``log ∫∫ f(t, x) Π m_j(x_j) dx dt``, both to 1e-7. This checks the messages
and, independently of any model, that each carries the right log-scale
(the quantity the model evidence is assembled from).
"""
import math

import numpy as np
import pytest
from scipy import integrate
from scipy.special import gammaln

from fgraph.families import MvNormalMeanCovariance, NormalMeanPrecision, NormalMeanVariance, PointMass, UnivariateNormal
from fgraph.nodes.addition import Addition
from fgraph.nodes.gamma import GammaNode
from fgraph.nodes.inverse_gamma import InverseGammaNode
from fgraph.nodes.gaussian_linear import GaussianLinear
from fgraph.nodes.multiplication import Multiplication, MvMultiplication
from fgraph.nodes.normal import NormalMeanPrecision as NormalMeanPrecisionNode
from fgraph.nodes.normal import NormalMeanVariance as NormalMeanVarianceNode
from tests.rules.quadrature import DeltaFactor, DensityFactor, log_integral, log_message, normal_pdf
from tests.rules.tables import message

TOLERANCE = 1e-7

NORMAL_MEAN_VARIANCE = DensityFactor(lambda v: normal_pdf(v["out"], v["mean"], v["var"]))


def _normal_mean_precision(v):
    # τ -> 0 is the boundary of the positive range a precision is integrated over; the density vanishes there
    return normal_pdf(v["out"], v["mean"], 1.0 / v["precision"]) if v["precision"] > 0.0 else 0.0


def _gamma(v):
    shape, rate, out = v["shape"], v["rate"], v["out"]
    if rate <= 0.0:
        return 0.0
    return math.exp(shape * math.log(rate) + (shape - 1.0) * math.log(out) - rate * out - gammaln(shape))


def _inverse_gamma(v):
    shape, scale, out = v["shape"], v["scale"], v["out"]
    if scale <= 0.0 or out <= 0.0:
        return 0.0
    return math.exp(shape * math.log(scale) - (shape + 1.0) * math.log(out) - scale / out - gammaln(shape))


NORMAL_MEAN_PRECISION = DensityFactor(_normal_mean_precision)
GAMMA = DensityFactor(_gamma)
INVERSE_GAMMA = DensityFactor(_inverse_gamma)
ADDITION = DeltaFactor({
    "out": lambda v: (v["in1"] + v["in2"], 1.0),
    "in1": lambda v: (v["out"] - v["in2"], 1.0),
    "in2": lambda v: (v["out"] - v["in1"], 1.0),
})


def gaussian_linear(gain):
    return DensityFactor(lambda v: normal_pdf(v["out"], gain * v["in"], v["var"]))


def multiplication(gain):
    # g = out - a in: ∂g/∂out = 1, |∂g/∂in| = |a|
    return DeltaFactor({"out": lambda v: (gain * v["in"], 1.0), "in": lambda v: (v["out"] / gain, abs(gain))})


N = NormalMeanVariance

CASES = [
    # ---- NormalMeanVariance with a point-mass variance
    pytest.param(NORMAL_MEAN_VARIANCE, NormalMeanVarianceNode, "out", {"m_mean": N(0.7, 1.3), "q_var": PointMass(0.6)}, {},
                 id="normal-mean-variance-out"),
    pytest.param(NORMAL_MEAN_VARIANCE, NormalMeanVarianceNode, "mean", {"m_out": N(-1.2, 0.4), "q_var": PointMass(2.5)}, {},
                 id="normal-mean-variance-mean"),
    pytest.param(NORMAL_MEAN_VARIANCE, NormalMeanVarianceNode, "mean", {"q_out": PointMass(1.1), "q_var": PointMass(0.8)}, {},
                 id="normal-mean-variance-mean-observed-out"),
    # ---- NormalMeanPrecision with a point-mass precision
    pytest.param(NORMAL_MEAN_PRECISION, NormalMeanPrecisionNode, "out",
                 {"m_mean": NormalMeanPrecision(2.0, 0.5), "q_precision": PointMass(3.0)}, {}, id="normal-mean-precision-out"),
    pytest.param(NORMAL_MEAN_PRECISION, NormalMeanPrecisionNode, "mean",
                 {"m_out": N(0.3, 0.05), "q_precision": PointMass(0.7)}, {}, id="normal-mean-precision-mean"),
    pytest.param(NORMAL_MEAN_PRECISION, NormalMeanPrecisionNode, "mean",
                 {"q_out": PointMass(-0.4), "q_precision": PointMass(2.0)}, {}, id="normal-mean-precision-mean-observed-out"),
    # ---- likelihoods in a positive parameter: clamped out (and mean / shape)
    pytest.param(NORMAL_MEAN_PRECISION, NormalMeanPrecisionNode, "precision",
                 {"q_out": PointMass(1.7), "q_mean": PointMass(0.2)}, {}, id="normal-mean-precision-precision-observed"),
    pytest.param(GAMMA, GammaNode, "rate", {"q_out": PointMass(0.8), "q_shape": PointMass(2.5)}, {}, id="gamma-rate-observed"),
    pytest.param(GAMMA, GammaNode, "shape", {"q_out": PointMass(0.8), "q_rate": PointMass(2.5)}, {}, id="gamma-shape-observed"),
    pytest.param(GAMMA, GammaNode, "shape", {"q_out": PointMass(4.0), "q_rate": PointMass(0.5)}, {},
                 id="gamma-shape-observed-large"),
    pytest.param(INVERSE_GAMMA, InverseGammaNode, "scale", {"q_out": PointMass(0.7), "q_shape": PointMass(1.5)}, {},
                 id="inverse-gamma-scale-observed"),
    pytest.param(INVERSE_GAMMA, InverseGammaNode, "shape", {"q_out": PointMass(0.7), "q_scale": PointMass(1.5)}, {},
                 id="inverse-gamma-shape-observed"),
    # ---- InverseGamma with clamped parameters (shape 8: the tail beyond 60 sd is negligible)
    pytest.param(INVERSE_GAMMA, InverseGammaNode, "out", {"q_shape": PointMass(8.0), "q_scale": PointMass(3.0)}, {},
                 id="inverse-gamma-out"),
    # ---- Addition
    pytest.param(ADDITION, Addition, "out", {"m_in1": N(1.0, 0.5), "m_in2": N(-2.0, 1.5)}, {}, id="addition-out"),
    pytest.param(ADDITION, Addition, "out", {"m_in1": N(1.0, 0.5), "q_in2": PointMass(0.25)}, {}, id="addition-out-constant-in2"),
    pytest.param(ADDITION, Addition, "out", {"q_in1": PointMass(-3.0), "m_in2": N(0.5, 2.0)}, {}, id="addition-out-constant-in1"),
    pytest.param(ADDITION, Addition, "in1", {"m_out": N(2.0, 0.3), "m_in2": N(0.5, 0.9)}, {}, id="addition-in1"),
    pytest.param(ADDITION, Addition, "in1", {"m_out": N(2.0, 0.3), "q_in2": PointMass(1.5)}, {}, id="addition-in1-constant-in2"),
    pytest.param(ADDITION, Addition, "in1", {"q_out": PointMass(2.0), "m_in2": N(0.5, 0.9)}, {}, id="addition-in1-observed-out"),
    pytest.param(ADDITION, Addition, "in2", {"m_out": N(-1.0, 1.1), "m_in1": N(0.7, 0.2)}, {}, id="addition-in2"),
    pytest.param(ADDITION, Addition, "in2", {"q_out": PointMass(0.0), "m_in1": N(0.7, 0.2)}, {}, id="addition-in2-observed-out"),
    # ---- Multiplication by a scalar gain
    pytest.param(multiplication(-1.7), Multiplication, "out", {"m_in": N(0.4, 0.6)}, {"gain": -1.7}, id="multiplication-out"),
    pytest.param(multiplication(0.4), Multiplication, "in", {"m_out": N(1.2, 0.3)}, {"gain": 0.4}, id="multiplication-in"),
    pytest.param(multiplication(-2.5), Multiplication, "in", {"m_out": N(-0.5, 2.0)}, {"gain": -2.5}, id="multiplication-in-negative"),
    # ---- GaussianLinear with a point-mass variance
    pytest.param(gaussian_linear(0.8), GaussianLinear, "out", {"m_in": N(1.5, 0.7), "q_var": PointMass(0.3)}, {"gain": 0.8},
                 id="gaussian-linear-out"),
    pytest.param(gaussian_linear(0.8), GaussianLinear, "in", {"m_out": N(-0.6, 0.2), "q_var": PointMass(0.3)}, {"gain": 0.8},
                 id="gaussian-linear-in"),
    pytest.param(gaussian_linear(-2.5), GaussianLinear, "in", {"m_out": N(2.0, 1.0), "q_var": PointMass(0.5)}, {"gain": -2.5},
                 id="gaussian-linear-in-negative"),
    pytest.param(gaussian_linear(1.3), GaussianLinear, "in", {"q_out": PointMass(0.9), "q_var": PointMass(0.4)}, {"gain": 1.3},
                 id="gaussian-linear-in-observed-out"),
]


def evaluation_grid(result):
    """Points where the message is compared, spread over its mass (9 points, ±4 sd or 0.1-4 x mean)."""
    if isinstance(result, UnivariateNormal):
        return float(result.mean) + math.sqrt(float(result.var)) * np.linspace(-4.0, 4.0, 9)
    return float(result.mean) * np.array([0.1, 0.3, 0.6, 1.0, 1.5, 2.5, 4.0])


def target_limits(result):
    """Integration range of the target: it holds all but a negligible part of the rule's message."""
    mean, sd = float(result.mean), math.sqrt(float(result.var))
    if isinstance(result, UnivariateNormal):
        return mean - 12.0 * sd, mean + 12.0 * sd
    return 0.0, mean + 60.0 * sd  # positive parameters


@pytest.mark.parametrize("factor, node_type, target, inputs, attributes", CASES)
def test_rule_matches_quadrature(factor, node_type, target, inputs, attributes):
    result = message(node_type, target, inputs, **attributes)
    incoming = {name[2:]: value for name, value in inputs.items()}
    points = evaluation_grid(result)
    expected = log_message(factor, target, incoming, points)
    np.testing.assert_allclose(result.log_scale + result.logpdf(points), expected, rtol=0.0, atol=TOLERANCE)
    log_scale = log_integral(factor, target, incoming, target_limits(result))
    np.testing.assert_allclose(result.log_scale, log_scale, rtol=0.0, atol=TOLERANCE)


def test_tall_matrix_gain_backward_log_scale_by_dblquad():
    """m(A in) for a 3x2 gain A of full column rank: its integral over in ∈ R² (dblquad) is exp(log_scale)."""
    gain = np.array([[1.0, 0.5], [-0.3, 1.0], [0.8, 0.2]])
    m_out = MvNormalMeanCovariance([0.4, -1.0, 2.0], [[1.0, 0.2, 0.0], [0.2, 0.5, 0.1], [0.0, 0.1, 0.8]])
    result = message(MvMultiplication, "in", {"m_out": m_out}, gain=gain)

    def backward(x, y):
        return math.exp(float(m_out.logpdf(gain @ np.array([x, y]))))

    # the message is N(in | mean, cov) scaled; integrate over ±12 sd of it
    mean, sd = result.mean, np.sqrt(result.var)
    value, _ = integrate.dblquad(
        lambda y, x: backward(x, y), mean[0] - 12 * sd[0], mean[0] + 12 * sd[0], mean[1] - 12 * sd[1], mean[1] + 12 * sd[1],
        epsabs=1e-14, epsrel=1e-11,
    )
    np.testing.assert_allclose(result.log_scale, math.log(value), rtol=0.0, atol=TOLERANCE)
    points = mean + np.array([[0.0, 0.0], [1.0, -0.5], [-2.0, 1.0]]) * sd
    expected = [float(m_out.logpdf(gain @ p)) for p in points]
    np.testing.assert_allclose(result.log_scale + result.logpdf(points), expected, rtol=0.0, atol=1e-10)
