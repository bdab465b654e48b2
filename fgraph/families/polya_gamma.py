"""The Pólya-Gamma quantities of a PG-augmented logistic factor, vectorised.

Pólya-Gamma augmentation (Polson, Scott and Windle 2013) writes a logistic
likelihood of a logit ψ as a Gaussian in ψ mixed over ω ~ PG(b, 0):

    e^{aψ} / (1 + e^ψ)^b = 2^{−b} e^{κψ} E_{PG(b,0)}[e^{−ωψ²/2}],   κ = a − b/2.

``PG(b, c)`` is the exponential tilt of ``PG(b, 0)``,

    PG(ω | b, c) = cosh^b(c/2) e^{−c²ω/2} PG(ω | b, 0),

because the Laplace transform of ``PG(b, 0)`` is
``E[e^{−tω}] = cosh^{−b}(sqrt(t/2))``. Under mean-field VMP the optimal
``q(ω)`` is ``PG(b, c)`` with ``c = sqrt(E[ψ²])``; what the logistic nodes
need from it is

* ``E[ω] = b tanh(c/2) / (2c)`` (the weight of the Gaussian message);
* ``log cosh(c/2)`` (in the free energy);
* ``KL(PG(b, c) ‖ PG(b, 0)) = −E[ω] c²/2 + b log cosh(c/2)`` (the tilt's log-ratio
  ``b log cosh(c/2) − c²ω/2`` averaged under ``PG(b, c)``);
* ``Var[ω] = b (sinh c − c) / (4 c³ cosh²(c/2))`` (for Monte Carlo checks).

Every function is even in ``c``, takes arrays (``b`` and ``c`` broadcast) and
is accurate to a few ulps for every finite ``c``: near ``c = 0`` the closed
forms are ``0/0`` or cancel, so a Taylor series takes over below a switch
point where its truncation error is far below rounding; for large ``c`` the
hyperbolic functions are rewritten so that nothing overflows.
"""
from __future__ import annotations

from fractions import Fraction
from math import comb, factorial

import numpy as np

__all__ = ["PolyaGamma", "kl_from_prior", "log_cosh_half", "mean", "variance"]

LOG_2 = float(np.log(2.0))

#: Below this |c| the mean uses its series: the first omitted term, 62/725760 c⁸ ≈ 9e-21 at the switch,
#: is far below rounding (the closed form tanh(u)/u itself is accurate on both sides; it is 0/0 only at 0).
MEAN_SERIES_BELOW = 1e-2
#: Below this |c| the KL uses its series in u = c/2 (radius of convergence π/2, so each term is about
#: (u/(π/2))² ≈ 0.1 of the previous one at the switch; :data:`KL_SERIES_TERMS` terms leave ~1e-17). Above
#: it the closed form cancels two terms of order u²/2 into one of order u⁴/12, losing ~6/u² ulps (5e-15 at
#: the switch, less beyond).
KL_SERIES_BELOW = 1.0
KL_SERIES_TERMS = 18


def _bernoulli_numbers(count: int) -> list:
    """``B_0 … B_{count−1}`` as exact fractions: ``B_m = −Σ_{k<m} C(m+1, k) B_k / (m + 1)``."""
    numbers = [Fraction(1)]
    for m in range(1, count):
        numbers.append(-sum(comb(m + 1, k) * numbers[k] for k in range(m)) / (m + 1))
    return numbers


def _kl_series_coefficients(terms: int) -> np.ndarray:
    """``a_n`` with ``log cosh u − u tanh(u)/2 = Σ_{n≥2} a_n u^{2n}``, n = 2 … terms + 1.

    With ``t_n = 2^{2n} (2^{2n} − 1) B_{2n} / (2n)!`` the series are
    ``tanh u = Σ t_n u^{2n−1}`` and (integrating) ``log cosh u = Σ t_n u^{2n} / (2n)``,
    so ``a_n = t_n (1/(2n) − 1/2)``: ``a_1 = 0``, ``a_2 = 1/12``, ``a_3 = −2/45``, ``a_4 = 17/840``.
    """
    bernoulli = _bernoulli_numbers(2 * terms + 3)
    coefficients = []
    for n in range(2, terms + 2):
        t = Fraction(2 ** (2 * n) * (2 ** (2 * n) - 1)) * bernoulli[2 * n] / factorial(2 * n)
        coefficients.append(float(t * (Fraction(1, 2 * n) - Fraction(1, 2))))
    return np.array(coefficients)


_KL_SERIES = _kl_series_coefficients(KL_SERIES_TERMS)

#: Below this |c| the variance uses the series of (sinh c − c)/c³ = Σ_k c^{2k}/(2k+3)! (terms to c^16,
#: the first omitted c^18/21! ≈ 2e-20); above it the stable closed form 2 tanh(c/2) − c sech²(c/2).
VARIANCE_SERIES_BELOW = 1.0


def _abs_c(c):
    return np.abs(np.asarray(c, dtype=float))


def _tanh_ratio(c):
    """``tanh(c/2) / (c/2)`` (1 at c = 0), even in c.

    Series ``1 − c²/12 + c⁴/120 − 17c⁶/20160`` below :data:`MEAN_SERIES_BELOW`
    (from tanh u = u − u³/3 + 2u⁵/15 − 17u⁷/315 + …, u = c/2).
    """
    c = _abs_c(c)
    small = c < MEAN_SERIES_BELOW
    c2 = c * c
    series = 1.0 + c2 * (-1.0 / 12.0 + c2 * (1.0 / 120.0 - c2 * (17.0 / 20160.0)))
    safe = np.where(small, 1.0, c)
    closed = np.tanh(0.5 * safe) / (0.5 * safe)
    return np.where(small, series, closed)


def mean(b, c):
    """``E[ω]`` under ``PG(b, c)``: ``b tanh(c/2) / (2c)``, ``b/4`` at ``c = 0``; shape of ``b`` and ``c`` broadcast."""
    return 0.25 * np.asarray(b, dtype=float) * _tanh_ratio(c)


def log_cosh_half(c):
    """``log cosh(c/2)`` for any finite c, to a few ulps.

    With u = |c|/2: ``log1p(2 sinh²(u/2))`` for u ≤ 1 (cosh u − 1 = 2 sinh²(u/2)
    without cancellation, so small u keep their digits), ``u + log1p(e^{−2u}) − log 2``
    above (no overflow for large u).
    """
    u = 0.5 * _abs_c(c)
    small = u <= 1.0
    low = np.where(small, u, 0.0)
    high = np.where(small, 1.0, u)
    return np.where(small, np.log1p(2.0 * np.sinh(0.5 * low) ** 2), high + np.log1p(np.exp(-2.0 * high)) - LOG_2)


def kl_from_prior(b, c):
    """``KL(PG(b, c) ‖ PG(b, 0)) = b log cosh(c/2) − E[ω] c²/2 = b (log cosh u − u tanh(u) / 2)``, u = c/2.

    Non-negative, zero at c = 0 (it starts as ``b u⁴/12``), growing like
    ``b (|c|/4 − log 2)`` for large c. Below :data:`KL_SERIES_BELOW` the series
    (:func:`_kl_series_coefficients`), where the closed form's two terms cancel.
    """
    b = np.asarray(b, dtype=float)
    c = _abs_c(c)
    small = c < KL_SERIES_BELOW
    u = 0.5 * np.where(small, c, 0.0)
    u2 = u * u
    series = 0.0
    for coefficient in _KL_SERIES[::-1]:  # Horner in u², then the leading u⁴
        series = series * u2 + coefficient
    series = series * u2 * u2
    large = np.where(small, 1.0, c)
    closed = log_cosh_half(large) - 0.25 * large * np.tanh(0.5 * large)
    return b * np.where(small, series, closed)


def variance(b, c):
    """``Var[ω]`` under ``PG(b, c)``: ``b (sinh c − c) / (4 c³ cosh²(c/2))``, ``b/24`` at ``c = 0``.

    With sinh c = 2 sinh(c/2) cosh(c/2) this is ``b (2 tanh(c/2) − c sech²(c/2)) / (4c³)``,
    which (with sech² from e^{−c}) neither overflows nor (for |c| ≥ 1) cancels badly; below that
    ``b/4 · S(c) sech²(c/2)`` with ``S(c) = (sinh c − c)/c³`` by its series.
    """
    b = np.asarray(b, dtype=float)
    c = _abs_c(c)
    small = c < VARIANCE_SERIES_BELOW
    c2 = c * c
    series, factorial, power = 0.0, 6.0, 1.0  # Σ_k c^{2k} / (2k+3)!, k = 0..8
    for k in range(9):
        series = series + power / factorial
        power = power * c2
        factorial = factorial * (2 * k + 4) * (2 * k + 5)
    sech2 = 1.0 / np.cosh(0.5 * np.where(small, c, 0.0)) ** 2
    safe = np.where(small, 1.0, c)
    decay = np.exp(-safe)  # sech²(u) = 4 e^{−2u} / (1 + e^{−2u})², u = c/2: no overflow
    closed = (2.0 * np.tanh(0.5 * safe) - safe * 4.0 * decay / (1.0 + decay) ** 2) / (4.0 * safe**3)
    return b * np.where(small, 0.25 * series * sech2, closed)


class PolyaGamma:
    """``PG(b, c)``, batched: ``b`` (≥ 0) and ``c`` broadcast together.

    Only the quantities the logistic nodes use; not a message family (ω is
    never a variable of the graph: it is kept at its optimum ``c = sqrt(E[ψ²])``
    by the nodes that use it).
    """

    def __init__(self, b, c):
        self.b = np.asarray(b, dtype=float)
        self.c = np.asarray(c, dtype=float)

    def mean(self):
        """``E[ω] = b tanh(c/2) / (2c)``."""
        return mean(self.b, self.c)

    def variance(self):
        """``Var[ω] = b (sinh c − c) / (4 c³ cosh²(c/2))``."""
        return variance(self.b, self.c)

    def kl_from_prior(self):
        """``KL(PG(b, c) ‖ PG(b, 0)) = b log cosh(c/2) − E[ω] c²/2``."""
        return kl_from_prior(self.b, self.c)

    def __repr__(self):
        if self.b.ndim == 0 and self.c.ndim == 0:
            return f"PolyaGamma(b={float(self.b):.6g}, c={float(self.c):.6g})"
        return f"PolyaGamma(shape={np.broadcast_shapes(self.b.shape, self.c.shape)})"
