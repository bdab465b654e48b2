"""What the scikit-learn estimators of every family share: the checks of their input and hyper-parameters.

:func:`validate_data` is scikit-learn's input validation followed by :func:`check_data_size` (columns whose sum of
squares overflows float64 are named); :func:`encoded_classes` sets ``classes_`` and encodes the labels;
:func:`check_random_state` and :func:`check_integer` refuse a bad ``random_state`` or integer hyper-parameter at
once, naming it. :func:`bound_tolerance` and :func:`report_convergence` are the one stopping convention of the
iterative (VMP) estimators, scikit-learn's for a lower bound: ``n_iter_``, ``lower_bound_``, ``converged_`` and a
``ConvergenceWarning`` naming the estimator, ``max_iter`` and its value. Used by :mod:`fgraph.models.logistic`,
:mod:`fgraph.models.mixtures.bayesian_gmm`, :mod:`fgraph.models.cmn.classifier` and :mod:`fgraph.models.gp`; needs
scikit-learn (the ``models`` extra).
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets

from fgraph.errors import DataError, ModelError, ModelTypeError

__all__ = ["validate_data", "check_data_size", "check_random_state", "check_integer", "encoded_classes",
           "bound_tolerance", "report_convergence"]


_NO_Y = "no_validation"  # scikit-learn's marker for "validate X only"


def encoded_classes(estimator, y) -> np.ndarray:
    """Set ``estimator.classes_`` (the sorted labels of ``y``, at least two) and return ``y`` as class indices."""
    check_classification_targets(y)
    classes, labels = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise DataError(f"{type(estimator).__name__} needs samples of at least 2 classes, but the data contain only "
                        f"one class: {classes.tolist()[0]!r}")
    estimator.classes_ = classes
    return labels.astype(np.int64)


def validate_data(estimator, X, y=_NO_Y, reset=True):
    """scikit-learn's input validation (``validate_data`` from 1.6, the estimator method before), then
    :func:`check_data_size` of ``X``.

    ``y=None`` is validated as a target (and refused with scikit-learn's message).
    """
    try:
        from sklearn.utils.validation import validate_data as sklearn_validate_data
    except ImportError:  # scikit-learn < 1.6
        validated = estimator._validate_data(X, y, reset=reset, dtype=np.float64)
    else:
        validated = sklearn_validate_data(estimator, X, y, reset=reset, dtype=np.float64)
    check_data_size(estimator, validated if isinstance(y, str) and y == _NO_Y else validated[0])
    return validated


def check_data_size(estimator, X, forms: str = "the products x xᵀ of the features") -> None:
    """Raise :class:`~fgraph.errors.DataError` naming the columns of ``X`` (finite, (N, d)) whose sum of squares
    overflows float64, and what to do.

    Every estimator sums squares and products of the features (``forms``, as the message says it): x xᵀ in the
    Pólya-Gamma and Gaussian updates, the data's covariance in the mixture. Once a column's sum of squares passes
    float64's largest number (values near 1e154) they are infinite, and the fit fails far from the cause (a NaN
    message of some node) or the probabilities come out NaN."""
    with np.errstate(over="ignore"):
        squares = np.einsum("ij,ij->j", X, X)
    too_large = np.flatnonzero(~np.isfinite(squares))
    if too_large.size:
        largest = float(np.max(np.abs(X[:, too_large])))
        one = too_large.size == 1
        raise DataError(f"{type(estimator).__name__}: X is too large: column{'' if one else 's'} "
                        f"{', '.join(str(int(j)) for j in too_large)} of X {'holds' if one else 'hold'} values up to "
                        f"{largest:.3g}, and the sum{'' if one else 's'} of {'its' if one else 'their'} squares "
                        f"overflow{'s' if one else ''} float64 (overflow in {forms}); scale or standardise X first "
                        "(e.g. a StandardScaler in a pipeline)")


def check_random_state(estimator, random_state, kinds: tuple = (np.random.Generator,),
                       upper: int | None = None) -> None:
    """Raise a named error unless ``random_state`` is one the estimator accepts: None, a non-negative integer
    (below ``upper`` if given) or an instance of one of numpy's ``kinds``.

    Refused at once, naming the parameter: passed on unchecked, a wrong value fails deep in numpy or scikit-learn
    ("SeedSequence expects int or sequence of ints for entropy not abc") or is taken for another seed (True for 1).
    :class:`~fgraph.errors.ModelTypeError` for a value of the wrong kind, :class:`~fgraph.errors.ModelError` for
    an integer out of range (both are ``ValueError``, scikit-learn's class for a bad parameter).
    """
    if random_state is None or isinstance(random_state, kinds):
        return
    names = [kind.__name__ for kind in kinds]
    integers = "a non-negative integer" if upper is None else f"an integer in 0..{_power_of_two(upper)} - 1"
    if not names:  # seeds only
        accepted = f"None or {integers}"
    elif len(names) == 1:
        accepted = f"None, {integers} or a numpy {names[0]}"
    else:
        accepted = f"None, {integers} or a numpy random generator ({', '.join(names[:-1])} or {names[-1]})"
    message = f"{type(estimator).__name__}: random_state must be {accepted}, got {random_state!r}"
    if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral):
        raise ModelTypeError(message)
    if random_state < 0 or (upper is not None and random_state >= upper):
        raise ModelError(message)


def _power_of_two(number: int) -> str:
    exponent = int(number).bit_length() - 1
    return f"2**{exponent}" if number == 2 ** exponent else str(number)


def check_integer(name: str, value, least: int, allow_none: bool = False) -> None:
    """Raise ``ValueError`` unless the hyper-parameter ``name`` is an integer >= ``least`` (or None, if
    ``allow_none``)."""
    if allow_none and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
        raise ValueError(f"{name} must be an integer >= {least}{' or None' if allow_none else ''}, got {value!r}")


def bound_tolerance(estimator, n_samples: int) -> float:
    """The stopping tolerance in nats of the whole ELBO of ``n_samples`` points: ``tol · n_samples``.

    ``tol`` is a change of the ELBO *per sample*, scikit-learn's convention for a lower bound (``GaussianMixture``
    stops on the change of the mean log-likelihood): the ELBO is a sum over the points, and a fixed change in nats
    is a hundred times stricter on ten thousand points than on a hundred. Coordinate ascent creeps on nearly
    separable data (:class:`~fgraph.models.cmn.CMNClassifier`'s ``tol`` says how slowly), and an absolute
    tolerance met on a small data set was out of reach of the same budget on a larger one.
    """
    return float(estimator.tol) * int(n_samples)


def report_convergence(estimator, elbo, converged: bool, iterations: int, n_samples: int | None = None,
                       best: int | None = None, stacklevel: int = 2, warn: bool = True) -> None:
    """Set ``lower_bound_``, ``n_iter_`` and ``converged_`` on ``estimator`` the scikit-learn way, and say a run
    stopped by ``max_iter`` with scikit-learn's ``ConvergenceWarning``, naming the estimator, ``max_iter=`` and its
    value, the last change and ``tol``.

    ``elbo``: the ELBO after every sweep, (T,) or (T, R) with a column per restart; ``lower_bound_`` is the final
    ELBO of restart ``best`` (by default the highest, ``argmax`` of the last row), as in scikit-learn's
    ``BayesianGaussianMixture``. ``n_samples``: ``tol`` was per sample (:func:`bound_tolerance`) and the warning
    quotes the change per sample; None: ``tol`` was in nats of the whole ELBO. The change quoted is the largest
    over the restarts. ``stacklevel`` is the warning's, seen from the caller (2: the caller's caller); ``warn=False``
    sets the attributes only (a run asked for ``max_iter`` sweeps, without a tolerance).
    """
    elbo = np.asarray(elbo, dtype=float)
    columns = elbo.reshape(len(elbo), -1)
    chosen = int(np.argmax(columns[-1])) if best is None else int(best)
    estimator.lower_bound_ = float(columns[-1, chosen])
    estimator.n_iter_ = int(iterations)
    estimator.converged_ = bool(converged)
    if estimator.converged_ or not warn:
        return
    change = float(np.max(np.abs(columns[-1] - columns[-2]))) if len(columns) > 1 else float("nan")
    scale = "" if n_samples is None else " per sample"
    if n_samples is not None:
        change /= int(n_samples)
    restarts = " of a restart" if columns.shape[1] > 1 else ""
    cap = estimator.max_iter
    warnings.warn(f"{type(estimator).__name__} did not converge in max_iter={cap} sweeps: the ELBO{scale}{restarts} "
                  f"still changed by {change:.3g} nats in the last one (tol={estimator.tol}); increase max_iter "
                  f"(now {cap}) or tol", ConvergenceWarning, stacklevel=stacklevel + 1)
