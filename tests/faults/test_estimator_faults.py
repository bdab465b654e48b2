"""Bad input to the scikit-learn estimators is a named error before any fitting: its class, the culprit, the fix.

* ``random_state`` of the wrong kind or range (BayesianGMM, CMNClassifier: the estimators that take one);
* data whose size float64 cannot carry: values near 1e200 or 1e300, whose squares overflow, and columns of very
  different magnitudes (the default prior of the mixture is the inverse of the data's covariance);
* labels a classifier cannot use: NaN, continuous values, a single class.
"""
import re

import numpy as np
import pytest

import fgraph as fg
from fgraph.models.mixtures import BayesianGMM
from fgraph.models.cmn import CMNClassifier
from fgraph.models.logistic import BayesianLogisticRegression, MultinomialLogisticRegression

RNG = np.random.default_rng(7)
X = RNG.standard_normal((40, 3))
Y2 = (X[:, 0] > 0).astype(int)
Y3 = np.digitize(X[:, 0], [-0.5, 0.5])

#: each estimator small and quick, with the labels it fits (None: a density, no labels)
ESTIMATORS = {
    "BayesianGMM": (BayesianGMM, dict(n_components=2, max_iter=5), None),
    "CMNClassifier": (CMNClassifier, dict(n_experts=2, max_iter=3), Y2),
    "BayesianLogisticRegression": (BayesianLogisticRegression, dict(max_iter=5), Y2),
    "BayesianLogisticRegression-laplace": (BayesianLogisticRegression, dict(likelihood="laplace"), Y2),
    "MultinomialLogisticRegression": (MultinomialLogisticRegression, dict(max_iter=5), Y3),
    "MultinomialLogisticRegression-laplace": (MultinomialLogisticRegression, dict(likelihood="laplace"), Y3),
}
CLASSIFIERS = [name for name, (_, _, y) in ESTIMATORS.items() if y is not None]


def make(name, **parameters):
    """The estimator ``name`` with its small settings, ``parameters`` on top."""
    estimator, settings, _ = ESTIMATORS[name]
    return estimator(**{**settings, **parameters})


def fit(name, data, labels=None, **parameters):
    y = ESTIMATORS[name][2]
    estimator = make(name, **parameters)
    return estimator.fit(data) if y is None else estimator.fit(data, y if labels is None else labels)


# ---------------------------------------------------------------------------------------- random_state
RANDOM_STATES = {
    # estimator: (accepted in the message, bad values of the wrong kind, out-of-range integers)
    "BayesianGMM": ("None, an integer in 0..2**32 - 1 or a numpy RandomState", ["abc", 1.5, True,
                                                                                 np.random.default_rng(0)],
                    [-1, 2**32]),
    "CMNClassifier": ("None, a non-negative integer or a numpy random generator (Generator, RandomState, "
                      "SeedSequence or BitGenerator)", ["abc", 1.5, True, [0.5]], [-1]),
}
CASES = [(name, value) for name, (_, kinds, ranges) in RANDOM_STATES.items() for value in kinds + ranges]


@pytest.mark.parametrize("name, value", CASES, ids=[f"{n}-{v!r}" if isinstance(v, (str, int, float, list)) else
                                                   f"{n}-{type(v).__name__}" for n, v in CASES])
def test_a_bad_random_state_is_named(name, value):
    accepted, kinds, _ = RANDOM_STATES[name]
    expected = fg.ModelTypeError if any(value is kind for kind in kinds) else fg.ModelError
    with pytest.raises(expected) as raised:
        fit(name, X, random_state=value)
    message = str(raised.value)
    assert message.startswith(f"{name}: random_state must be {accepted}, got "), message
    assert repr(value)[:20] in message
    assert isinstance(raised.value, TypeError) == (expected is fg.ModelTypeError)
    assert isinstance(raised.value, ValueError)  # scikit-learn's convention for a bad parameter


@pytest.mark.parametrize("name, good", [("BayesianGMM", np.random.RandomState(3)), ("BayesianGMM", 2**32 - 1),
                                        ("CMNClassifier", np.random.default_rng(3)), ("CMNClassifier", 2**40),
                                        ("CMNClassifier", np.int64(5)), ("BayesianGMM", None)])
def test_the_random_states_an_estimator_accepts_still_fit(name, good):
    fit(name, X, random_state=good)


# ------------------------------------------------------------------------------------- sizes of the data
def scaled(*factors):
    data = X.copy()
    for column, factor in enumerate(factors):
        data[:, column] *= factor
    return data


@pytest.mark.parametrize("factor", [1e200, 1e300])
@pytest.mark.parametrize("name", ESTIMATORS)
def test_data_too_large_for_float64_is_named_with_the_fix(name, factor):
    with pytest.raises(fg.DataError) as raised:
        fit(name, X * factor)
    message = str(raised.value)
    assert message.startswith(f"{name.split('-')[0]}: "), message
    assert "too large" in message and "overflow" in message, message
    assert re.search(r"columns? 0\b", message) and "standardise" in message, message  # the culprit and the fix


@pytest.mark.parametrize("name", ESTIMATORS)
def test_one_column_too_large_among_ordinary_ones_is_named(name):
    with pytest.raises(fg.DataError, match=r"too large.*column 2.*standardise"):
        fit(name, scaled(1.0, 1.0, 1e300))


@pytest.mark.parametrize("name", ESTIMATORS)
def test_predicting_at_data_too_large_is_named(name):
    """The probabilities were NaN, silently."""
    estimator = fit(name, X)
    for method in ("predict_proba", "score_samples"):
        if hasattr(estimator, method):
            with pytest.raises(fg.DataError, match=r"too large.*column.*standardise"):
                getattr(estimator, method)(X[:5] * 1e300)


@pytest.mark.parametrize("name", [n for n in CLASSIFIERS if "Logistic" in n])
def test_learning_online_from_data_too_large_is_named(name):
    labels = ESTIMATORS[name][2]
    with pytest.raises(fg.DataError, match=r"too large.*column.*standardise"):
        make(name).partial_fit(X * 1e300, labels, classes=np.unique(labels))


def test_data_too_small_for_the_mixture_is_named():
    """Variances below float64's smallest normal number: the default W₀ was "not finite", or "singular (a constant
    feature ...)" though no feature is constant."""
    for factor in (1e-160, 1e-200):
        with pytest.raises(fg.DataError, match=r"too small.*standardise"):
            fit("BayesianGMM", X * factor)


@pytest.mark.parametrize("factors, column", [((1e8, 1e-8, 1.0), "column 0"), ((1.0, 1e-100, 1.0), "column 1")],
                         ids=["1e8-and-1e-8", "1e-100"])
def test_columns_of_very_different_magnitudes_are_named_by_the_mixture(factors, column):
    """The default W₀ is the inverse of the data's covariance: scales far apart make it numerically singular. The
    message said "W₀ must be positive definite", a prior the user never gave."""
    with pytest.raises(fg.DataError) as raised:
        fit("BayesianGMM", scaled(*factors))
    message = str(raised.value)
    assert "magnitude" in message and column in message and "standardise" in message, message
    assert "W₀ must be positive definite" not in message


def test_standardised_data_of_very_different_magnitudes_fits_the_mixture():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    make_pipeline(StandardScaler(), BayesianGMM(n_components=2, max_iter=5)).fit(scaled(1e8, 1e-8, 1.0))


@pytest.mark.parametrize("name", [n for n in ESTIMATORS if n != "BayesianGMM" and n != "CMNClassifier"])
def test_the_regressions_still_fit_columns_of_very_different_magnitudes(name):
    """Pólya-Gamma and the Gaussian approximations handle them: no check may refuse what fits."""
    fit(name, scaled(1e100, 1e-100, 1.0))


def test_a_breakdown_of_the_network_on_unscaled_features_says_to_standardise():
    """Features of order 1e4 break the CMN's fit from drawn coefficients (its priors assume order one; a draw
    times such an input saturates the gate): the error says so and what to do, not "check the inputs of this
    node"."""
    with pytest.raises(fg.NumericalError) as raised:
        fit("CMNClassifier", scaled(1e4, 1.0, 1.0), random_state=0, max_iter=50, initial="draws")
    message = str(raised.value)
    assert message.startswith("CMNClassifier: "), message
    assert "column 0" in message and "StandardScaler" in message, message


# --------------------------------------------------------------------------------------------- labels
@pytest.mark.parametrize("name", CLASSIFIERS)
def test_nan_labels_are_named(name):
    labels = ESTIMATORS[name][2].astype(float)
    labels[4] = np.nan
    with pytest.raises(ValueError, match=r"y contains NaN"):
        fit(name, X, labels)


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_continuous_labels_are_named(name):
    with pytest.raises(ValueError, match=r"Unknown label type: continuous"):
        fit(name, X, X[:, 1])


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_a_single_class_is_named(name):
    with pytest.raises(fg.DataError, match=r"only one class"):
        fit(name, X, np.zeros(len(X), dtype=int))


@pytest.mark.parametrize("name", ["BayesianLogisticRegression", "BayesianLogisticRegression-laplace"])
def test_three_classes_to_the_binary_classifier_are_named(name):
    with pytest.raises(fg.DataError, match=r"Only binary classification.*multiclass"):
        fit(name, X, Y3)
