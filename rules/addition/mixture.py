"""Messages of the addition node when one incoming message is a mixture.

Addition is linear, so a mixture passes through it component by component:
for μ = Σ_k w_k p_k on one input, the outgoing message is Σ_k w_k r_k, where
r_k is what the ordinary rule (``in1.py``, ``in2.py``, ``out.py``) returns
for the component p_k, with its log-scale s_k folded into the weight:
weights w_k e^{s_k}, log-scale log Σ_k w_k e^{s_k} (0 for the shift and
convolution rules of this node, whose messages integrate to one). A mixture
of point masses arises, e.g., from a mixture node that switches between
constants; a mixture of Gaussians from the product node.

The maths is the same for every target and every combination of input
families, so it is written once (:func:`componentwise`), and
:data:`MIXTURE_INPUTS` lists the combinations it is registered for: the
registry keys a rule on its input names (``m_x`` a message, ``q_x`` a known
value), so each combination is one registered rule, named
``towards_<target>[<inputs>]`` in schedules.
"""
import inspect

from fgraph import registry
from fgraph.families import Mixture, PointMass, UnivariateNormal
from fgraph.families.base import logsumexp, stack_last
from fgraph.registry import rule
from fgraph.nodes.addition import Addition

#: For each target: the inputs of every combination served, one of them a mixture.
MIXTURE_INPUTS = {
    "in1": [  # in1 = out − in2
        {"q_out": PointMass, "m_in2": Mixture},  # y − in2 for an observed out = y
        {"m_out": Mixture, "q_in2": PointMass},  # m_out(in1 + c) for a known in2 = c
        {"m_out": Mixture, "m_in2": UnivariateNormal},  # Σ_k w_k N(in1 | μ_k − μ_in2, v_k + v_in2)
        {"m_out": UnivariateNormal, "m_in2": Mixture},  # Σ_k w_k N(in1 | μ_out − μ_k, v_out + v_k)
    ],
    "in2": [  # in2 = out − in1
        {"q_out": PointMass, "m_in1": Mixture},
        {"m_out": Mixture, "q_in1": PointMass},
        {"m_out": Mixture, "m_in1": UnivariateNormal},
        {"m_out": UnivariateNormal, "m_in1": Mixture},
    ],
    "out": [  # out = in1 + in2
        {"m_in1": Mixture, "q_in2": PointMass},
        {"q_in1": PointMass, "m_in2": Mixture},
        {"m_in1": Mixture, "m_in2": UnivariateNormal},  # Σ_k w_k N(out | μ_k + μ_in2, v_k + v_in2)
        {"m_in1": UnivariateNormal, "m_in2": Mixture},
    ],
}


def _component_name(name: str, component_family: type) -> str:
    """A point-mass component is a known value: the ordinary rules take it as ``q_<interface>``."""
    return "q_" + name[2:] if issubclass(component_family, PointMass) else name


def _component_rule(node_type, interface: str, families: dict, name: str, component_family: type):
    local = {key: value for key, value in families.items() if key != name}
    local[_component_name(name, component_family)] = component_family
    return local, registry.resolve(
        registry.MESSAGE, node_type, interface, local, f"{node_type.__name__} (mixture component)"
    )


def _output(interface: str, name: str):
    """Output family: a mixture of whatever the ordinary rule returns for one component."""

    def infer(families: dict) -> type:
        local, bound = _component_rule(Addition, interface, families, name, families[name].component_family)
        return Mixture.of(bound.output_for(local))

    return infer


def componentwise(interface: str, inputs: dict, name: str, node) -> Mixture:
    """Apply the ordinary rule for ``interface`` to every component of the mixture ``inputs[name]``."""
    mixture = inputs[name]
    families = {key: type(value) for key, value in inputs.items()}
    _, bound = _component_rule(type(node), interface, families, name, type(mixture.components[0]))
    renamed = _component_name(name, type(mixture.components[0]))
    others = {key: value for key, value in inputs.items() if key != name}
    results = [bound({**others, renamed: component}, node) for component in mixture.components]
    log_weights = mixture.log_weights + stack_last([r.log_scale for r in results])
    return Mixture.create(log_weights, [r.normalised() for r in results], logsumexp(log_weights, axis=-1))


def _register(target: str, families: dict) -> None:
    """Register :func:`componentwise` towards ``target`` for inputs named and typed as in ``families``.

    The registry reads a rule's input names and families from its signature,
    so the one function body gets the signature of each combination.
    """
    mixture = next(name for name, family in families.items() if family is Mixture)

    def through_the_sum(node, **inputs) -> Mixture:
        return componentwise(target, inputs, mixture, node)

    parameters = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=family)
                  for name, family in families.items()]
    parameters.append(inspect.Parameter("node", inspect.Parameter.KEYWORD_ONLY))
    through_the_sum.__signature__ = inspect.Signature(parameters, return_annotation=Mixture)
    through_the_sum.__name__ = through_the_sum.__qualname__ = f"towards_{target}[{', '.join(families)}]"
    through_the_sum.__doc__ = f"The mixture {mixture} passed through the sum towards {target}, component by component."
    rule(Addition, target, output=_output(target, mixture))(through_the_sum)


for _target, _combinations in MIXTURE_INPUTS.items():
    for _families in _combinations:
        _register(_target, _families)
