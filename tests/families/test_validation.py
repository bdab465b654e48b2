"""Every bad parameter raises a ValueError whose message starts with the parameter's name."""
import numpy as np
import pytest

from fgraph.families import (
    Bernoulli,
    Beta,
    Categorical,
    Dirichlet,
    Gamma,
    GammaShapeLikelihood,
    GammaShapeScale,
    InverseGamma,
    MvNormalMeanCovariance,
    MvNormalMeanPrecision,
    MvNormalWeightedMeanPrecision,
    NormalMeanPrecision,
    NormalMeanVariance,
    NormalWeightedMeanPrecision,
    Wishart,
)

SPD = np.array([[2.0, 0.5], [0.5, 1.0]])
NOT_SYMMETRIC = np.array([[2.0, 0.5], [0.4, 1.0]])
INDEFINITE = np.array([[1.0, 2.0], [2.0, 1.0]])

CASES = [
    # (constructor, parameter named in the message, words the message must contain)
    (lambda: NormalMeanVariance(np.nan, 1.0), "mean", "NaN"),
    (lambda: NormalMeanVariance(0.0, 0.0), "var", "strictly positive"),
    (lambda: NormalMeanPrecision(0.0, -1.0), "precision", "strictly positive"),
    (lambda: NormalWeightedMeanPrecision(np.inf, 1.0), "weighted_mean", "infinite"),
    (lambda: Gamma(0.0, 1.0), "shape", "strictly positive"),
    (lambda: Gamma([1.0, -2.0], 1.0), "shape", "strictly positive"),
    (lambda: Gamma(1.0, 0.0), "rate", "strictly positive"),
    (lambda: Gamma(1.0, np.nan), "rate", "NaN"),
    (lambda: GammaShapeScale(1.0, -1.0), "scale", "strictly positive"),
    (lambda: GammaShapeScale(-1.0, 1.0), "shape", "strictly positive"),
    (lambda: InverseGamma(0.0, 1.0), "shape", "strictly positive"),
    (lambda: InverseGamma(1.0, -1.0), "scale", "strictly positive"),
    (lambda: InverseGamma(np.nan, 1.0), "shape", "NaN"),
    (lambda: GammaShapeLikelihood(1.0, np.inf, 1.0), "beta", "infinite"),
    (lambda: GammaShapeLikelihood(1.0, 0.0, -1.0), "count", "non-negative"),
    (lambda: GammaShapeLikelihood(-2.0, 0.0, 1.0), "alpha", "normalisable"),
    (lambda: GammaShapeLikelihood([1.0, 0.0], 1.0, 0.0), "alpha", "strictly positive"),
    (lambda: GammaShapeLikelihood(1.0, -1.0, 0.0), "beta", "strictly positive"),
    (lambda: Beta(0.0, 1.0), "a", "strictly positive"),
    (lambda: Beta(1.0, -0.5), "b", "strictly positive"),
    (lambda: Bernoulli(1.5), "p", "[0, 1]"),
    (lambda: Bernoulli([0.5, -0.1]), "p", "[0, 1]"),
    (lambda: Bernoulli(np.nan), "p", "NaN"),
    (lambda: Categorical([0.5, 0.6]), "p", "sum to one"),
    (lambda: Categorical([1.2, -0.2]), "p", "non-negative"),
    (lambda: Categorical(1.0), "p", "last axis"),
    (lambda: Categorical([[0.5, 0.5], [0.3, 0.6]]), "p", "sum to one"),
    (lambda: Dirichlet([1.0, 0.0]), "alpha", "strictly positive"),
    (lambda: Dirichlet(2.0), "alpha", "last axis"),
    (lambda: MvNormalMeanCovariance([0.0, 0.0], NOT_SYMMETRIC), "cov", "symmetric"),
    (lambda: MvNormalMeanCovariance([0.0, 0.0], INDEFINITE), "cov", "positive definite"),
    (lambda: MvNormalMeanCovariance([0.0, 0.0], np.ones((2, 3))), "cov", "square"),
    (lambda: MvNormalMeanCovariance([0.0, 0.0], np.full((2, 2), np.nan)), "cov", "NaN"),
    (lambda: MvNormalMeanCovariance([0.0, 0.0, 0.0], SPD), "mean", "must match"),
    (lambda: MvNormalMeanCovariance(0.0, SPD), "mean", "event"),
    (lambda: MvNormalMeanCovariance([np.nan, 0.0], SPD), "mean", "NaN"),
    (lambda: MvNormalMeanPrecision([0.0, 0.0], INDEFINITE), "precision", "positive definite"),
    (lambda: MvNormalMeanPrecision([0.0, 0.0], NOT_SYMMETRIC), "precision", "symmetric"),
    (lambda: MvNormalWeightedMeanPrecision([0.0, 0.0], -SPD), "precision", "positive definite"),
    (lambda: MvNormalWeightedMeanPrecision([0.0, np.inf], SPD), "weighted_mean", "infinite"),
    (lambda: Wishart(0.5, SPD), "df", "greater than d - 1"),
    (lambda: Wishart([3.0, 1.0], SPD), "df", "greater than d - 1"),
    (lambda: Wishart(np.nan, SPD), "df", "NaN"),
    (lambda: Wishart(3.0, INDEFINITE), "scale", "positive definite"),
    (lambda: Wishart(3.0, NOT_SYMMETRIC), "scale", "symmetric"),
    (lambda: Wishart(3.0, np.ones(2)), "scale", "square"),
]


@pytest.mark.parametrize("construct, name, words", CASES)
def test_bad_parameter_raises_value_error_naming_it(construct, name, words):
    with pytest.raises(ValueError) as error:
        construct()
    message = str(error.value)
    assert message.startswith(f"{name} "), message
    assert words in message, message


def test_check_false_skips_validation():
    # from_natural builds with check=False; it must not pay for (or trip over) validation.
    assert Gamma(-1.0, 1.0, check=False).batch_shape == ()
    assert Categorical([0.5, 0.6], check=False).event_shape == (2,)


def test_non_numeric_parameter_raises_type_error():
    with pytest.raises(TypeError, match="shape must be numeric"):
        Gamma("two", 1.0)
