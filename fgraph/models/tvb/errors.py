"""The errors of Trustworthy VB: bad arguments (the grid, the powers, the resamples, a functional) and tables on
disk that are of other settings or damaged. Every one is a :class:`TVBError`, a :class:`~fgraph.errors.ModelError`
(so also a ``ValueError``)."""
from __future__ import annotations

from fgraph.errors import ModelError
from fgraph.store import StoreMismatchError

__all__ = ["TVBError", "GridError", "PowerRangeError", "BootstrapCountError", "FunctionalError",
           "UnknownFunctionalError", "TableMismatchError", "CorruptTableError"]


class TVBError(ModelError):
    """Bad input to Trustworthy VB (a :class:`~fgraph.errors.ModelError`, so also a ``ValueError``)."""


class GridError(TVBError):
    """The grid of ω is empty, not one-dimensional, or not finite."""


class PowerRangeError(TVBError):
    """A power ω outside (0, 1]."""


class BootstrapCountError(TVBError):
    """The number of bootstrap resamples B is not an integer >= 1."""


class FunctionalError(TVBError):
    """A functional that cannot be evaluated on these posteriors (a component that does not exist, a Monte Carlo
    h that returns the wrong shape, ...)."""


class UnknownFunctionalError(FunctionalError, LookupError):
    """A functional named by a string that is none of the known ones."""


class TableMismatchError(TVBError, StoreMismatchError):
    """A table on disk was built with other data or settings than the ones asked for."""


class CorruptTableError(TVBError):
    """A finished table's files on disk are truncated, altered or unreadable."""

