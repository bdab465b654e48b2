"""The mixture node: a switch selects which of K inputs the output equals.

    f(out, switch, in1, ..., inK) = Π_k δ(out − in_k)^{switch_k},

with ``switch`` a one-hot (categorical) variable. Each input may be the end of
a whole sub-model (its own prior, likelihood or nested mixture); the output
connects to what the sub-models share. With scale factors the node turns
Bayesian model averaging, selection and combination into message passing
(van Erp et al. 2023, §4–5):

* the message to ``switch`` is a scaled categorical whose weights are the
  evidences ``∫ μ_in_k μ_out`` of the sub-models;
* the message to ``out`` is the mixture of the input messages weighted by the
  switch and by their scales (a point-mass switch selects one input; a
  variational ``q(switch)`` weights the conditional posteriors by q);
* the message to ``in_k`` is ``μ_out``; under sum-product it is scaled by the
  switch's weight of k, so the belief on a sub-model's edges is its
  conditional posterior ``p(s | y, m = k)`` with log-scale ``log p(y, m = k)``.

The output may be observed (``observed=y``): the switch then receives each
sub-model's likelihood ``μ_in_k(y)`` and each input the point mass at y,
scaled by the switch's weight of k.

Local factorisations: ``"bp"`` (model averaging, and selection with a
point-mass form constraint on the switch) or the structured
``[("out", "in1", ..., "inK"), ("switch",)]`` (a variational switch, model
combination), which is what ``"mf"`` (``algorithm="vmp"``) means for this node.
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.families.categorical import one_hot_violation
from fgraph.model import Variable, random_variable
from fgraph.node import FactorNode

__all__ = ["Mixture", "MixtureNode"]


class MixtureNode(FactorNode):
    interfaces = ("out", "switch")
    variadic = ("in", "inputs")
    event_ndims = {"out": 0, "switch": 1, "inputs": 0}
    rules_handle_scales = True
    reads_own_message = ("out",)
    messages_across_clusters = ("switch",)

    def __init__(self, name, batch_shape=(), power=1.0, interfaces=None, value_ndim=0, **attributes):
        super().__init__(name, batch_shape, power, interfaces, **attributes)
        if power != 1.0:
            raise ValueError(f"node {name!r}: a mixture node cannot carry a power; temper the sub-models instead")
        self.value_ndim = value_ndim

    @property
    def inputs(self) -> tuple:
        return tuple(i for i in self.interfaces if i not in type(self).interfaces)

    def conditional_interfaces(self) -> tuple:
        return self.inputs

    def interface_event_ndim(self, interface: str) -> int:
        return 1 if interface == "switch" else self.value_ndim

    @classmethod
    def parameter_event_ndim(cls, interface: str, attributes: dict) -> int:
        return 1 if interface == "switch" else attributes.get("value_ndim", 0)

    def mean_field_clusters(self) -> list:
        """What ``"mf"`` means here: sum-product between out and the inputs, a variational switch."""
        return [("out",) + self.inputs, ("switch",)]

    def cluster_log_evidence(self, state, node_plan):
        """``log Z`` of the sum-product cluster ``(out, inputs)`` when the switch is not in it.

        With a variational (or point-mass) switch the cluster's term is
        ``Σ_k q_k F_k`` (van Erp et al. 2023, eq. 12), which is
        ``E_q[log μ_switch] − s_out − Σ_k s_k`` with μ_switch the scaled
        message of sub-model evidences towards the switch and ``s`` the
        log-scales of the messages into the cluster. Read this way it holds
        whether ``out`` is latent or observed (no message to an observed
        ``out`` exists to read it from). ``None`` (the engine's default) when
        the switch is inside the cluster or clamped.
        """
        sockets = node_plan.sockets
        switch = sockets["switch"]
        if switch.clamped or "switch" in node_plan.sum_product_cluster:
            return None
        to_switch = state.message_out(switch)
        q = state.marginal(switch).mean  # probabilities, or the one-hot point of a selection
        with np.errstate(divide="ignore"):
            log_message = np.log(to_switch.probabilities) + np.asarray(to_switch.log_scale)[..., None]
        expected = np.sum(np.where(q > 0, q * log_message, 0.0), axis=-1)
        scales = sum(state.message_in(sockets[i]).log_scale for i in node_plan.sum_product_cluster)
        return expected - scales

    def check_event_shapes(self, event_shapes: dict) -> None:
        check_switch_categories(event_shapes["switch"], len(self.inputs))

    @staticmethod
    def check_parameter(interface, value):
        if interface == "switch":
            violation = one_hot_violation(value)
            if violation is not None:
                raise ValueError(
                    f"a fixed switch must be one-hot (it selects one input), got {violation}; "
                    "for known mixing probabilities give the switch a prior, Categorical('z', p=...), "
                    "and let inference weigh the inputs"
                )


def check_switch_categories(switch_event_shape: tuple, input_count: int) -> None:
    """Raise ValueError unless the switch has one category per input (K = number of inputs)."""
    categories = switch_event_shape[-1] if switch_event_shape else None
    if categories is not None and categories != input_count:
        raise ValueError(
            f"the switch has K = {categories} categories but the mixture has {input_count} inputs; "
            "give one input per category of the switch"
        )


def Mixture(name, switch, inputs, observed=None, batch_shape=None, event_shape=None):
    """The variable ``name`` equal to ``inputs[k]`` when the one-hot ``switch`` selects k.

    ``switch`` is a categorical variable over K = len(inputs) values (or a
    fixed one-hot vector; known mixing probabilities are a prior,
    ``Categorical("z", p=...)``); ``inputs`` are variables (ends of
    sub-models) or constants. Needs K >= 2. The event shape of the values is
    that of the variable inputs; when every input is a constant, give
    ``event_shape`` for vectors (the default ``()`` reads them as scalars).
    """
    inputs = list(inputs)
    if len(inputs) < 2:
        raise ValueError(f"Mixture {name!r}: give at least two inputs, got {len(inputs)}")
    first = next((i for i in inputs if isinstance(i, Variable)), None)
    if event_shape is None:
        event_shape = first.event_shape if first is not None else ()
    event_shape = tuple(event_shape)
    switch_event_shape = switch.event_shape if isinstance(switch, Variable) else np.shape(switch)[-1:]
    try:
        check_switch_categories(tuple(switch_event_shape), len(inputs))
    except ValueError as error:
        raise ModelError(f"Mixture {name!r}: {error}") from None
    parameters = {"switch": switch}
    parameters.update({f"in{k + 1}": value for k, value in enumerate(inputs)})
    return random_variable(
        MixtureNode, name, parameters, observed, batch_shape, event_shape=event_shape, value_ndim=len(event_shape)
    )
