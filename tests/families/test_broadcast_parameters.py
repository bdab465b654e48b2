"""Parameters broadcast over a plate (stride-0 views) are computed with once, and give the same numbers."""
import numpy as np
import pytest

from fgraph.equality import EqualityNode
from fgraph.families import Gamma, NormalMeanVariance
from fgraph.families.base import broadcast_view, compressed, elementwise


def test_compressed_keeps_only_the_distinct_values_of_a_broadcast_view():
    shared = np.broadcast_to(np.array([[1.0], [2.0]]), (2, 5))
    assert compressed(shared).shape == (2, 1)
    full = np.arange(6.0).reshape(2, 3)
    assert compressed(full) is full
    np.testing.assert_array_equal(np.broadcast_to(compressed(shared), shared.shape), shared)


@pytest.mark.parametrize("shape, target", [((), (5,)), ((2,), (3, 2)), ((1, 3), (4, 3)), ((2, 3), (2, 3)),
                                           ((2, 1), (2, 4)), ((1,), (2, 3, 1))])
def test_broadcast_view_is_numpys_broadcast(shape, target):
    array = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)
    view, reference = broadcast_view(array, target), np.broadcast_to(array, target)
    assert view.shape == reference.shape
    assert [stride for stride, size in zip(view.strides, target) if size > 1] == \
        [stride for stride, size in zip(reference.strides, target) if size > 1]  # (no copy: the same view)
    np.testing.assert_array_equal(view, reference)
    assert not view.flags.writeable
    with pytest.raises(ValueError):
        broadcast_view(np.ones(3), (4,))


def test_elementwise_runs_once_per_distinct_element():
    seen = []

    def reciprocal(x):
        seen.append(np.size(x))
        return 1.0 / x

    shared = np.broadcast_to(4.0, (1000,))
    result = elementwise(reciprocal, shared)
    assert seen == [1] and result.shape == (1000,)
    np.testing.assert_array_equal(result, np.full(1000, 0.25))
    mixed = elementwise(np.add, np.arange(3.0)[:, None] * np.ones((3, 4)), np.broadcast_to(1.0, (3, 4)))
    np.testing.assert_array_equal(mixed, np.arange(3.0)[:, None] + np.ones((3, 4)))


def test_plate_reduction_of_broadcast_messages_equals_that_of_materialised_ones():
    """N normal messages sharing one variance, and N gamma messages sharing one shape, as views and as copies."""
    rng = np.random.default_rng(2)
    means, rates = rng.normal(size=50), rng.gamma(2.0, size=50)
    for view, copy in [
        (NormalMeanVariance(means, np.broadcast_to(0.7, (50,)), log_scale=np.broadcast_to(-0.2, (50,))),
         NormalMeanVariance(means, np.full(50, 0.7), log_scale=np.full(50, -0.2))),
        (Gamma(np.broadcast_to(1.5, (50,)), rates), Gamma(np.full(50, 1.5), rates)),
    ]:
        prior = NormalMeanVariance(0.0, 3.0) if isinstance(view, NormalMeanVariance) else Gamma(2.0, 1.0)
        totals = []
        for plate in (view, copy):
            node = EqualityNode([(), (50,)], ())
            node.set_messages([prior, plate])
            totals.append(node.total())
        np.testing.assert_allclose(totals[0].natural_parameters(), totals[1].natural_parameters(), rtol=1e-13)
        np.testing.assert_allclose(totals[0].log_scale, totals[1].log_scale, rtol=1e-13)


def test_derived_quantities_are_computed_once_and_again_for_another_input():
    """Distribution.derived keeps what it computed; derived_with computes again when the other distribution differs."""
    from fgraph.families import Gamma, PointMass
    q = Gamma(2.0, 1.0)
    calls = []

    def compute():
        calls.append(1)
        return len(calls)

    assert q.derived("_test", compute) == 1 and q.derived("_test", compute) == 1
    first, second = PointMass(1.0), PointMass(1.0)
    assert q.derived_with("_test_with", (first,), compute) == 2
    assert q.derived_with("_test_with", (first,), compute) == 2
    assert q.derived_with("_test_with", (second,), compute) == 3  # an equal but different input: computed again
