"""The float forms of messages and of the rules and energies that a run on floats (:mod:`fgraph.floats`) calls.

Kinds of message (the floats a message is, fixed per kind):

* ``normal``: ``(ξ, w, log-scale)``, the weighted mean and the precision of a univariate normal;
* ``gamma``: ``(a, b, log-scale)``, the shape and the rate;
* ``point``: ``(v,)``, a scalar point mass (a constant, one datum);
* ``moments``: ``(ȳ, s²)``, the mean and the empirical variance of a collapsed plate
  (:class:`~fgraph.plates.EmpiricalMoments`).

A *float twin* is a rule's or an average energy's form on floats, registered beside it
(:func:`float_rule`, :func:`float_energy`): it reads of each marginal the expectations it declares (``mean``,
``var``, ``mean_log``, ``mean_inverse``, ``mean_log_gamma``), computed from the kind's floats
(:data:`EXPECTATIONS`), and returns the floats of its message's kind (an energy: one float). Twins are written
in the subset of Python that numba compiles (:mod:`fgraph.float_kernels`).
"""
from __future__ import annotations

from dataclasses import dataclass

from fgraph.families.gamma import Gamma
from fgraph.families.normal import NormalMeanPrecision, NormalMeanVariance, NormalWeightedMeanPrecision
from fgraph.families.pointmass import PointMass

NORMAL, GAMMA, POINT, MOMENTS = "normal", "gamma", "point", "moments"
_NORMALS = (NormalMeanVariance, NormalMeanPrecision, NormalWeightedMeanPrecision)


@dataclass(frozen=True)
class FloatTwin:
    """A rule's or an energy's form on floats: ``function`` takes, for every input in the order of
    ``reads``, the expectations named there, and returns the floats of a message of kind ``output`` (an
    energy: one float)."""

    function: object
    reads: tuple  # ((input name, (expectation, ...)), ...) in the order the function takes them
    output: str | None


FLOAT_RULES: dict = {}  # rule function -> FloatTwin
FLOAT_ENERGIES: dict = {}  # average-energy function -> FloatTwin


def float_rule(rule, output: str, **reads):
    """Register the decorated function as the float form of ``rule`` (a message of kind ``output``), taking
    the expectations ``reads[input]`` of each input, in the order of the keywords."""
    def register(function):
        FLOAT_RULES[getattr(rule, "__wrapped__", rule)] = FloatTwin(function, tuple(reads.items()), output)
        return function
    return register


def float_energy(energy, **reads):
    """Register the decorated function as the float form of the average energy ``energy`` (one element)."""
    def register(function):
        FLOAT_ENERGIES[getattr(energy, "__wrapped__", energy)] = FloatTwin(function, tuple(reads.items()), None)
        return function
    return register


def expected_squared_difference(out_mean: float, out_var: float, mean_mean: float, mean_var: float) -> float:
    """``E[(out − mean)²]`` under independent marginals, as :func:`fgraph.nodes.normal.expected_squared_difference`."""
    difference = out_mean - mean_mean
    return difference * difference + (out_var + mean_var)


# ------------------------------------------------------------------ kinds
def floats_of(message):
    """``(kind, floats)`` of an unbatched scalar message, or ``None`` for anything else."""
    if message is None or message.batch_shape:
        return None
    kind = type(message)
    if kind in _NORMALS:
        return NORMAL, (float(message.weighted_mean), float(message.precision), float(message.log_scale))
    if kind is Gamma:
        return GAMMA, (float(message.shape), float(message.rate), float(message.log_scale))
    if kind is PointMass and message.event_ndim == 0:
        return POINT, (float(message.value),)
    from fgraph.plates import EmpiricalMoments

    if kind is EmpiricalMoments and message.event_ndim == 0:
        return MOMENTS, (float(message.mean), float(message.var))
    return None


def message_of(kind: str, floats: tuple):
    """The message object of ``floats`` (a normal as weighted mean and precision, a gamma)."""
    if kind == NORMAL:
        return NormalWeightedMeanPrecision.unbatched(*floats)
    return Gamma.unbatched(*floats)


#: kind -> expectation -> source of it from the floats' names (a list of local names)
EXPECTATIONS = {
    NORMAL: {"mean": "({0} / {1})", "var": "(1.0 / {1})"},
    GAMMA: {"mean": "({0} / {1})", "mean_log": "(digamma({0}) - log({1}))"},
    POINT: {"mean": "{0}", "value": "{0}", "var": "0.0", "mean_log": "log({0})", "mean_inverse": "(1.0 / {0})",
            "mean_log_gamma": "lgamma({0})"},
    MOMENTS: {"mean": "{0}", "var": "{1}"},
}
#: a gamma belief kept with ψ(a) (the free energy's: ``(a, b, ψ(a))``)
GAMMA_BELIEF = "gamma belief"
EXPECTATIONS[GAMMA_BELIEF] = {"mean": "({0} / {1})", "mean_log": "({2} - log({1}))"}
#: kind -> source of its entropy from the floats' names
ENTROPIES = {
    NORMAL: "0.5 * (LOG_2PI + 1.0 - log({1}))",
    GAMMA_BELIEF: "({0} - log({1}) + lgamma({0}) + (1.0 - {0}) * {2})",
}
WIDTH = {NORMAL: 3, GAMMA: 3, POINT: 1, MOMENTS: 2}
