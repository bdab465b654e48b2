"""The associative scan against a sequential fold, for several associative operators.

The oracle is the definition: s_t = e_1 ⊕ … ⊕ e_t computed by a Python loop
over t (and r_t = e_t ⊕ … ⊕ e_T from the end), one element at a time.
"""
import numpy as np
import pytest
from scipy.special import logsumexp

from fgraph.scan import associative_scan, leading_matmul


def sequential_fold(combine, elements, reverse=False):
    """Prefixes (or suffixes) by a loop over the last axis, combining one time step at a time."""
    length = elements[0].shape[-1]
    step = lambda t: tuple(array[..., t:t + 1] for array in elements)  # noqa: E731
    order = range(length - 1, -1, -1) if reverse else range(length)
    out = [np.empty(array.shape) for array in elements]
    running = None
    for t in order:
        current = step(t)
        running = current if running is None else (combine(current, running) if reverse else combine(running, current))
        for target, value in zip(out, running):
            target[..., t:t + 1] = value
    return tuple(out)


def matrix_product(earlier, later):
    """3×3 matrices (3, 3, ..., T): ``later @ earlier`` (non-commutative)."""
    return (leading_matmul(later[0], earlier[0]),)


def affine_composition(earlier, later):
    """x ↦ a x + b, then the later one: (a₂ a₁, a₂ b₁ + b₂) (non-commutative)."""
    (a1, b1), (a2, b2) = earlier, later
    return a2 * a1, a2 * b1 + b2


def log_semiring_product(earlier, later):
    """2×2 matrices in the log-sum-exp semiring: C[i, j] = logsumexp_k (B[i, k] + A[k, j])."""
    a, b = earlier[0], later[0]
    return (logsumexp(b[:, :, None] + a[None, :, :], axis=1),)


def operator_cases(rng, batch, length):
    return [
        ("matrix", matrix_product, (rng.normal(size=(3, 3) + batch + (length,)) / 2.0,)),
        ("affine", affine_composition, (rng.uniform(-1.2, 1.2, size=batch + (length,)),
                                        rng.normal(size=batch + (length,)))),
        ("log-semiring", log_semiring_product, (rng.normal(size=(2, 2) + batch + (length,)),)),
        ("sum", lambda e, l: (e[0] + l[0],), (rng.normal(size=batch + (length,)),)),
    ]


@pytest.mark.parametrize("length", [1, 2, 3, 5, 8, 13, 64, 100, 257])
@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_equals_the_sequential_fold(length, batch, reverse):
    rng = np.random.default_rng(length * 7 + len(batch))
    for name, combine, elements in operator_cases(rng, batch, length):
        expected = sequential_fold(combine, elements, reverse=reverse)
        actual = associative_scan(combine, elements, reverse=reverse)
        assert len(actual) == len(expected)
        for got, want in zip(actual, expected):
            assert got.shape == want.shape, name
            np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-12, err_msg=name)


def test_the_sum_operator_gives_cumulative_sums():
    """A closed form: the prefix sums of 1..T are t(t+1)/2, the suffix sums T(T+1)/2 − t(t−1)/2."""
    values = np.arange(1.0, 1001.0)
    t = values
    np.testing.assert_array_equal(associative_scan(lambda a, b: (a[0] + b[0],), (values,))[0], t * (t + 1) / 2)
    np.testing.assert_array_equal(associative_scan(lambda a, b: (a[0] + b[0],), (values,), reverse=True)[0],
                                  1000 * 1001 / 2 - t * (t - 1) / 2)


def test_the_operator_sees_its_operands_in_time_order():
    """Composition of x ↦ x·10 + digit in time order writes the digits left to right (forward and reverse)."""
    digits = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0])
    elements = (np.full(7, 10.0), digits)
    prefixes = associative_scan(affine_composition, elements)[1]
    assert prefixes.tolist() == [3, 31, 314, 3141, 31415, 314159, 3141592]
    suffixes = associative_scan(affine_composition, elements, reverse=True)[1]
    assert suffixes.tolist() == [3141592, 141592, 41592, 1592, 592, 92, 2]


def test_leading_matmul_is_numpy_matmul_per_position():
    rng = np.random.default_rng(5)
    left, right = rng.normal(size=(2, 3, 4, 6)), rng.normal(size=(3, 5, 4, 6))
    expected = np.moveaxis(np.moveaxis(left, (0, 1), (-2, -1)) @ np.moveaxis(right, (0, 1), (-2, -1)), (-2, -1), (0, 1))
    np.testing.assert_allclose(leading_matmul(left, right), expected, rtol=1e-13)


@pytest.mark.parametrize("elements", [(), (np.zeros(3), np.zeros(4)), (np.float64(1.0),), (np.zeros(0),)])
def test_elements_without_a_shared_time_axis_are_refused(elements):
    with pytest.raises(ValueError, match="associative_scan"):
        associative_scan(lambda a, b: a, elements)
