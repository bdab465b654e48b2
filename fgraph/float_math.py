"""Special functions on Python floats that give the same bits in Python and compiled by numba.

The runs on floats (:mod:`fgraph.floats`) call these in Python and, once hot, compiled by numba
(:mod:`fgraph.float_kernels`). numba has no ψ, and its ``lgamma`` is the C library's, whose last bits differ
from Python's ``math.lgamma``; written out here, both forms of a run perform the same operations, so a run
gives the same numbers whether or not its structure was compiled.
"""
from __future__ import annotations

import math

LOG_2PI = math.log(2.0 * math.pi)


def digamma(x: float) -> float:
    """ψ(x) for x > 0 on floats: the recurrence ψ(x) = ψ(x + 1) − 1/x up to x ≥ 12, then the asymptotic
    series ln x − 1/(2x) − Σ B₂ₖ / (2k x²ᵏ) to k = 6 (its next term is below 1e-16 there)."""
    result = 0.0
    while x < 12.0:
        result -= 1.0 / x
        x += 1.0
    inverse = 1.0 / x
    square = inverse * inverse
    series = square * (1.0 / 12 - square * (1.0 / 120 - square * (1.0 / 252 - square * (
        1.0 / 240 - square * (1.0 / 132 - square * (691.0 / 32760))))))
    return result + (math.log(x) - 0.5 * inverse - series)


#: Lanczos' approximation of CPython's ``math.lgamma`` (Modules/mathmodule.c): g and the coefficients of its sum
_LANCZOS_G = 6.024680040776729583740234375
_LANCZOS_NUMERATOR = (
    23531376880.410759688572007674451636754734846804940, 42919803642.649098768957899047001988850926355848959,
    35711959237.355668049440185451547166705960488635843, 17921034426.037209699919755754458931112671403265390,
    6039542586.3520280050642916443072979210699388420708, 1439720407.3117216736632230727949123939715485786772,
    248874557.86205415651146038641322942321632125127801, 31426415.585400194380614231628318205362874684987640,
    2876370.6289353724412254090516208496135991145378768, 186056.26539522349504029498971604569928220784236328,
    8071.6720023658162106380029022722506138218516325024, 210.82427775157934587250973392071336271166969580291,
    2.5066282746310002701649081771338373386264310793408)
_LANCZOS_DENOMINATOR = (0.0, 39916800.0, 120543840.0, 150917976.0, 105258076.0, 45995730.0, 13339535.0, 2637558.0,
                        357423.0, 32670.0, 1925.0, 66.0, 1.0)


def lgamma(x: float) -> float:
    """log Γ(x) for x > 0 by the same operations as CPython's ``math.lgamma``, so equal to it in every bit, in
    Python and compiled by numba (whose own ``lgamma`` is the C library's: other last bits). The compiled runs
    call this one, so that a run gives the same numbers whether or not its structure was compiled."""
    if x <= 2.0 and x == math.floor(x):
        return 0.0  # Γ(1) = Γ(2) = 1
    if x < 1e-20:
        return -math.log(x)
    numerator = denominator = 0.0
    if x < 5.0:
        for i in range(12, -1, -1):
            numerator = numerator * x + _LANCZOS_NUMERATOR[i]
            denominator = denominator * x + _LANCZOS_DENOMINATOR[i]
    else:
        for i in range(13):
            numerator = numerator / x + _LANCZOS_NUMERATOR[i]
            denominator = denominator / x + _LANCZOS_DENOMINATOR[i]
    result = math.log(numerator / denominator) - _LANCZOS_G
    result += (x - 0.5) * (math.log(x + _LANCZOS_G - 0.5) - 1.0)
    return result
