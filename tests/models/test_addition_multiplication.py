"""Deterministic nodes in a small Gaussian model, by BP, against the closed-form joint Gaussian.

x ~ N(1, 2), w ~ N(-1, 1/2), s = -2 x + w (Multiply then Add), y_i ~ N(s, 0.3) for 4 observations;
also t = x + 3 (Add with a constant), connected to nothing else. With z = (x, w) and
y = H z + e, H = [-2, 1] per row, the posterior of z and the evidence N(y | H E[z], H Cov[z] H^T + 0.3 I)
are closed-form; s, -2x and t are linear images of z.
"""
import numpy as np
import pytest
from scipy import stats

import fgraph as fg
from fgraph.errors import RuleNotFoundError
from fgraph.nodes import Add, Multiply, MvNormal, Normal

TOLERANCE = dict(rtol=1e-10, atol=1e-12)
Y = np.array([0.5, -0.2, 1.0, 0.1])
PRIOR_MEAN = np.array([1.0, -1.0])
PRIOR_COV = np.diag([2.0, 0.5])
NOISE = 0.3


def build():
    with fg.Model() as model:
        x = Normal("x", mean=PRIOR_MEAN[0], var=PRIOR_COV[0, 0])
        w = Normal("w", mean=PRIOR_MEAN[1], var=PRIOR_COV[1, 1])
        scaled = Multiply("scaled", -2.0, x)
        s = Add("s", scaled, w)
        Add("t", x, 3.0)
        Normal("y", mean=s, var=NOISE, observed=Y)
    return model


def closed_form():
    design = np.tile([-2.0, 1.0], (len(Y), 1))
    cov_y = design @ PRIOR_COV @ design.T + NOISE * np.eye(len(Y))
    gain = PRIOR_COV @ design.T @ np.linalg.inv(cov_y)
    mean = PRIOR_MEAN + gain @ (Y - design @ PRIOR_MEAN)
    cov = PRIOR_COV - gain @ design @ PRIOR_COV
    return mean, cov, stats.multivariate_normal(design @ PRIOR_MEAN, cov_y).logpdf(Y)


def test_bp_marginals_and_evidence():
    result = fg.infer(build())
    assert result.plan.exact
    mean, cov, log_evidence = closed_form()
    images = {  # variable -> linear map from z = (x, w), constant offset
        "x": (np.array([1.0, 0.0]), 0.0),
        "w": (np.array([0.0, 1.0]), 0.0),
        "scaled": (np.array([-2.0, 0.0]), 0.0),
        "s": (np.array([-2.0, 1.0]), 0.0),
        "t": (np.array([1.0, 0.0]), 3.0),
    }
    for name, (row, offset) in images.items():
        marginal = result.marginal(name)
        np.testing.assert_allclose(marginal.mean, row @ mean + offset, **TOLERANCE, err_msg=name)
        np.testing.assert_allclose(marginal.var, row @ cov @ row, **TOLERANCE, err_msg=name)
    np.testing.assert_allclose(result.log_evidence, log_evidence, **TOLERANCE)
    for name, value in result.evidence_per_variable().items():
        np.testing.assert_allclose(value, log_evidence, **TOLERANCE, err_msg=name)


def test_vmp_keeps_deterministic_nodes_sum_product():
    """Under VMP, deterministic nodes stay sum-product through the factorisation constraint.

    Every stochastic node here has a single latent interface, for which the mean-field message is the
    factor itself, so the free energy is the Bethe free energy of a tree: minus the log evidence.
    """
    _, _, log_evidence = closed_form()
    init = {name: fg.NormalMeanVariance(0.0, 1.0) for name in ("x", "w", "s")}
    deterministic = {"scaled": "bp", "s": "bp", "t": "bp"}
    result = fg.infer(build(), algorithm="vmp", constraints={"factorization": deterministic}, init=init, iterations=3)
    np.testing.assert_allclose(result.free_energy[-1], -log_evidence, **TOLERANCE)


def test_mean_field_addition_is_reported_at_compile_time():
    """Deterministic nodes have no mean-field rules (nor an average energy): compiling says which rule is missing."""
    init = {name: fg.NormalMeanVariance(0.0, 1.0) for name in ("x", "w", "s", "scaled", "t")}
    with pytest.raises(RuleNotFoundError, match="Multiplication|Addition"):
        fg.compile(build(), algorithm="vmp", init=init)


def test_observed_sum():
    """y = x + w observed without noise: (x, y) and (w, y) are jointly normal, Cov[x, y] = Var[x]."""
    y = 0.7
    with fg.Model() as model:
        x = Normal("x", mean=1.0, var=2.0)
        w = Normal("w", mean=-1.0, var=0.5)
        Add("y", x, w, observed=y)
    result = fg.infer(model)
    var_y = 2.0 + 0.5
    np.testing.assert_allclose(result.log_evidence, stats.norm(0.0, np.sqrt(var_y)).logpdf(y), **TOLERANCE)
    for name, mean, var in (("x", 1.0, 2.0), ("w", -1.0, 0.5)):
        marginal = result.marginal(name)
        np.testing.assert_allclose(marginal.mean, mean + var / var_y * (y - 0.0), **TOLERANCE)
        np.testing.assert_allclose(marginal.var, var - var**2 / var_y, **TOLERANCE)
        np.testing.assert_allclose(result.evidence_per_variable()[name], result.log_evidence, **TOLERANCE)


def test_observed_product_pins_its_input():
    """z = 3 x observed: x = z / 3 exactly, and p(z) = N(z | 3 E[x], 9 Var[x]) (the point mass carries -log 3)."""
    with fg.Model() as model:
        x = Normal("x", mean=1.0, var=2.0)
        Multiply("z", 3.0, x, observed=1.2)
    result = fg.infer(model)
    np.testing.assert_allclose(result.marginal("x").value, 0.4, **TOLERANCE)
    np.testing.assert_allclose(result.log_evidence, stats.norm(3.0, np.sqrt(18.0)).logpdf(1.2), **TOLERANCE)


def test_observed_matrix_product_pins_its_input():
    gain = np.array([[2.0, 1.0], [0.5, -1.0]])
    mean, cov, y = np.array([1.0, 0.0]), np.array([[1.0, 0.3], [0.3, 2.0]]), np.array([0.5, 1.5])
    with fg.Model() as model:
        v = MvNormal("v", mean=mean, cov=cov)
        Multiply("z", gain, v, observed=y)
    result = fg.infer(model)
    np.testing.assert_allclose(result.marginal("v").value, np.linalg.solve(gain, y), **TOLERANCE)
    expected = stats.multivariate_normal(gain @ mean, gain @ cov @ gain.T).logpdf(y)
    np.testing.assert_allclose(result.log_evidence, expected, **TOLERANCE)


def test_a_variable_added_to_itself_is_twice_the_variable():
    """s = x + x observed at 2, x ~ N(0, 1): x = 1 exactly and p(s = 2) = N(2 | 0, 4).

    With x on both inputs of one sum node, BP treated the two as independent variables: it stopped after one
    sweep at x ≈ N(1.33, 0.33) with a log evidence of -3.72 offered as exact. ``Add`` builds 2x instead.
    """
    with fg.Model() as model:
        x = Normal("x", mean=0.0, var=1.0)
        Add("s", x, x, observed=2.0)
    result = fg.infer(model)
    assert result.plan.exact
    np.testing.assert_allclose(result.marginal("x").value, 1.0, **TOLERANCE)
    np.testing.assert_allclose(result.log_evidence, -0.5 * np.log(8.0 * np.pi) - 0.5, **TOLERANCE)


def test_a_variable_added_to_itself_under_noise():
    """x ~ N(1, 2), y ~ N(x + x, 1/2) observed at 3: precision 1/2 + 4 · 2 = 17/2, so Var[x] = 2/17 and
    E[x] = (2/17)(1/2 + 2 · 3 · 2) = 25/17; s = 2x; p(y) = N(3 | 2, 4 · 2 + 1/2)."""
    with fg.Model() as model:
        x = Normal("x", mean=1.0, var=2.0)
        s = Add("s", x, x)
        Normal("y", mean=s, var=0.5, observed=3.0)
    result = fg.infer(model)
    np.testing.assert_allclose([result.marginal("x").mean, result.marginal("x").var], [25 / 17, 2 / 17], **TOLERANCE)
    np.testing.assert_allclose([result.marginal("s").mean, result.marginal("s").var], [50 / 17, 8 / 17], **TOLERANCE)
    np.testing.assert_allclose(result.log_evidence, -0.5 * np.log(2.0 * np.pi * 8.5) - 1.0 / 17.0, **TOLERANCE)
    for name, value in result.evidence_per_variable().items():
        np.testing.assert_allclose(value, result.log_evidence, **TOLERANCE, err_msg=name)


def test_a_vector_added_to_itself():
    """x ~ N(0, I), y ~ N(x + x, I) observed at (2, -1): Cov[x] = I / 5, E[x] = 2y / 5, p(y) = N(y | 0, 5 I)."""
    y = np.array([2.0, -1.0])
    with fg.Model() as model:
        x = MvNormal("x", mean=np.zeros(2), cov=np.eye(2))
        s = Add("s", x, x)
        MvNormal("y", mean=s, cov=np.eye(2), observed=y)
    result = fg.infer(model)
    np.testing.assert_allclose(result.marginal("x").mean, [0.8, -0.4], **TOLERANCE)
    np.testing.assert_allclose(result.marginal("x").cov, 0.2 * np.eye(2), **TOLERANCE)
    np.testing.assert_allclose(result.log_evidence, -np.log(10.0 * np.pi) - 0.5, **TOLERANCE)
