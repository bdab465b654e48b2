"""Sum-product messages of the Gauss–Markov chain with a random gain or precision: an error naming the node.

The exact (sum-product) messages to a random gain or process precision of a linear-Gaussian chain, and
through them to the states, are in no family here (the marginal likelihood of the gain is a ratio of
determinants). :class:`~fgraph.nodes.gauss_markov_chain.VariationalGaussMarkovChainNode` is variational only; under
``algorithm="bp"`` (or factorization ``"bp"`` for the node) the compiler binds the rules below, which stop
the run at its first message to the node with a :class:`~fgraph.errors.ModelError` that says to use
``algorithm="vmp"``. They are registered for every set of inputs the node's one sum-product cluster gives
its interfaces (``gain`` or ``precision`` may be a clamped constant, read as ``q_``).
"""
import inspect

from fgraph.errors import ModelError
from fgraph.families import Distribution, PointMass, UnivariateNormal
from fgraph.families.gamma import Gamma
from fgraph.registry import rule
from fgraph.nodes.gauss_markov_chain import VariationalGaussMarkovChainNode

OUTPUTS = {"out": UnivariateNormal, "gain": UnivariateNormal, "precision": Gamma, "moments": PointMass}
# the interfaces a message does not read (VariationalGaussMarkovChainNode.messages_independent_of)
UNREAD = {"out": ("gain", "precision"), "moments": ("out",)}


def needs_vmp(node, interface: str):
    raise ModelError(
        f"node {node.name!r} (GaussMarkovChain with a random gain or precision) has no sum-product messages (asked "
        f"for its message to {interface!r}): the exact messages to and through a random gain or precision are in "
        f"no family; learn them with algorithm='vmp' (or factorization 'mf' for this node)")


def _register(interface: str, clamped: str | None) -> None:
    names = [f"m_{interface}"]
    for other in ("out", "gain", "precision", "moments"):
        if other != interface and other not in UNREAD.get(interface, ()):
            names.append(f"{'q' if other == clamped else 'm'}_{other}")
    if clamped is not None and f"q_{clamped}" not in names:
        return  # the message does not read the clamped interface: the same inputs as without it

    def sum_product(node=None, **inputs):
        needs_vmp(node, interface)

    parameters = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=Distribution) for name in names]
    parameters.append(inspect.Parameter("node", inspect.Parameter.KEYWORD_ONLY))
    sum_product.__signature__ = inspect.Signature(parameters, return_annotation=OUTPUTS[interface])
    name = f"sum_product_{interface}" + (f"_known_{clamped}" if clamped else "")
    sum_product.__qualname__ = sum_product.__name__ = name
    rule(VariationalGaussMarkovChainNode, interface)(sum_product)


for _interface in OUTPUTS:
    for _clamped in (None, "gain", "precision"):
        if _clamped != _interface:
            _register(_interface, _clamped)
