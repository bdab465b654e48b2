"""Exceptions raised by fgraph, each naming the variable, node or interface at fault.

Every error a user can cause derives from :class:`FgraphError`, and also
from the Python class a Python user would expect: ``ValueError`` for a value
outside its domain, ``TypeError`` for a value of the wrong kind (a string
where a variable belongs, a float where a whole number belongs),
``LookupError`` for a missing rule. ``except fg.FgraphError`` catches them
all; ``except ValueError`` keeps working for code written against numpy.

:class:`ConvergenceWarning` is a warning, not an error: an iterative run
that stopped before meeting its tolerance still returns its result;
:class:`JitterWarning` reports a jitter a kernel matrix needed to be factored.
"""


class FgraphError(Exception):
    """Base class of every error fgraph raises on purpose."""


class ModelError(FgraphError, ValueError):
    """The model is malformed: unknown names, wrong shapes, invalid parameters or options."""


class ModelTypeError(ModelError, TypeError):
    """A value of the wrong kind in a model or an option: a string where a variable or number belongs, ..."""


class DataError(FgraphError, ValueError):
    """Data bound to an observed variable is missing, mis-shaped, not finite or outside its support."""


class DataTypeError(DataError, TypeError):
    """Data of the wrong kind: strings, complex numbers or other objects where numbers belong."""


class RuleNotFoundError(FgraphError, LookupError):
    """No update rule is registered for a message the schedule needs."""


class AmbiguousRuleError(FgraphError, LookupError):
    """Several registered rules fit a message equally well."""


class ScheduleError(FgraphError, ValueError):
    """The schedule cannot run: a message or marginal it needs has no initial value."""


class RuleError(FgraphError, ValueError):
    """A rule could not compute its message from the inputs it received (the message names node and interface)."""


class NumericalError(FgraphError, FloatingPointError):
    """A message, marginal or free-energy term became NaN or infinite."""


class DatasetError(FgraphError, ValueError):
    """An unknown data set name, or a split that the data set cannot provide."""


class ConvergenceWarning(UserWarning):
    """An iterative run stopped before the change of its free energy fell below the tolerance in force."""


class JitterWarning(UserWarning):
    """A kernel matrix was factored only after a jitter was added to its diagonal; the warning gives its size."""
