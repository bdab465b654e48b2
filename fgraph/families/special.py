"""The special functions of :mod:`scipy.special` the families use, imported on first call.

Importing :mod:`scipy.special` costs about a quarter of a second, more than
the rest of fgraph together, and many models (Gaussian ones) never evaluate a
digamma. Each function here forwards to scipy's ufunc of the same name, which
is looked up once, when it is first called.
"""
from __future__ import annotations

_scipy_special = None


def _special():
    global _scipy_special
    if _scipy_special is None:
        import scipy.special

        _scipy_special = scipy.special
    return _scipy_special


def betaln(a, b):
    """``log B(a, b)``."""
    return _special().betaln(a, b)


def digamma(x):
    """``ψ(x) = d/dx log Γ(x)``."""
    return _special().digamma(x)


def entr(x):
    """``-x log x`` (0 at 0)."""
    return _special().entr(x)


def gammaln(x):
    """``log |Γ(x)|``."""
    return _special().gammaln(x)


def xlogy(x, y):
    """``x log y`` (0 where ``x = 0``)."""
    return _special().xlogy(x, y)


def xlog1py(x, y):
    """``x log(1 + y)`` (0 where ``x = 0``)."""
    return _special().xlog1py(x, y)


def trigamma(x):
    """``ψ₁(x) = d²/dx² log Γ(x)`` (scipy's ``polygamma(1, x)``)."""
    return _special().polygamma(1, x)


def expit(x):
    """The logistic sigmoid ``σ(x) = 1 / (1 + e^{−x})``."""
    return _special().expit(x)


def ndtr(x):
    """The standard normal distribution function ``Φ(x)``."""
    return _special().ndtr(x)
