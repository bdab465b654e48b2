"""What the scikit-learn estimators of every family share: the checks of their input and hyper-parameters.

:func:`validate_data` is scikit-learn's input validation followed by :func:`check_data_size` (columns whose sum of
squares overflows float64 are named); :func:`encoded_classes` sets ``classes_`` and encodes the labels;
:func:`check_random_state` and :func:`check_integer` refuse a bad ``random_state`` or integer hyper-parameter at
once, naming it. Used by :mod:`fgraph.models.logistic`, :mod:`fgraph.models.mixtures.bayesian_gmm` and
:mod:`fgraph.models.cmn.classifier`; needs scikit-learn (the ``models`` extra).
"""
from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from fgraph.errors import DataError, ModelError, ModelTypeError

__all__ = ["validate_data", "check_data_size", "check_random_state", "check_integer", "encoded_classes"]


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
