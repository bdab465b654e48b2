"""The Bethe free energy of a run's state, and its log evidence from the scale factors.

    F = Σ_a (U_a − H[q_a]) + Σ_v (d_v − 1) H[q_v]

summed over the nodes a and the latent variables v (of degree d_v), from the messages and marginals an
:class:`~fgraph.run_state.RunState` holds; read only. A node solved by sum-product contributes its cluster's
``−log Z`` read off a scaled message, a variational node its average energy (or, over a plate, the sum
it registered with :func:`fgraph.registry.energy_total`). In a model with copies every quantity is one
number per copy (an array of the copy shape): the copies are a batch axis, summed once at the end of each
term. What depends on the plan alone (the variables' coefficients, the energies' calls) is worked out on
first use and kept in ``plan.derived``.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from fgraph import registry
from fgraph.calls import Call, grouped_sources
from fgraph.errors import NumericalError
from fgraph.families.base import Distribution
from fgraph.families.mixture import Mixture
from fgraph.families.pointmass import PointMass, Uninformative
from fgraph.families.product import product
from fgraph.numerical_checks import explain_overflow
from fgraph.run_state import StateView, cluster_input_name


def _adders(state) -> tuple:
    """``(sum, sum over a batch)`` for the run's model: Python floats, or one number per copy."""
    return _adders_for(state.copy_shape)


@functools.lru_cache(maxsize=None)
def _adders_for(copy_shape: tuple) -> tuple:
    """:func:`_adders` of a model with the copies ``copy_shape``, made once per copy shape (every node's term
    asks)."""
    if not copy_shape:
        return _total, _sum_over_batch
    return (lambda values: _per_copy_total(values, copy_shape),
            lambda values, batch_shape: _per_copy_sum_over_batch(values, batch_shape, copy_shape))


def free_energy(state) -> float | np.ndarray:
    """Bethe free energy: sum over nodes of (U_a - H[q_a]) plus sum over variables of (d_v - 1) H[q_v].

    One number, or in a model with copies an array of the copy shape: the
    free energy of each copy (the copies are independent models).

    The entropy of each variable's marginal enters once, with the net
    coefficient of its variable term and of the nodes that treat it as a
    cluster of its own, so that a marginal whose coefficient is zero (e.g.
    a mixture between mean-field plate factors) needs no entropy. Those
    coefficients depend on the graph alone and are worked out once per plan
    (:func:`_variable_terms`); the marginals are the ones the sweep cached,
    so no moment of an unchanged marginal is computed twice. Every message enters: the run's on-demand
    steps must be complete (:meth:`fgraph.engine.Engine.complete`).
    """
    terms = variable_terms(state)
    total = 0.0
    add = _adders(state)[0]
    finite = math.isfinite if not state.copy_shape else _all_finite
    for node_plan in state.plan.nodes.values():
        term = _node_term(state, node_plan)
        if not finite(term):
            raise NumericalError(explain_overflow(
                state.graph, state.data, ("node", node_plan.node.name),
                f"the free energy term of node {node_plan.node.name!r} ({type(node_plan.node).__name__}) is {term}; "
                "check its parameters and initial marginals"
            ))
        total += term
    for slot, degree, coefficient in terms:
        if coefficient is None:  # scale form: the variable's terms are scales of its messages
            term = (degree - 1.0) * add(state.belief(slot).log_scale) - sum(
                add(state.inbound(socket).log_scale) for socket in slot.sockets
            )
        else:
            entropy = state.marginal(slot).entropy()
            weight = state.entropy_weight(slot)
            term = coefficient * add(entropy if weight is None else weight * entropy)
        if not finite(term):
            raise NumericalError(explain_overflow(state.graph, state.data, ("variable", slot.name),
                                                        f"the free energy term of variable {slot.name!r} is {term}"))
        total += term
    return float(total) if not state.copy_shape else total


def _variable_terms(state) -> list:
    """``(slot, degree, coefficient of its summed entropy)`` per latent variable that has a term.

    The coefficient is ``None`` for a variable in scale form (see
    :func:`_scale_form`); variables whose net coefficient is zero are left out.
    """
    coefficients = {}  # slot index -> net coefficient of the summed entropy of its marginal
    for node_plan in state.plan.nodes.values():
        for socket in _entropy_sockets(node_plan):
            _subtract_entropy(socket, coefficients)
    terms = []
    for slot in state.graph.latent_slots:
        degree = slot.multiplicity()
        if _scale_form(state, slot):
            terms.append((slot, degree, None))
            continue
        coefficient = coefficients.get(slot.index, 0.0) + degree - 1.0
        if abs(coefficient) >= 1e-12:
            terms.append((slot, degree, coefficient))
    return terms


def _entropy_sockets(node_plan) -> list:
    """The sockets whose variable's entropy a node's term leaves to the variable (single clusters)."""
    if not node_plan.sum_product:
        return [node_plan.sockets[c[0]] for c in node_plan.clusters if len(c) == 1]
    return [node_plan.sockets[c[0]] for c in node_plan.clusters if c is not node_plan.sum_product_cluster]


def _scale_form(state, slot) -> bool:
    """Whether a variable's free-energy terms can be written with scale factors alone.

    When every factor around a variable treats it by sum-product, its belief
    is the product of its incoming messages and each outgoing message the
    product of the others, so its entropy and the factors' cross-entropy
    terms cancel into scales: ``(d - 1) log Z̄_v - Σ_a log Z̄_{v→a}``. This
    needs no entropy (a mixture belief has none in closed form).
    """
    cached = state.plan.derived.scale_form_slots.get(slot.index)
    if cached is None:
        cached = state.plan.forms.get(slot.name) is None and state.entropy_weight(slot) is None and all(
            state.plan.nodes[s.node.name].sum_product
            and s.interface in state.plan.nodes[s.node.name].sum_product_cluster
            for s in slot.sockets
        )
        state.plan.derived.scale_form_slots[slot.index] = cached
    return cached


def average_energy(state, node_plan) -> np.ndarray:
    return energy_call(state, node_plan).run(state, node_plan)


def energy_call(state, node_plan) -> Call:
    """The :class:`~fgraph.calls.Call` of a node's average energy, made once per plan."""
    call = state.plan.derived.energy_calls.get(node_plan.node.name)
    if call is None:
        call = state.plan.derived.energy_calls[node_plan.node.name] = Call.of(
            node_plan.energy, _energy_sources(state, node_plan))
    return call


def variable_terms(state) -> list:
    """``(slot, degree, coefficient of its entropy or None for scale form)`` per latent variable with a term
    (:func:`_variable_terms`), made once per plan."""
    terms = state.plan.derived.variable_terms
    if terms is None:
        terms = state.plan.derived.variable_terms = _variable_terms(state)
    return terms


def _energy_sources(state, node_plan) -> dict:
    """Input name -> ``(kind, where)`` of a node's average energy (see :class:`~fgraph.calls.Call`), groups collected."""
    position = node_plan.positions()
    sources = {key: (Call.MARGINAL, position[socket.index]) if cluster is None else (Call.CLUSTER, cluster)
               for key, socket, cluster in _energy_inputs(state, node_plan)}
    return grouped_sources(node_plan.node, sources)


def _summed_energy(state, node_plan, per_copy: bool = False):
    """``(Σ U, count)`` of a plate node whose average energy offers its sum over the plate, else ``None``.

    The sum is the :class:`~fgraph.registry.EnergyTotal` registered for the node's average energy
    (:func:`fgraph.registry.energy_total`), a function of the same marginals giving ``(sum over the
    elements it broadcasts to, their number)`` or ``None`` where it has no shortcut. The free energy
    needs only that sum, and it can come from sums the updates computed already (e.g.
    ``Σ_i E[(y_i - μ)²]``), without a per-element energy over the plate. In a model with copies
    (``per_copy``) only a total registered ``per_copy`` is used: one sum per copy (an array of the copy
    shape) and the number of elements of one copy.
    """
    name = node_plan.node.name
    known = state.plan.derived.summed_energy_calls.get(name, False)
    if known is False:
        known = None
        total = registry.total_of(node_plan.energy.function) if node_plan.energy is not None else None
        if total is not None and type(node_plan.node).variadic is None:
            spec = _energy_inputs(state, node_plan)
            if all(cluster is None for _, _, cluster in spec):
                known = (Call.of(node_plan.energy, _energy_sources(state, node_plan), function=total.function),
                         total.per_copy)
        state.plan.derived.summed_energy_calls[name] = known
    if known is None or (per_copy and not known[1]):
        return None
    return known[0].run(state, node_plan)


def _energy_inputs(state, node_plan) -> list:
    """``(input name, socket, cluster or None)`` of a node's average energy, worked out once per plan."""
    spec = state.plan.derived.energy_inputs.get(node_plan.node.name)
    if spec is None:
        spec = [(f"q_{interface}", socket, None) for interface, socket in node_plan.sockets.items()
                if socket.clamped]
        for cluster in node_plan.clusters:
            if len(cluster) == 1:
                spec.append((f"q_{cluster[0]}", node_plan.sockets[cluster[0]], None))
            else:
                spec.append((cluster_input_name(cluster), None, cluster))
        state.plan.derived.energy_inputs[node_plan.node.name] = spec
    return spec


def _node_term(state, node_plan):
    """A node's free-energy term, without the entropies of its single-variable clusters: a float, or in a
    model with copies one term per copy (an array of the copy shape), each summed over the plate axes
    alone (a collapsed plate's sockets have the batch of the copies: one element per copy standing for
    the plate's ``node_plan.copies`` elements).
    """
    node = node_plan.node
    (add, sum_over_batch), copy_shape = _adders(state), state.copy_shape
    if not node_plan.sum_product:
        batch = node.batch_shape
        # a collapsed plate computes one element's energy; ``copies`` multiplies it below
        summed = _summed_energy(state, node_plan, per_copy=bool(copy_shape)) if node_plan.copies == 1 else None
        if summed is not None:  # the node gave the sum over its plate directly
            total, count = summed
            power = node.power if type(node.power) is not np.ndarray else node.power.reshape(copy_shape)
            energy = power * total * (math.prod(batch[len(copy_shape):]) / count)
            if copy_shape:
                energy = np.broadcast_to(energy, copy_shape)
        else:
            energy = average_energy(state, node_plan)
            if node_plan.copies > 1:  # a collapsed plate: one element (per copy)
                batch = copy_shape + (1,) * (len(batch) - len(copy_shape))
            if not copy_shape and (type(energy) is np.float64 or type(energy) is float):  # one number
                energy = node.power * float(energy) * math.prod(batch)
            else:
                energy = sum_over_batch(node.power * energy, batch)  # power: per copy
        entropy = 0.0
        for cluster in node_plan.clusters:
            if len(cluster) > 1:
                entropy = entropy + add(state.cluster_marginal(node_plan, cluster).entropy())
        return node_plan.copies * (energy - entropy)
    cluster = node_plan.sum_product_cluster
    first = node_plan.sockets[cluster[0]]
    incoming = {i: state.inbound(node_plan.sockets[i]) for i in cluster}
    # a node whose cluster's evidence is not read off one of its own messages says how to compute it
    own = getattr(node, "cluster_log_evidence", None)
    log_z = own(StateView(state), node_plan) if own is not None else None
    if log_z is not None:
        log_z = add(log_z)
    elif type(node).couples_batch:
        # along the coupled (last) axis every element holds the sequence's evidence: read it once per sequence
        evidence = _last_step_evidence(state.outbound[first.index], incoming[cluster[0]], node.batch_shape)
        log_z = add(evidence) - sum(add(incoming[i].log_scale) for i in cluster)
    else:
        log_z = add(product(state.outbound[first.index], incoming[cluster[0]]).log_scale
                    - sum(incoming[i].log_scale for i in cluster))
    cross = 0.0
    for interface in cluster:
        message = incoming[interface]
        if isinstance(message, Uninformative) or _scale_form(state, node_plan.sockets[interface].slot):
            continue  # a scale-form variable accounts for this term itself
        q = state.socket_marginal(node_plan.sockets[interface])
        cross = cross + add(_expected_log(q, message.normalised()))
    return cross - log_z + _cluster_energy_change(state, node_plan)


def _cluster_energy_change(state, node_plan):
    """What a structured node's scale-form term misses when the other clusters' marginals moved on.

    The term's ``−log Z'`` is read off the message on the first interface of
    the sum-product cluster ``c``, computed from the marginals ``q'`` of the
    other clusters (e.g. ``q'(θ)``) as they were then: ``Z'`` normalises
    ``q_c ∝ Π_{i∈c} m_i · exp E_{q'}[log f]``, the joint marginal that
    message implies. The node's term in the free energy of the current
    state is ``U_a(q_c, q) − H[q_c]`` with the current ``q``, which is
    ``−log Z' + Σ_i E[log m̄_i] + U_a(q_c, q) − U_a(q_c, q')``. This returns
    the last difference (zero while ``q = q'``), summed like any average
    energy; zero for a node that recorded nothing (no average energy of its
    joint marginal: a single cluster, or a mixture's own term).
    """
    recorded = state.cluster_inputs.get(node_plan.node.name)
    if recorded is None:
        return 0.0
    sum_over_batch = _adders(state)[1]
    steady, used = recorded
    current = {name: state.socket_marginal(node_plan.sockets[name[2:]]) for name in used}
    if all(current[name] is q for name, q in used.items()):  # marginals are never modified in place
        return 0.0
    cluster = node_plan.sum_product_cluster
    joint = state.cluster_marginal(node_plan, cluster, used, steady)
    change = _average_energy_with(state, node_plan, joint, current) - _average_energy_with(state, 
        node_plan, joint, used)
    node = node_plan.node
    if state.copy_shape:
        batch = node.batch_shape
        if node_plan.copies > 1:  # a collapsed plate: one element per copy
            batch = state.copy_shape + (1,) * (len(batch) - len(state.copy_shape))
        return node_plan.copies * sum_over_batch(node.power * change, batch)
    batch = () if node_plan.copies > 1 else node.batch_shape
    return node_plan.copies * _total(node.power * _sum_over_batch(change, batch))


def _average_energy_with(state, node_plan, joint: Distribution, others: dict) -> np.ndarray:
    """The average energy of a structured node under ``joint`` (its sum-product cluster's marginal) and the
    marginals ``others`` of its other clusters (input name -> marginal); clamped interfaces as they are."""
    inputs = {}
    for key, socket, cluster in _energy_inputs(state, node_plan):
        if cluster is not None:
            inputs[key] = joint
        elif socket.clamped:
            inputs[key] = state.clamped[socket.index]
        else:
            inputs[key] = others[key]
    return node_plan.energy(node_plan.node.group_inputs(inputs, tuple), node_plan.node)


def _subtract_entropy(socket, coefficients: dict) -> None:
    """Record ``-H[q]`` for every element of a socket (a plate socket sees the marginal once per copy)."""
    slot = socket.slot
    per_element = int(np.prod(socket.batch_shape, dtype=int)) * socket.copies / max(
        int(np.prod(slot.variable.batch_shape, dtype=int)), 1)
    coefficients[slot.index] = coefficients.get(slot.index, 0.0) - per_element

# ---------------------------------------------------------- evidence


def log_evidence(state) -> float | np.ndarray:
    """``log p(data)`` from the scale factors (exact after one sweep of BP on a tree).

    In a model with copies, one per copy (an array of the copy shape).
    """
    add, sum_over_batch = _adders(state)
    total = 0.0
    for slot, coupled in state.plan.evidence_readers:
        log_scale = state.belief(slot).log_scale
        if coupled is not None or type(log_scale) is not np.float64:
            log_scale = _one_per_sequence(log_scale, coupled)
        # batch elements of a plate are independent copies (their evidences add up), unless a
        # compound node couples them, in which case every element already holds the whole evidence
        total += add(log_scale)  # a Python float without numpy's cost on one number
    clamped_only = state.plan.derived.clamped_only_nodes
    if clamped_only is None:  # factors of clamped values only (found once per plan)
        clamped_only = state.plan.derived.clamped_only_nodes = [
            node_plan for node_plan in state.plan.nodes.values() if not node_plan.clusters]
    for node_plan in clamped_only:
        energy = average_energy(state, node_plan)
        power = node_plan.node.power
        if type(power) is np.ndarray:  # one power per copy
            total -= sum_over_batch(power * energy, node_plan.node.batch_shape)
        else:
            total -= power * sum_over_batch(energy, node_plan.node.batch_shape)
    if not (math.isfinite(total) if type(total) is float else np.all(np.isfinite(total))):
        # −∞ is the evidence of data the model cannot produce, but also what a sum of overflowing squares
        # becomes: the latter is named (the components of the readers and of the clamped-only factors)
        vertices = [("variable", slot.name) for slot, _ in state.plan.evidence_readers]
        vertices += [("node", node_plan.node.name) for node_plan in clamped_only]
        message = f"the log evidence is {_describe_value(total)}"
        for vertex in vertices:
            explained = explain_overflow(state.graph, state.data, vertex, message)
            if explained != message:
                raise NumericalError(explained)
    return total


def evidence_per_variable(state) -> dict:
    """The log-scale of the belief of every latent variable (equal on a tree, per component); the run's
    on-demand steps must be complete."""
    computed = state.plan.computed
    return {slot.name: state.belief(slot).log_scale for slot in state.graph.latent_slots
            if computed is None or slot.name in computed}


def _last_step_evidence(outbound: Distribution, inbound: Distribution, batch: tuple):
    """The log-scales of ``outbound · inbound`` at the last step of each sequence of a coupled node of batch
    ``batch`` (what :func:`_one_per_sequence` keeps), multiplying the last steps alone where both messages
    can be indexed: a product over the whole sequence would be computed to read one element of it."""
    if len(batch) >= 1 and outbound.batch_shape == batch and inbound.batch_shape == batch:
        step = (slice(None),) * (len(batch) - 1) + (-1,)
        try:
            last = product(outbound[step], inbound[step]).log_scale
        except NotImplementedError:
            last = None
        if last is not None and np.shape(last) == batch[:-1]:
            return last
    return _one_per_sequence(product(outbound, inbound).log_scale, batch)


def _one_per_sequence(log_scale, coupled_batch):
    """The log-scales of a belief with one element per independent sequence.

    ``coupled_batch`` is the batch shape of a compound node whose last axis is
    a coupled sequence (``None``: no such node). A belief of that batch shape
    holds its sequence's evidence at the last step (at every step when the
    node smooths; a causal one, which filters, holds the evidence of the
    steps up to t at t), so the last step is kept; a belief with other axes
    has one element per independent copy already.
    """
    log_scale = np.asarray(log_scale)
    if coupled_batch is None or log_scale.shape != tuple(coupled_batch):
        return log_scale
    return log_scale[..., -1]


def _sum_over_batch(values, batch_shape: tuple) -> float:
    """Sum of a per-element quantity over a batch, where ``values`` may be broadcast-compressed."""
    values = np.asarray(values)
    return _total(values) * (math.prod(batch_shape) / max(values.size, 1))


def _per_copy_total(values, copy_shape: tuple) -> np.ndarray:
    """The sum of a batch-shaped array over every axis but the leading copy axes, shape ``copy_shape``.

    A number (no axes) is the same for every copy.
    """
    values = np.asarray(values)
    nc = len(copy_shape)
    if values.ndim > nc:
        values = values.sum(axis=tuple(range(nc, values.ndim)))
    return np.broadcast_to(values, copy_shape) if values.shape != copy_shape else values


def _per_copy_sum_over_batch(values, batch_shape: tuple, copy_shape: tuple) -> np.ndarray:
    """:func:`_sum_over_batch` per copy: the sum over the plate axes of ``values`` broadcast to ``batch_shape``."""
    values = np.asarray(values)
    nc = len(copy_shape)
    if values.ndim < len(batch_shape):
        values = values.reshape((1,) * (len(batch_shape) - values.ndim) + values.shape)
    repeats = math.prod(size for size, own in zip(batch_shape[nc:], values.shape[nc:]) if own != size)
    return _per_copy_total(values, copy_shape) * repeats


def _describe_value(value) -> str:
    """A number, or the values of an array (one per copy), for a message."""
    return f"{float(value):.6g}" if np.ndim(value) == 0 else str(np.asarray(value))


def _all_finite(values) -> bool:
    return bool(np.all(np.isfinite(values)))


def _total(values) -> float:
    """The sum of an array (or the value of a scalar) as a Python float, without numpy's overhead on scalars."""
    if type(values) is np.float64 or type(values) is float:
        return float(values)
    values = np.asarray(values)
    return values.item() if values.size == 1 else float(values.sum())


def _expected_log(q: Distribution, message: Distribution) -> np.ndarray:
    """``E_q[log message(x)]`` for a normalised message."""
    if isinstance(q, PointMass):
        return message.logpdf(q.value)
    if isinstance(q, Mixture):
        return sum(q.weights[..., k] * _expected_log(c, message) for k, c in enumerate(q.components))
    return -q.cross_entropy(message)
