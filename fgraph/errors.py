"""Exceptions raised by fgraph, each naming the variable, node or interface at fault."""


class FgraphError(Exception):
    """Base class of every error fgraph raises on purpose."""


class ModelError(FgraphError, ValueError):
    """The model is malformed: unknown names, wrong shapes, invalid parameters."""


class DataError(FgraphError, ValueError):
    """Data bound to an observed variable is missing, mis-shaped or not finite."""


class RuleNotFoundError(FgraphError, LookupError):
    """No update rule is registered for a message the schedule needs."""


class AmbiguousRuleError(FgraphError, LookupError):
    """Several registered rules fit a message equally well."""


class ScheduleError(FgraphError, ValueError):
    """The schedule cannot run: a message or marginal it needs has no initial value."""


class NumericalError(FgraphError, FloatingPointError):
    """A message, marginal or free-energy term became NaN or infinite."""
