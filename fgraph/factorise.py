"""Factorisation, the compiler's first pass: the local clusters of every node and the inputs of its messages.

For each node (:func:`plan_node`): which of its interfaces are latent, how they group into clusters (one
sum-product cluster, mean-field singletons, structured clusters given by constraints, a point-mass form
splitting its variable off), whether its free energy is read from scale factors or from its average energy,
and, per latent interface, the inputs its message reads (:func:`inputs_for`: messages inside its cluster,
marginals of the other clusters, clamped values). The decisions depend on a node's signature alone, so the
identical nodes of an unrolled model take them from one :class:`NodeTemplate` (:class:`NodeTemplates`).
"""
from __future__ import annotations

from dataclasses import dataclass

from fgraph.constraints import Constraints
from fgraph.plates import collapse, collapse_sum_product, collapsible, plate_rule_for
from fgraph.schedule import Input

ALGORITHMS = {"bp": "bp", "vmp": "mf"}


@dataclass(slots=True)  # made for every node of a model
class NodePlan:
    """What the engine needs to know about one node."""

    node: object
    sockets: dict  # interface -> Socket
    clusters: list  # tuples of latent interfaces
    cluster_of: dict  # interface -> cluster
    sum_product: bool  # free energy from scale factors (True) or from the average energy (False)
    sum_product_cluster: tuple | None  # the cluster the scale-factor free energy is computed over
    energy: object = None  # BoundRule for the average energy of a variational or structured node
    marginal_rules: dict = None  # cluster -> [first, steady] BoundRule
    operator: str | None = None  # alternative rule set chosen for this node
    copies: int = 1  # plate size when the node's observed plate is collapsed to sufficient statistics
    plate_rule: object = None  # BoundRule for the product over an observed plate (sum-product nodes)
    #: the sockets in the node's order of interfaces: rules' calls name their inputs by position in it
    #: (:class:`fgraph.calls.Call`), so that identical nodes share them
    row: tuple = ()

    def __post_init__(self):
        self.row = tuple(self.sockets.values())

    def positions(self) -> dict:
        """Socket index -> its position in :attr:`row`."""
        return {socket.index: k for k, socket in enumerate(self.row)}


class FrozenNodePlan(NodePlan):
    """The node plan of a compiled plan (:func:`fgraph.plan.freeze`): read-only."""

    __slots__ = ()

    def __setattr__(self, name, value):
        raise AttributeError(f"a node plan of a compiled plan is not changed (attribute {name!r}); compile the "
                             "model again (fg.compile) for other options")


def plan_node(node, sockets: dict, constraints: Constraints, algorithm: str, forms: dict) -> NodePlan:
    """The local factorisation of one node and how its free energy is computed."""
    latent = [i for i, s in sockets.items() if not s.clamped]
    spec = constraints.spec_for(node, ALGORITHMS[algorithm])
    clusters = _split_point_masses(constraints.clusters_for(node, latent, ALGORITHMS[algorithm]), sockets, forms)
    multi = sum(len(c) > 1 for c in clusters)
    point_mass = bool(forms) and any(forms.get(sockets[i].slot.name) == "point_mass" for i in latent)
    # a node that defines its own variational clusters (a mixture) stays sum-product inside them
    # even when clamped inputs leave a single interface in its sum-product cluster
    own_clusters = spec == "mf" and hasattr(node, "mean_field_clusters")
    sum_product = bool(latent) and (multi == 1 or (multi == 0 and not point_mass and (spec == "bp" or own_clusters)))
    if not sum_product:
        sum_product_cluster = None
    elif multi == 1:
        sum_product_cluster = next(c for c in clusters if len(c) > 1)
    else:  # one interface left: under "bp" the only cluster, for a node's own clusters the first
        sum_product_cluster = clusters[0]
    return NodePlan(
        node, sockets, clusters, {i: c for c in clusters for i in c}, sum_product, sum_product_cluster,
        marginal_rules={}, operator=constraints.operator_for(node),
    )


class NodeTemplate:
    """What :func:`plan_node` and :func:`inputs_for` decide for every node of one signature.

    Both depend on a node's type, which of its interfaces are clamped and its factorisation spec only
    (for an unbatched node, under no form constraint; see :meth:`NodeTemplates.for_node`), so the
    thousands of identical nodes of an unrolled model share the clusters and the inputs of each latent
    interface's step (:func:`inputs_for`, their sockets named by position in the node's row).
    """

    __slots__ = ("clusters", "cluster_of", "sum_product", "sum_product_cluster", "step_inputs")

    def __init__(self, node_plan: NodePlan):
        self.clusters = node_plan.clusters
        self.cluster_of = node_plan.cluster_of
        self.sum_product = node_plan.sum_product
        self.sum_product_cluster = node_plan.sum_product_cluster
        sockets = node_plan.sockets
        self.step_inputs = tuple((interface, inputs_for(sockets, interface, self.clusters, self.cluster_of))
                             for interface, socket in sockets.items() if not socket.clamped)

    def node_plan(self, node, sockets: dict, operator) -> NodePlan:
        return NodePlan(node, sockets, self.clusters, self.cluster_of, self.sum_product, self.sum_product_cluster,
                        marginal_rules={}, operator=operator)


class NodeTemplates:
    """The plan of every node of one compilation, one :class:`NodeTemplate` per signature.

    Every node is planned here (:meth:`plan`): its local factorisation (:func:`plan_node`), an observed
    plate collapsed to its sufficient statistics or a plate rule where one applies
    (:mod:`fgraph.plates`), and the inputs of its steps. The decisions depend on a node's
    signature alone (:meth:`signature`), so the thousands of identical nodes of an unrolled model take
    them from the first such node.
    """

    def __init__(self, constraints: Constraints, algorithm: str, forms: dict, collapse_plates: bool = True):
        self.constraints = constraints
        self.default = ALGORITHMS[algorithm]
        self.algorithm = algorithm
        self.forms = forms
        self.collapse_plates = collapse_plates
        self.templates = {}

    def signature(self, node, sockets: dict):
        """A key that fixes the node's local factorisation and inputs, or ``None`` for a node planned alone.

        Planned alone: a batched node (a plate may be collapsed, and rewires its own sockets), a node
        under a form constraint anywhere in the model, a factorisation given as clusters, and a node
        defining its own mean-field clusters (they may depend on the instance).
        """
        if node.batch_shape or self.forms:
            return None
        spec = self.default if not self.constraints.factorization else self.constraints.spec_for(node, self.default)
        if type(spec) is not str or (spec == "mf" and hasattr(node, "mean_field_clusters")):
            return None
        # the interfaces are the type's own unless it is variadic; which of them are clamped, in their order
        interfaces = node.interfaces if type(node).variadic is not None else None
        return type(node), spec, interfaces, tuple([socket.clamped for socket in sockets.values()])

    def plan(self, node, sockets: dict) -> tuple:
        """``(node plan, step inputs)`` of one node: ``(interface, inputs)`` of the step of each latent interface,
        the inputs shared with the nodes of its signature (:func:`inputs_for`)."""
        key = self.signature(node, sockets)
        template = self.templates.get(key) if key is not None else None
        if template is not None:  # an unbatched node like others before it
            return template.node_plan(node, sockets, self.constraints.operator_for(node)), template.step_inputs
        node_plan = plan_node(node, sockets, self.constraints, self.algorithm, self.forms)
        if self.collapse_plates and collapsible(node_plan):
            collapse(node_plan)
        elif self.collapse_plates:
            node_plan.plate_rule = plate_rule_for(node_plan)
            if node_plan.plate_rule is not None:
                collapse_sum_product(node_plan)
        template = NodeTemplate(node_plan)
        if key is not None:
            self.templates[key] = template
        return node_plan, template.step_inputs


def _split_point_masses(clusters: list, sockets: dict, forms: dict) -> list:
    """A variable constrained to a point mass is seen by every node through its marginal.

    Its interface leaves any sum-product cluster and becomes a cluster of its
    own, so rules receive ``q_<interface>`` (the point mass) instead of a
    message (Şenöz et al. 2021: a δ form constraint sends its marginal back).
    """
    if not forms:
        return clusters
    constrained = {i for i, s in sockets.items() if s.slot is not None and forms.get(s.slot.name) == "point_mass"}
    if not constrained:
        return clusters
    split = []
    for cluster in clusters:
        kept = tuple(i for i in cluster if i not in constrained)
        if kept:
            split.append(kept)
        split.extend((i,) for i in cluster if i in constrained)
    return split


def inputs_for(sockets: dict, interface: str, clusters: list, cluster_of: dict) -> tuple:
    """The inputs of the message out of ``interface`` (:class:`~fgraph.schedule.Input`, sockets named by their
    position in ``sockets``' order): the messages inside its cluster (and its own, for a node that reads it),
    the clamped values, and the marginals (or messages) of the other clusters."""
    inputs = []
    own = cluster_of[interface]
    node = sockets[interface].node
    node_type = type(node)
    position = {name: k for k, name in enumerate(sockets)}
    if node_type.couples_batch or interface in node_type.reads_own_message:
        inputs.append(Input(f"m_{interface}", "m", position[interface]))
    unread = node_type.messages_independent_of.get(node.group_of(interface) or interface)
    if unread:  # interfaces the message does not depend on (by name or variadic group) are no inputs
        unread = {i for i in sockets if i != interface and (node.group_of(i) or i) in unread}
        clusters = [c for c in clusters if not all(i in unread for i in c)]  # a joint marginal stays whole
    for other, socket in sockets.items():
        if other == interface or (unread and other in unread):
            continue
        if socket.clamped:
            inputs.append(Input(f"q_{other}", "clamp", position[other]))
        elif other in own:
            inputs.append(Input(f"m_{other}", "m", position[other]))
    for cluster in clusters:
        if cluster is own:
            continue
        if interface in node_type.messages_across_clusters:
            inputs.extend(Input(f"m_{i}", "m", position[i]) for i in cluster)
        elif len(cluster) == 1:
            inputs.append(Input(f"q_{cluster[0]}", "q", position[cluster[0]]))
        else:
            members = tuple(position[i] for i in cluster)
            inputs.append(Input("q_" + "_".join(cluster), "cluster", cluster=cluster, members=members))
    return tuple(inputs)


def structured(node_plan) -> bool:
    """Whether a sum-product node is structured: a joint cluster with variational clusters beside it.

    Its free-energy term is read off the scales of its cluster's messages,
    which hold the other clusters' marginals of the moment they were
    computed; the average energy of the joint marginal corrects the term when
    those marginals have moved on since (see ``Engine._cluster_energy_change``).
    A node that computes its cluster's evidence itself (a mixture) needs none.
    """
    return (len(node_plan.clusters) > 1 and len(node_plan.sum_product_cluster) > 1
            and getattr(node_plan.node, "cluster_log_evidence", None) is None)
