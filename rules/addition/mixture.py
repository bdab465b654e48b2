"""Messages of the addition node when one incoming message is a mixture.

Addition is linear, so a mixture passes through it component by component:
for μ = Σ_k w_k p_k on one input, the outgoing message is Σ_k w_k r_k, where
r_k is what the ordinary rule (``in1.py``, ``in2.py``, ``out.py``) returns
for the component p_k, with its log-scale s_k folded into the weight:
weights w_k e^{s_k}, log-scale log Σ_k w_k e^{s_k} (0 for the shift and
convolution rules of this node, whose messages integrate to one). A mixture
of point masses arises, e.g., from a mixture node that switches between
constants; a mixture of Gaussians from the product node.
"""

from fgraph import registry
from fgraph.families import Mixture, PointMass, UnivariateNormal
from fgraph.families.base import logsumexp, stack_last
from fgraph.registry import rule
from nodes.addition import Addition


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


# ---------------------------------------------------------------- towards in1
@rule(Addition, "in1", output=_output("in1", "m_in2"))
def in1_observed_out(q_out: PointMass, m_in2: Mixture, node) -> Mixture:
    """y − in2 for an observed ``out = y`` and a mixture on in2: the mixture of the shifted components."""
    return componentwise("in1", {"q_out": q_out, "m_in2": m_in2}, "m_in2", node)


@rule(Addition, "in1", output=_output("in1", "m_out"))
def in1_constant_in2(m_out: Mixture, q_in2: PointMass, node) -> Mixture:
    """m_out(in1 + c) for a mixture on out and a known in2 = c."""
    return componentwise("in1", {"m_out": m_out, "q_in2": q_in2}, "m_out", node)


@rule(Addition, "in1", output=_output("in1", "m_out"))
def in1_mixture_out(m_out: Mixture, m_in2: UnivariateNormal, node) -> Mixture:
    """Σ_k w_k N(in1 | μ_k − μ_in2, v_k + v_in2) for a mixture on out."""
    return componentwise("in1", {"m_out": m_out, "m_in2": m_in2}, "m_out", node)


@rule(Addition, "in1", output=_output("in1", "m_in2"))
def in1_mixture_in2(m_out: UnivariateNormal, m_in2: Mixture, node) -> Mixture:
    """Σ_k w_k N(in1 | μ_out − μ_k, v_out + v_k) for a mixture on in2."""
    return componentwise("in1", {"m_out": m_out, "m_in2": m_in2}, "m_in2", node)


# ---------------------------------------------------------------- towards in2
@rule(Addition, "in2", output=_output("in2", "m_in1"))
def in2_observed_out(q_out: PointMass, m_in1: Mixture, node) -> Mixture:
    """y − in1 for an observed ``out = y`` and a mixture on in1."""
    return componentwise("in2", {"q_out": q_out, "m_in1": m_in1}, "m_in1", node)


@rule(Addition, "in2", output=_output("in2", "m_out"))
def in2_constant_in1(m_out: Mixture, q_in1: PointMass, node) -> Mixture:
    """m_out(in2 + c) for a mixture on out and a known in1 = c."""
    return componentwise("in2", {"m_out": m_out, "q_in1": q_in1}, "m_out", node)


@rule(Addition, "in2", output=_output("in2", "m_out"))
def in2_mixture_out(m_out: Mixture, m_in1: UnivariateNormal, node) -> Mixture:
    """Σ_k w_k N(in2 | μ_k − μ_in1, v_k + v_in1) for a mixture on out."""
    return componentwise("in2", {"m_out": m_out, "m_in1": m_in1}, "m_out", node)


@rule(Addition, "in2", output=_output("in2", "m_in1"))
def in2_mixture_in1(m_out: UnivariateNormal, m_in1: Mixture, node) -> Mixture:
    """Σ_k w_k N(in2 | μ_out − μ_k, v_out + v_k) for a mixture on in1."""
    return componentwise("in2", {"m_out": m_out, "m_in1": m_in1}, "m_in1", node)


# ---------------------------------------------------------------- towards out
@rule(Addition, "out", output=_output("out", "m_in1"))
def out_mixture_in1_constant_in2(m_in1: Mixture, q_in2: PointMass, node) -> Mixture:
    """The mixture on in1 shifted by a known in2 = c."""
    return componentwise("out", {"m_in1": m_in1, "q_in2": q_in2}, "m_in1", node)


@rule(Addition, "out", output=_output("out", "m_in2"))
def out_constant_in1_mixture_in2(q_in1: PointMass, m_in2: Mixture, node) -> Mixture:
    """The mixture on in2 shifted by a known in1 = c."""
    return componentwise("out", {"q_in1": q_in1, "m_in2": m_in2}, "m_in2", node)


@rule(Addition, "out", output=_output("out", "m_in1"))
def out_mixture_in1(m_in1: Mixture, m_in2: UnivariateNormal, node) -> Mixture:
    """Σ_k w_k N(out | μ_k + μ_in2, v_k + v_in2)."""
    return componentwise("out", {"m_in1": m_in1, "m_in2": m_in2}, "m_in1", node)


@rule(Addition, "out", output=_output("out", "m_in2"))
def out_mixture_in2(m_in1: UnivariateNormal, m_in2: Mixture, node) -> Mixture:
    """Σ_k w_k N(out | μ_in1 + μ_k, v_in1 + v_k)."""
    return componentwise("out", {"m_in1": m_in1, "m_in2": m_in2}, "m_in2", node)
