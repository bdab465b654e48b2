"""One mixture of a few unbatched components is built and multiplied on Python floats; it equals the array path.

The array path is the same computation on a batch of one (every message
broadcast to batch shape ``(1,)``), which takes none of the float branches;
the log-scale of a product is also checked against numerical integration,
``log ∫ (Σ_k w_k p_k(x)) q(x) dx`` plus the two scales.
"""
import math

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

from fgraph.families import Mixture, NormalMeanVariance, NormalWeightedMeanPrecision
from fgraph.families.categorical import Categorical
from fgraph.families.gamma import Gamma
from fgraph.families.product import product
from fgraph.rules.mixture import out as mixture_out
from fgraph.rules.mixture import switch as mixture_switch

MIXTURES = [  # (log weights, [(mean, var, log-scale) per component], log-scale of the mixture)
    ([math.log(0.5), math.log(0.3), math.log(0.2)], [(-1.0, 1.0, 0.0), (0.5, 0.5, 0.0), (2.0, 4.0, 0.0)], 0.0),
    ([0.3, -2.0], [(10.0, 0.01, 1.5), (-3.0, 20.0, -0.7)], -4.2),
    ([-math.inf, 0.0, 1.0], [(0.0, 1.0, 0.0), (1.0, 2.0, 0.3), (5.0, 0.1, 0.0)], 2.0),  # a component of weight 0
]
OTHERS = [(1.0, 0.04, 0.0), (-2.0, 3.0, -12.5)]  # mean, var, log-scale of the normal multiplied in


def mixture_of_normals(log_weights, components, log_scale, batch=False):
    parts = [NormalMeanVariance(m, v, log_scale=s) for m, v, s in components]
    weights = np.array(log_weights)
    if batch:
        parts = [p.broadcast_to((1,)) for p in parts]
        return Mixture.create(weights[None, :], parts, np.array([log_scale]))
    return Mixture.create(weights, parts, log_scale)


def numbers(mixture, index=()):
    """Weights, log-weights, component moments, log-scale, mean and variance, as floats (element ``index``)."""
    def f(value):
        return float(np.asarray(value)[index])
    return ([f(w) for w in np.moveaxis(mixture.log_weights, -1, 0)],
            [(f(c.mean), f(c.var), type(c)) for c in mixture.components],
            f(mixture.log_scale), f(mixture.mean), f(mixture.var))


def assert_close(fast, reference):
    (fast_w, fast_c, fast_s, fast_m, fast_v), (ref_w, ref_c, ref_s, ref_m, ref_v) = fast, reference
    np.testing.assert_allclose(fast_w, ref_w, rtol=1e-14, atol=1e-14)
    for (m, v, kind), (m_ref, v_ref, kind_ref) in zip(fast_c, ref_c):
        assert kind is kind_ref
        assert m == pytest.approx(m_ref, rel=1e-14, abs=1e-14) and v == pytest.approx(v_ref, rel=1e-14)
    assert fast_s == pytest.approx(ref_s, rel=1e-14, abs=1e-13)
    assert fast_m == pytest.approx(ref_m, rel=1e-13, abs=1e-13) and fast_v == pytest.approx(ref_v, rel=1e-13)


@pytest.mark.parametrize("log_weights, components, log_scale", MIXTURES)
@pytest.mark.parametrize("mean, var, other_scale", OTHERS)
def test_a_mixture_of_normals_times_a_normal_equals_the_array_path(log_weights, components, log_scale,
                                                                   mean, var, other_scale):
    other = NormalMeanVariance(mean, var, log_scale=other_scale)
    fast = product(mixture_of_normals(log_weights, components, log_scale), other)
    reference = product(mixture_of_normals(log_weights, components, log_scale, batch=True), other.broadcast_to((1,)))
    assert fast.batch_shape == () and reference.batch_shape == (1,)
    assert all(c.log_scale == 0.0 for c in fast.components)  # components of a mixture are normalised
    assert_close(numbers(fast), numbers(reference, 0))
    assert np.array_equal(fast.weights, np.exp(fast.log_weights))


@pytest.mark.parametrize("log_weights, components, log_scale", MIXTURES)
def test_the_log_scale_of_the_product_is_the_integral(log_weights, components, log_scale):
    mean, var, other_scale = OTHERS[1]
    fast = product(mixture_of_normals(log_weights, components, log_scale), NormalMeanVariance(mean, var,
                                                                                             log_scale=other_scale))
    weights = np.exp(np.array(log_weights) - np.logaddexp.reduce(log_weights))
    density = lambda x: sum(w * norm.pdf(x, m, math.sqrt(v)) for w, (m, v, _) in zip(weights, components))  # noqa: E731
    value, _ = integrate.quad(lambda x: density(x) * norm.pdf(x, mean, math.sqrt(var)), -60, 60, points=[-3, 0, 1, 5, 10],
                              limit=400)
    assert float(fast.log_scale) == pytest.approx(log_scale + other_scale + math.log(value), abs=1e-8)


def test_a_mixture_of_gammas_times_a_gamma_equals_the_array_path():
    """Components of another family take the general float path (products by the family, sums on floats)."""
    parts = [Gamma(2.0, 1.0), Gamma(5.0, 3.0, log_scale=0.4)]
    weights = np.log([0.7, 0.3])
    other = Gamma(1.5, 0.5, log_scale=-1.0)
    fast = product(Mixture.create(weights, parts, 0.25), other)
    reference = product(Mixture.create(weights[None, :], [p.broadcast_to((1,)) for p in parts], np.array([0.25])),
                        other.broadcast_to((1,)))
    assert fast.batch_shape == ()
    np.testing.assert_allclose(fast.log_weights, reference.log_weights[0], rtol=1e-14)
    assert float(fast.log_scale) == pytest.approx(float(reference.log_scale[0]), rel=1e-14)
    for c, c_ref in zip(fast.components, reference.components):
        assert (float(c.shape), float(c.rate)) == pytest.approx((float(c_ref.shape[0]), float(c_ref.rate[0])), rel=1e-14)


def test_from_floats_is_the_mixture_the_constructor_makes():
    parts = [NormalWeightedMeanPrecision(1.0, 2.0, log_scale=0.3), NormalMeanVariance(-1.0, 0.5)]
    log_weights, log_norm = [0.2, -1.1], float(np.logaddexp(0.2, -1.1))
    fast = Mixture.from_floats(log_weights, parts, 1.7, log_norm)
    reference = Mixture.create(np.array(log_weights), parts, 1.7, log_norm)
    assert type(fast) is type(reference)
    assert fast.log_weights.tolist() == reference.log_weights.tolist()
    assert fast._float_weights() == reference._float_weights()
    assert float(fast.log_scale) == float(reference.log_scale) and fast.batch_shape == reference.batch_shape == ()
    assert [(float(c.mean), float(c.var), float(c.log_scale)) for c in fast.components] == \
           [(float(c.mean), float(c.var), float(c.log_scale)) for c in reference.components]
    assert (float(fast.mean), float(fast.var)) == (float(reference.mean), float(reference.var))


def test_from_floats_with_a_batched_component_is_the_checked_mixture():
    parts = [NormalMeanVariance(np.array([1.0, 2.0]), 1.0), NormalMeanVariance(0.0, 3.0)]
    mixture = Mixture.from_floats([0.0, 0.5], parts, 0.0, float(np.logaddexp(0.0, 0.5)))
    assert mixture.batch_shape == (2,)
    first_weight = 1.0 / (1.0 + math.exp(0.5))  # e^0 / (e^0 + e^0.5); the second component's mean is 0
    np.testing.assert_allclose(mixture.mean, [first_weight * 1.0, first_weight * 2.0], rtol=1e-14)


def test_the_forward_message_of_the_mixture_node_equals_the_array_path():
    switch = Categorical(np.array([0.5, 0.3, 0.2]), log_scale=-0.6)
    inputs = (NormalMeanVariance(-1.0, 1.0, log_scale=-2.0), NormalMeanVariance(0.5, 0.5, log_scale=0.1),
              NormalMeanVariance(2.0, 4.0, log_scale=-7.0))
    flat = NormalMeanVariance(0.0, 1e9)  # m_out: not read by the sum-product rule
    fast = mixture_out.sum_product(switch, inputs, flat)
    reference = mixture_out.sum_product(Categorical(switch.probabilities[None, :], log_scale=np.array([-0.6])),
                                        tuple(m.broadcast_to((1,)) for m in inputs), flat.broadcast_to((1,)))
    assert fast.batch_shape == () and reference.batch_shape == (1,)
    assert_close(numbers(fast), numbers(reference, 0))
    # by hand: weights p_k e^{s_k}, scale log Σ_k p_k e^{s_k} plus the switch's own scale
    by_hand = [0.5 * math.exp(-2.0), 0.3 * math.exp(0.1), 0.2 * math.exp(-7.0)]
    np.testing.assert_allclose(fast.weights, np.array(by_hand) / sum(by_hand), rtol=1e-14)
    assert float(fast.log_scale) == pytest.approx(-0.6 + math.log(sum(by_hand)), rel=1e-14)


def test_the_message_to_the_switch_equals_the_array_path():
    """The evidences of the sub-models as a categorical made from floats (``Categorical.unbatched``)."""
    inputs = (NormalMeanVariance(-1.0, 1.0, log_scale=-2.0), NormalMeanVariance(0.5, 0.5),
              NormalMeanVariance(2.0, 4.0, log_scale=0.7))
    m_out = NormalMeanVariance(1.2, 0.3, log_scale=-5.0)
    fast = mixture_switch.sum_product(m_out, inputs)
    reference = mixture_switch.sum_product(m_out.broadcast_to((1,)), tuple(m.broadcast_to((1,)) for m in inputs))
    assert type(fast) is Categorical and fast.batch_shape == () and fast.event_shape == (3,)
    np.testing.assert_allclose(fast.probabilities, reference.probabilities[0], rtol=1e-14)
    assert float(fast.log_scale) == pytest.approx(float(reference.log_scale[0]), rel=1e-14)
    # by hand: e^{s_out + s_k} N(1.2 | m_k, 0.3 + v_k)
    evidences = [math.exp(-5.0 + s) * norm.pdf(1.2, m, math.sqrt(0.3 + v))
                 for m, v, s in [(-1.0, 1.0, -2.0), (0.5, 0.5, 0.0), (2.0, 4.0, 0.7)]]
    np.testing.assert_allclose(fast.probabilities, np.array(evidences) / sum(evidences), rtol=1e-13)
    assert float(fast.log_scale) == pytest.approx(math.log(sum(evidences)), rel=1e-13)


@pytest.mark.parametrize("log_scales", [(0.0, 0.0), (1.5, -0.25)])
def test_a_product_of_two_categoricals_on_floats_equals_the_array_path(log_scales):
    a = Categorical(np.array([0.2, 0.5, 0.3]), log_scale=log_scales[0])
    b = Categorical(np.array([0.6, 0.1, 0.3]), log_scale=log_scales[1])
    fast = product(a, b)
    reference = product(Categorical(a.probabilities[None, :], log_scale=np.array([log_scales[0]])),
                        Categorical(b.probabilities[None, :], log_scale=np.array([log_scales[1]])))
    assert fast.batch_shape == () and fast.event_shape == (3,)
    np.testing.assert_allclose(fast.probabilities, reference.probabilities[0], rtol=1e-15)
    assert float(fast.log_scale) == pytest.approx(float(reference.log_scale[0]), rel=1e-15, abs=1e-15)
    total = 0.2 * 0.6 + 0.5 * 0.1 + 0.3 * 0.3  # by hand: Σ_k p_k q_k
    assert float(fast.log_scale) == pytest.approx(sum(log_scales) + math.log(total), rel=1e-14)
    assert fast.normalised().log_scale == 0.0


def test_the_kept_mean_belongs_to_its_mixture():
    """The mean is kept on the (immutable) mixture; copies with another scale share it, new mixtures do not."""
    mixture = mixture_of_normals(*MIXTURES[0])
    weights, means, variances = [0.5, 0.3, 0.2], [-1.0, 0.5, 2.0], [1.0, 0.5, 4.0]
    mean = sum(w * m for w, m in zip(weights, means))  # by hand
    assert float(mixture.mean) == pytest.approx(mean, rel=1e-15)
    assert float(mixture.var) == pytest.approx(sum(w * (v + (m - mean) ** 2)
                                                   for w, m, v in zip(weights, means, variances)), rel=1e-14)
    assert float(mixture.with_log_scale(3.0).mean) == float(mixture.mean)
    shifted = product(mixture, NormalMeanVariance(5.0, 1.0))  # another mixture: its own mean
    assert float(shifted.mean) != pytest.approx(mean, rel=1e-3)
    assert float(shifted.mean) == pytest.approx(float(np.dot(shifted.weights, [float(c.mean) for c in shifted.components])),
                                                rel=1e-14)
    batched = mixture.broadcast_to((2,))
    np.testing.assert_allclose(batched.mean, [mean, mean], rtol=1e-15)
