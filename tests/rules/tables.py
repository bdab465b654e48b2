"""Shared helpers of the rule table tests: call a rule the way the engine does, compare its output.

Each table test lists ``(inputs -> expected output)`` cases whose expected
values are worked out by hand from the closed-form message (written in the
case as numbers or as the short formula that produced them), never by
calling a rule.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import integrate, optimize

from fgraph import registry
from fgraph.families import MultivariateNormal, PointMass, UnivariateNormal, Wishart
from fgraph.families.gamma import Gamma
from fgraph.families.gamma_shape import GammaShapeLikelihood
from fgraph.families.inverse_gamma import InverseGamma, InverseGammaLikelihood

registry.load_rule_packages()

TOLERANCE = dict(rtol=1e-12, atol=1e-12)


def message(node_type, interface, inputs: dict, **attributes):
    """The message the registry's rule computes for ``inputs`` (names ``m_*``/``q_*`` -> distributions).

    The rule is resolved from the families of the inputs, as the compiler
    does, so a table case also checks which rule is chosen; the result must be
    an instance of the family the rule's return annotation declares.
    ``batch_shape`` (a keyword) gives the node a batch, for nodes whose rules
    read it (a compound node over a sequence); ``index`` is the position of
    the target in its variadic group (a tuple of inputs stands for a group);
    ``operator`` selects the node's alternative rule set (it stays a node attribute too).
    """
    index = attributes.pop("index", None)
    node = node_type("node", attributes.pop("batch_shape", ()), **attributes)
    bound = registry.resolve(registry.MESSAGE, node_type, interface, _families(inputs), "table test",
                             attributes.get("operator"))
    result = bound(inputs, node, index)
    assert isinstance(result, bound.output_family), (type(result), bound.output_family)
    return result


def _families(inputs: dict) -> dict:
    """The family of every input; a variadic group (a tuple of inputs) by the most specific family of its members."""
    families = {}
    for name, value in inputs.items():
        if isinstance(value, tuple):
            kinds = [type(member) for member in value]
            families[name] = next(cls for cls in kinds[0].__mro__ if all(issubclass(k, cls) for k in kinds))
        else:
            families[name] = type(value)
    return families


def joint_marginal(node_type, cluster: tuple, inputs: dict, **attributes):
    """The joint marginal of a structured ``cluster`` the registry's marginal rule computes for ``inputs``."""
    node = node_type("node", (), **attributes)
    families = {name: type(value) for name, value in inputs.items()}
    bound = registry.resolve(registry.MARGINAL, node_type, tuple(cluster), families, "table test")
    result = bound(inputs, node)
    assert isinstance(result, bound.output_family), (type(result), bound.output_family)
    return result


def energy(node_type, inputs: dict, **attributes):
    """The average energy the registry computes for ``inputs`` (all ``q_*``); ``batch_shape`` and ``operator`` as in
    :func:`message`."""
    node = node_type("node", attributes.pop("batch_shape", ()), **attributes)
    bound = registry.resolve(registry.ENERGY, node_type, None, _families(inputs), "table test",
                             attributes.get("operator"))
    return bound(inputs, node)


def float_message(node_type, interface, inputs: dict) -> tuple:
    """The floats the float twin of the registry's rule for ``inputs`` returns (:mod:`fgraph.float_twins`), fed the
    expectations it declares, read from the input distributions."""
    from fgraph import float_twins

    bound = registry.resolve(registry.MESSAGE, node_type, interface, _families(inputs), "table test")
    twin = float_twins.FLOAT_RULES[bound.function]
    return twin.function(*_expectations(twin, inputs))


def float_energy(node_type, inputs: dict) -> float:
    """The float twin of the registry's average energy for ``inputs``, as :func:`float_message`."""
    from fgraph import float_twins

    bound = registry.resolve(registry.ENERGY, node_type, None, _families(inputs), "table test")
    twin = float_twins.FLOAT_ENERGIES[bound.function]
    return twin.function(*_expectations(twin, inputs))


def _expectations(twin, inputs: dict) -> list:
    return [float(getattr(inputs[name], expectation)) for name, wanted in twin.reads for expectation in wanted]


def assert_message(result, expected: dict):
    """Compare ``result`` with ``expected``: keys ``mean``, ``var``, ``cov``, ``shape``, ``rate``, ``df``,
    ``scale``, ``value`` (point masses), any other attribute of the result, and ``log_scale`` (default 0),
    and the family under ``family``."""
    expected = dict(expected)
    family = expected.pop("family", None)
    if family is not None:
        assert isinstance(result, family), f"expected a {family.__name__}, got {type(result).__name__}"
    np.testing.assert_allclose(result.log_scale, expected.pop("log_scale", 0.0), **TOLERANCE, err_msg="log_scale")
    for name, value in expected.items():
        np.testing.assert_allclose(getattr(result, name), value, **TOLERANCE, err_msg=name)


def normal(mean, var, log_scale=0.0):
    return {"family": UnivariateNormal, "mean": mean, "var": var, "log_scale": log_scale}


def mv_normal(mean, cov, log_scale=0.0):
    return {"family": MultivariateNormal, "mean": mean, "cov": cov, "log_scale": log_scale}


def gamma(shape, rate, log_scale=0.0):
    # mean and variance pin down shape and rate; they are compared too
    return {"family": Gamma, "shape": shape, "rate": rate, "mean": np.divide(shape, rate),
            "var": np.divide(shape, np.square(rate)), "log_scale": log_scale}


def wishart(df, scale, log_scale=0.0):
    return {"family": Wishart, "df": df, "scale": scale, "mean": np.multiply(df, scale), "log_scale": log_scale}


def point_mass(value, log_scale=0.0):
    return {"family": PointMass, "value": value, "log_scale": log_scale}


def inverse_gamma(shape, scale, log_scale=0.0):
    # E[1/x] = shape / scale is compared too
    return {"family": InverseGamma, "shape": shape, "scale": scale, "mean_inverse": np.divide(shape, scale),
            "log_scale": log_scale}


def inverse_gamma_likelihood(shape, scale, log_coefficient):
    """The non-integrable ``exp(κ) x^(-shape-1) exp(-scale/x)``; its ``log_scale`` is κ."""
    return {"family": InverseGammaLikelihood, "shape": shape, "scale": scale, "log_scale": log_coefficient}


def assert_gamma_shape_likelihood(result, alpha, beta, count, log_coefficient):
    """``result`` is ``exp(κ) a^(alpha-1) e^(-beta a) / Γ(a)^count`` (batch elements compared one by one).

    Its parameters are compared exactly and its log-scale against ``κ + log ∫ a^(alpha-1) e^(-beta a)
    Γ(a)^(-count) da`` with the integral by ``scipy.integrate.quad`` (to 1e-10: the family's own
    grid quadrature is the thing checked).
    """
    assert isinstance(result, GammaShapeLikelihood), type(result)
    for name, value in (("alpha", alpha), ("beta", beta), ("count", count)):
        np.testing.assert_allclose(np.broadcast_to(getattr(result, name), result.batch_shape),
                                   np.broadcast_to(value, result.batch_shape), **TOLERANCE, err_msg=name)
    parameters = np.broadcast_arrays(alpha, beta, count, log_coefficient, np.zeros(result.batch_shape))
    expected = [coefficient + _log_gamma_shape_integral(a, b, n)
                for a, b, n, coefficient, _ in zip(*(np.ravel(p) for p in parameters))]
    np.testing.assert_allclose(np.ravel(result.log_scale), expected, rtol=0.0, atol=1e-10, err_msg="log_scale")


def _log_gamma_shape_integral(alpha, beta, count):
    """``log ∫_0^∞ a^(alpha-1) e^(-beta a) Γ(a)^(-count) da`` by adaptive quadrature, split at the mode in log a."""
    def log_density_in_u(u):  # u = log a, Jacobian a included; ~ (alpha + count) u as a underflows to 0
        if u > 700.0:  # a > e^700: the density has long vanished (it decays like exp(-count a log a) or exp(-beta a))
            return -math.inf
        a = math.exp(u)
        return (alpha + count) * u if a == 0.0 else alpha * u - beta * a - count * math.lgamma(a)

    peak = optimize.minimize_scalar(lambda u: -log_density_in_u(u), bounds=(-30.0, 10.0), method="bounded",
                                    options={"xatol": 1e-10}).x
    shift = log_density_in_u(peak)
    total = sum(integrate.quad(lambda u: math.exp(log_density_in_u(u) - shift), low, high, epsabs=0.0, epsrel=1e-12,
                               limit=400)[0] for low, high in ((-np.inf, peak), (peak, np.inf)))
    return shift + math.log(total)
