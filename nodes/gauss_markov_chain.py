"""A whole scalar Gauss–Markov chain in one node: x_1 ~ N(m₀, v₀), x_t ~ N(a x_{t−1}, q).

The linear-Gaussian state-space (first-order auto-regressive) prior over
x_1..x_T, held as one factor over an interface ``out`` of batch shape
``(T,)``. Its message to each x_t is computed by one forward (Kalman) and one
backward pass over the messages the rest of the graph sends to the x_t
(observations through Normal nodes, the input messages of mixture nodes,
...), with log-scales, so the evidence is exact on a tree. The chain couples
its batch elements (``couples_batch``), like :mod:`fgraph.nodes.markov_chain`.

Attributes (fixed numbers): ``gain`` a (non-zero), ``var`` q > 0 (process
noise variance), ``initial_mean`` m₀ and ``initial_var`` v₀ > 0 (numbers, or
one per chain of a batch, shape ``batch[:-1]``: a stream's carried state),
``causal`` (False: smoothing marginals; True: the message to x_t is the
prediction from the steps before t alone, so the marginals are the filtering
ones and the last step holds the sequence's evidence).

**A random gain and process precision (VMP).** ``GaussMarkovChain(name, gain=a, precision=w, ...)``
with a scalar ``Normal`` variable ``a`` and/or a ``Gamma`` variable ``w`` learns an AR(1) coefficient and
innovation precision (``precision=`` is the inverse of ``var=``: give one of the two; ``var`` is a number,
``gain`` and ``precision`` a number or a variable). With numbers only the chain is the
:class:`GaussMarkovChainNode` above, unchanged. Otherwise it is a :class:`VariationalGaussMarkovChainNode`
with interfaces ``out``, ``gain``, ``precision`` (a number there is a clamped constant) and ``moments``, and it
runs under ``algorithm="vmp"``: the structured mean field q(x_1..x_T) q(a) q(w) of variational linear
dynamical systems (Beal 2003, ch. 5; Barber 2012, §24.5), every update a coordinate step on the free energy:

* to ``moments``: the point mass at (E[a], Var[a], E[w], E[log w]) of the current q(a), q(w). Its variable,
  ``<name>_moments``, is created with the chain (declared just before its states, so the default schedule
  updates it right before ``out``; a point mass has no entropy and adds nothing to the free energy);
* to ``out``: the forward–backward pass of the fixed chain with gain E[a] and process variance 1/E[w], read
  from ``moments``: E_q[log N(x_t | a x_{t−1}, 1/w)] = log N(x_t | E[a] x_{t−1}, 1/E[w]) − ½ c x²_{t−1}
  + ½ (E[log w] − log E[w]), c = E[w] Var[a], so every x_1..x_{T−1} gets the extra precision c (a
  pseudo-observation at 0, folded into the incoming messages before the pass; its scale and the constant go
  into the log-scales, which make the belief integrate to ∫ Π_t μ_t exp E_q[log f]);
* to ``gain``: N(a) of precision E[w] Σ_t E[x²_{t−1}] and weighted mean E[w] Σ_t E[x_t x_{t−1}];
* to ``precision``: Gamma(w | 1 + (T − 1)/2, ½ Σ_t (E[x_t²] − 2 E[a] E[x_t x_{t−1}] + E[a²] E[x²_{t−1}]))
  (sums over t = 2..T).

The pair moments are those of the joint q(x) that the message to ``out`` made: its precision is tridiagonal
with off-diagonal κ = −E[w] E[a] (of the moments it read), so the marginal of (x_{t−1}, x_t) has that same
off-diagonal and, with the marginal variances s, s' of the two steps, the covariance
ρ = −2κ s s' / (1 + √(1 + 4κ² s s')) (:func:`transition_statistics`; it equals the RTS J_{t−1} Var[x_t]). The
messages to ``gain`` and ``precision`` read κ from ``moments`` (before its first update the node declares
gain 0, κ = 0: an initial q(x), given by ``init``, factorises). The node's free-energy term is that of its
sum-product cluster plus U(q(x), q) − U(q(x), q′) when q(a), q(w) moved on after the message to ``out``
(:meth:`VariationalGaussMarkovChainNode.cluster_log_evidence`), so VMP's free energy is the structured bound,
and it never increases.

Batches (``batch_shape``): the gain and the precision are shared by every chain (variables of batch ``()``:
the node's messages to them sum over the chains) or one per chain (batch ``batch_shape + (1,)``). With random
parameters ``causal=True``, streaming (:meth:`carried_state`), a model with copies, a chain of one step and
``algorithm="bp"`` (no sum-product message to a random gain or precision exists) are errors that say so.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Distribution, PointMass
from fgraph.families.base import product
from fgraph.families.normal import LOG_2PI
from fgraph.model import Model, Variable, random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.support import POSITIVE

__all__ = ["GaussMarkovChain", "GaussMarkovChainNode", "VariationalGaussMarkovChainNode"]


class GaussMarkovChainNode(FactorNode):
    """``out`` (batch ``(..., T)``, scalar): the states of linear-Gaussian chains (time last)."""

    interfaces = ("out",)
    event_ndims = {"out": 0}
    couples_batch = True

    def __init__(self, name, batch_shape=(), power=1.0, gain=None, var=None, initial_mean=0.0, initial_var=None,
                 causal=False, **attributes):
        if len(batch_shape) < 1 or batch_shape[-1] < 1:
            raise ValueError(
                f"node {name!r}: a Gauss-Markov chain needs a batch shape (..., T) with T >= 1, got {batch_shape}")
        numbers = {"gain": gain, "var": var, "initial_mean": initial_mean, "initial_var": initial_var}
        for key, value in numbers.items():
            per_chain = key.startswith("initial") and np.shape(value) == tuple(batch_shape[:-1])
            if value is None or (np.ndim(value) != 0 and not per_chain) or not np.all(np.isfinite(value)):
                raise ValueError(f"node {name!r}: {key} must be a finite number"
                                 f"{' (or one per chain)' if key.startswith('initial') else ''}, got {value!r}")
        if float(gain) == 0.0:
            raise ValueError(f"node {name!r}: a zero gain makes the states independent; use a plated Normal instead")
        for key in ("var", "initial_var"):
            if np.any(np.asarray(numbers[key], dtype=float) <= 0.0):
                raise ValueError(f"node {name!r}: {key} must be strictly positive, got {numbers[key]!r}")
        if power != 1.0:
            raise ValueError(f"node {name!r}: a Gauss-Markov chain node cannot carry a power")
        start = {key: float(value) if np.ndim(value) == 0 else np.asarray(value, dtype=float)
                 for key, value in (("initial_mean", initial_mean), ("initial_var", initial_var))}
        super().__init__(name, batch_shape, power, gain=float(gain), var=float(var), causal=bool(causal), **start,
                         **attributes)

    def mean_field_clusters(self) -> list:
        """Under VMP the chain is one structured cluster (the same forward–backward passes)."""
        return [("out",)]

    def carried_state(self, marginal: Distribution) -> dict:
        """The start of the chain's continuation: the prediction N(a m, a² v + q) from the last step's N(m, v)."""
        mean = np.broadcast_to(marginal.mean, self.batch_shape)[..., -1]
        var = np.broadcast_to(marginal.var, self.batch_shape)[..., -1]
        return {"initial_mean": self.gain * mean, "initial_var": self.gain**2 * var + self.var}


class VariationalGaussMarkovChainNode(FactorNode):
    """``out`` (batch ``(..., T)``): the states of x_1 ~ N(m₀, v₀), x_t ~ N(a x_{t−1}, 1/w); ``gain`` a and
    ``precision`` w, random (a number on one of them is clamped), of batch ``gain_batch``/``precision_batch``:
    ``()`` shared by the chains or ``(..., 1)`` one per chain; ``moments`` (batch the two broadcast, event
    ``(4,)``, a point mass): (E[a], Var[a], E[w], E[log w]) as the message to ``out`` reads them.

    Variational only: under ``"mf"`` (``algorithm="vmp"``) the clusters are ``(out,)``, ``(gain,)``,
    ``(precision,)`` and ``(moments,)``, the structured mean field of the module docstring.
    """

    interfaces = ("out", "gain", "precision", "moments")
    event_ndims = {"out": 0, "gain": 0, "precision": 0, "moments": 1}
    support = {"precision": POSITIVE}
    couples_batch = True
    #: the message to out reads q(a), q(w) through the moments only; the moments do not depend on q(x)
    messages_independent_of = {"out": ("gain", "precision"), "moments": ("out",)}
    #: before the first update of the moments: gain 0 (κ = 0, an initial q(x) that factorises), precision 1
    default_initial = {"moments": lambda variable: PointMass(
        np.broadcast_to(UNCOUPLED_MOMENTS, variable.batch_shape + (len(UNCOUPLED_MOMENTS),)), 1)}

    def __init__(self, name, batch_shape=(), power=1.0, interfaces=None, initial_mean=0.0, initial_var=None,
                 gain_batch=(), precision_batch=(), **attributes):
        if len(batch_shape) < 1 or batch_shape[-1] < 2:
            raise ValueError(f"node {name!r}: a Gauss-Markov chain with a random gain or precision needs a batch "
                             f"shape (..., T) with T >= 2 (one transition to learn them from), got {batch_shape}")
        for key, value in (("initial_mean", initial_mean), ("initial_var", initial_var)):
            per_chain = np.shape(value) == tuple(batch_shape[:-1])
            if value is None or (np.ndim(value) != 0 and not per_chain) or not np.all(np.isfinite(value)):
                raise ValueError(f"node {name!r}: {key} must be a finite number (or one per chain), got {value!r}")
        if np.any(np.asarray(initial_var, dtype=float) <= 0.0):
            raise ValueError(f"node {name!r}: initial_var must be strictly positive, got {initial_var!r}")
        if power != 1.0:
            raise ValueError(f"node {name!r}: a Gauss-Markov chain node cannot carry a power")
        start = {key: float(value) if np.ndim(value) == 0 else np.asarray(value, dtype=float)
                 for key, value in (("initial_mean", initial_mean), ("initial_var", initial_var))}
        for key, shape in (("gain", gain_batch), ("precision", precision_batch)):
            shape = tuple(shape)
            if len(shape) > len(batch_shape) or not _broadcasts_to(shape, tuple(batch_shape[:-1]) + (1,)):
                raise ValueError(f"node {name!r}: the {key} must have batch () (shared by the chains) or "
                                 f"{tuple(batch_shape[:-1]) + (1,)} (one per chain), got {shape}")
        moments_batch = np.broadcast_shapes(tuple(gain_batch), tuple(precision_batch))
        super().__init__(name, batch_shape, power, interfaces, **start, gain_batch=tuple(gain_batch),
                         precision_batch=tuple(precision_batch), moments_batch=moments_batch, **attributes)

    def interface_batch_shape(self, interface: str) -> tuple:
        """The states have the node's batch; gain and precision their variables' (``()`` when shared by the
        chains, ``(..., 1)`` one per chain), the moments the broadcast of the two."""
        return self.batch_shape if interface == "out" else getattr(self, f"{interface}_batch")

    def mean_field_clusters(self) -> list:
        """Structured mean field: q(x_1..x_T) (one forward–backward cluster), q(a), q(w) and the moments."""
        return [("out",), ("gain",), ("precision",), ("moments",)]

    def carried_state(self, marginal: Distribution) -> dict:
        raise ModelError(f"node {self.name!r}: a Gauss-Markov chain with a random gain or precision cannot carry "
                         "its state into the next chunk (the prediction would need q(a) and q(w)); stream a chain "
                         "with fixed numbers")

    def cluster_log_evidence(self, state, node_plan):
        """``log Z`` of the cluster ``(out,)`` for the engine's free energy, one per chain.

        The engine's term is ``−log Z + Σ_t E[log μ̄_t]``. With ``log Z'`` the log-scale of the message to
        ``out``, computed from the moments q′ of the gain and precision (kept on that message), that is
        U(q(x), q′) − H[q(x)]; the term of the current state, U(q(x), q) − H[q(x)], needs
        ``log Z = log Z' − (U(q(x), q) − U(q(x), q′))``, with U the transitions' average energy under the
        pair moments of q(x) (:func:`transition_energy`).
        """
        sockets = node_plan.sockets
        out = sockets["out"]
        sent, incoming = state.message_out(out), state.message_in(out)
        batch = self.batch_shape
        evidence = np.broadcast_to(product(sent, incoming).log_scale, batch)[..., -1]
        log_z = evidence - np.sum(np.broadcast_to(incoming.log_scale, batch), axis=-1)
        used = getattr(sent, "__dict__", {}).get(READ_MOMENTS)
        if used is None:  # not the chain's own message (damped): the moments the engine holds
            used = state.marginal(sockets["moments"]).value
        now = parameter_moments(state.marginal(sockets["gain"]), state.marginal(sockets["precision"]))
        used = read_moments(used)
        if all(np.array_equal(np.broadcast_to(a, np.shape(b)), b) for a, b in zip(now, used)):
            return log_z
        statistics = transition_statistics(state.marginal(out), coupling(used), batch)
        change = transition_energy(statistics, now, batch[-1]) - transition_energy(statistics, used, batch[-1])
        return log_z - np.broadcast_to(change, batch[:-1] + (1,))[..., 0]


#: (E[a], Var[a], E[w], E[log w]) before anything has computed them: a chain with κ = 0.
UNCOUPLED_MOMENTS = (0.0, 0.0, 1.0, 0.0)
#: Name under which the message to ``out`` keeps the moments it was computed from (for the free energy).
READ_MOMENTS = "_gauss_markov_read_moments"


def parameter_moments(q_gain: Distribution, q_precision: Distribution) -> tuple:
    """``(E[a], Var[a], E[w], E[log w])`` of the marginals (or constants) on ``gain`` and ``precision``."""
    return (np.asarray(q_gain.mean, dtype=float), np.asarray(q_gain.var, dtype=float),
            np.asarray(q_precision.mean, dtype=float), np.asarray(q_precision.mean_log, dtype=float))


def read_moments(value) -> tuple:
    """The moments ``(E[a], Var[a], E[w], E[log w])`` of a value of the ``moments`` interface (event ``(4,)``)."""
    value = np.asarray(value)
    return tuple(value[..., k] for k in range(len(UNCOUPLED_MOMENTS)))


def coupling(moments: tuple):
    """κ = −E[w] E[a]: the off-diagonal of the precision of q(x) between successive steps."""
    return -moments[2] * moments[0]


def sum_to(array, shape: tuple):
    """``array`` (a per-chain sum, batch ``(..., 1)``) summed over the axes a parameter of batch ``shape`` is
    shared along: its extra leading axes and those where ``shape`` has length 1 (numpy's broadcasting, undone)."""
    array = np.asarray(array)
    lead = array.ndim - len(shape)
    shared = tuple(lead + i for i, size in enumerate(shape) if size == 1 and array.shape[lead + i] != 1)
    axes = tuple(range(lead)) + shared
    summed = np.sum(array, axis=axes, keepdims=True) if axes else array
    return summed.reshape(shape)


def transition_statistics(q_out: Distribution, coupling, batch_shape: tuple) -> tuple:
    """``(Σ_t E[x²_{t−1}], Σ_t E[x_t x_{t−1}], Σ_t E[x_t²])`` over t = 2..T per chain, each ``batch[:-1] + (1,)``.

    ``q_out`` holds the marginals q(x_t); ``coupling`` κ the off-diagonal of the precision of the joint q(x)
    (a number, or one per chain ``(..., 1)``). The marginal of (x_{t−1}, x_t) has precision off-diagonal κ
    too (the steps before t − 1 and after t are independent given the pair, so marginalising them changes the
    diagonal only); with marginal variances s, s' its covariance ρ solves ρ = −κ (s s' − ρ²):
    ρ = −2κ s s' / (1 + √(1 + 4κ² s s')), the root with ρ² < s s' (no cancellation for any κ).
    """
    mean = np.broadcast_to(q_out.mean, batch_shape)
    var = np.broadcast_to(q_out.var, batch_shape)
    second = var + mean * mean
    spread = var[..., :-1] * var[..., 1:]
    coupling = np.asarray(coupling, dtype=float)
    covariance = -2.0 * coupling * spread / (1.0 + np.sqrt(1.0 + 4.0 * coupling * coupling * spread))
    cross = mean[..., 1:] * mean[..., :-1] + covariance
    return (np.sum(second[..., :-1], axis=-1, keepdims=True), np.sum(cross, axis=-1, keepdims=True),
            np.sum(second[..., 1:], axis=-1, keepdims=True))


def transition_energy(statistics: tuple, moments: tuple, steps: int):
    """``Σ_{t=2..T} −E_q[log N(x_t | a x_{t−1}, 1/w)]`` per chain from :func:`transition_statistics` and
    :func:`parameter_moments`: ½ (T − 1)(log 2π − E[log w]) + ½ E[w] Σ_t (E[x_t²] − 2 E[a] E[x_t x_{t−1}]
    + E[a²] E[x²_{t−1}])."""
    previous, cross, current = statistics
    gain, gain_var, precision, log_precision = moments
    squares = current - 2.0 * gain * cross + (gain * gain + gain_var) * previous
    return 0.5 * (steps - 1) * (LOG_2PI - log_precision) + 0.5 * precision * squares


def GaussMarkovChain(name, gain, var=None, initial_mean=None, initial_var=None, length: int | None = None,
                     batch_shape=(), causal=False, *, precision=None):
    """The states ``x_1..x_T`` (T = ``length``) of ``x_1 ~ N(m₀, v₀)``, ``x_t ~ N(gain · x_{t−1}, var)``.

    One variable of batch shape ``(T,)``; connect it to per-step factors with
    plated nodes, e.g. ``Normal("y", mean=x, var=r, observed=y)`` for y of shape (T,).
    ``batch_shape`` (e.g. ``(B,)``) makes B independent chains with the same
    parameters: the variable's batch is ``batch_shape + (T,)``; ``initial_mean`` and ``initial_var`` may
    give each its own start (shape ``batch_shape``). ``causal=True``: the marginals are the filtering ones.

    The process noise is ``var`` or, exclusively, its inverse ``precision``. With numbers the chain is a
    :class:`GaussMarkovChainNode`. ``gain`` may be a scalar ``Normal`` variable and ``precision`` a ``Gamma``
    variable, of batch ``()`` (shared by every chain) or ``batch_shape + (1,)`` (one per chain), learned under
    ``algorithm="vmp"`` (:class:`VariationalGaussMarkovChainNode`, module docstring); the chain then also makes
    the variable ``<name>_moments``. The default schedule updates the gain and the precision before the states
    in the first sweep: pass ``init=`` for the states and for the precision (or the gain) it reads first, e.g.
    ``init={"x": NormalMeanVariance(np.zeros(T), np.ones(T)), "w": Gamma(1.0, 1.0)}``.
    """
    if isinstance(length, bool) or not isinstance(length, numbers.Integral) or length < 1:
        raise ModelError(f"GaussMarkovChain {name!r}: length must be a whole number >= 1 (time steps), got {length!r}")
    if (var is None) == (precision is None):
        raise ModelError(f"GaussMarkovChain {name!r}: give exactly one of var= (process noise variance) or "
                         "precision= (its inverse)")
    if isinstance(var, Variable):
        raise ModelError(f"GaussMarkovChain {name!r}: var must be a number; a random process noise is given as "
                         f"precision=<a Gamma variable>")
    chains = tuple(batch_shape)
    if not isinstance(gain, Variable) and not isinstance(precision, Variable):
        if precision is not None:
            if np.ndim(precision) != 0 or not np.isfinite(precision) or precision <= 0.0:
                raise ModelError(f"GaussMarkovChain {name!r}: precision must be a finite number > 0 or a Gamma "
                                 f"variable, got {precision!r}")
            var = 1.0 / float(precision)
        return random_variable(
            GaussMarkovChainNode, name, {}, None, batch_shape=chains + (int(length),), event_shape=(),
            gain=gain, var=var, initial_mean=initial_mean, initial_var=initial_var, causal=causal,
        )
    if causal:
        raise ModelError(f"GaussMarkovChain {name!r}: causal=True needs a fixed gain and precision (a filter "
                         "with random parameters is not a forward pass); learn them with causal=False")
    if length < 2:
        raise ModelError(f"GaussMarkovChain {name!r}: a random gain or precision needs length >= 2")
    parameters = {}
    for key, value in (("gain", gain), ("precision", precision)):
        if isinstance(value, Variable):
            shape = tuple(value.plate_shape)
            if value.event_shape != () or len(shape) > len(chains) + 1 or not _broadcasts_to(shape, chains + (1,)):
                raise ModelError(
                    f"GaussMarkovChain {name!r}: {key} {value.name!r} must be a scalar variable of batch () (shared "
                    f"by every chain) or {chains + (1,)} (one per chain); it has batch {shape} and event "
                    f"{value.event_shape}")
            parameters[key] = value
        elif key == "gain":
            if np.ndim(value) != 0 or not np.isfinite(value) or value == 0.0:
                raise ModelError(f"GaussMarkovChain {name!r}: gain must be a finite non-zero number or a Normal "
                                 f"variable, got {value!r}")
            parameters[key] = float(value)
        else:
            if var is not None:
                if np.ndim(var) != 0 or not np.isfinite(var) or var <= 0.0:
                    raise ModelError(f"GaussMarkovChain {name!r}: var must be a finite number > 0, got {var!r}")
                value = 1.0 / float(var)
            parameters[key] = value
    model = Model.current()
    if model.copy_shape:
        raise ModelError(f"GaussMarkovChain {name!r}: a random gain or precision is not available in a model with "
                         "copies; build one model per copy")
    batches = {f"{key}_batch": tuple(value.plate_shape) if isinstance(value, Variable) else ()
               for key, value in parameters.items()}
    moments_plate = np.broadcast_shapes(*batches.values())
    parameters["moments"] = moments = model.add_variable(f"{name}_moments", moments_plate, (len(UNCOUPLED_MOMENTS),))
    try:
        return random_variable(
            VariationalGaussMarkovChainNode, name, parameters, None, batch_shape=chains + (int(length),),
            event_shape=(), initial_mean=initial_mean, initial_var=initial_var,
            **batches,
        )
    except BaseException:
        model._discard(moments, None)
        raise


def _broadcasts_to(shape: tuple, target: tuple) -> bool:
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


@average_energy(GaussMarkovChainNode)
def _gauss_markov_energy(q_out: Distribution, node):
    """``−E_q[log f]`` under independent ``q(x_t)`` (exact for an observed path), per time step."""
    mean = np.broadcast_to(q_out.mean, node.batch_shape)
    second = np.broadcast_to(q_out.second_moment, node.batch_shape)
    a, q = node.gain, node.var
    energy = np.empty(node.batch_shape)
    energy[..., 0] = 0.5 * (LOG_2PI + np.log(node.initial_var) + (
        second[..., 0] - 2.0 * node.initial_mean * mean[..., 0] + np.square(node.initial_mean)) / node.initial_var)
    squares = second[..., 1:] - 2.0 * a * mean[..., 1:] * mean[..., :-1] + a**2 * second[..., :-1]
    energy[..., 1:] = 0.5 * (LOG_2PI + math.log(q) + squares / q)
    return energy


@average_energy(VariationalGaussMarkovChainNode)
def _variational_gauss_markov_energy(q_out: Distribution, q_gain: Distribution, q_precision: Distribution,
                                     q_moments: Distribution, node):
    """``−E_q[log f]`` under independent ``q(x_t)``, q(a), q(w) (exact for an observed path, or states constrained
    to a point mass), per time step; the factor does not depend on the moments (a point mass, no entropy):
    U_t = ½ (log 2π − E[log w]) + ½ E[w] (E[x_t²] − 2 E[a] E[x_t] E[x_{t−1}] + E[a²] E[x²_{t−1}]) for t ≥ 2.

    The node's own free-energy term, under the structured q(x), reads the pair moments instead
    (:meth:`VariationalGaussMarkovChainNode.cluster_log_evidence`).
    """
    batch = node.batch_shape
    mean = np.broadcast_to(q_out.mean, batch)
    second = np.broadcast_to(q_out.second_moment, batch)
    gain, gain_var, precision, log_precision = parameter_moments(q_gain, q_precision)
    energy = np.empty(batch)
    energy[..., 0] = 0.5 * (LOG_2PI + np.log(node.initial_var) + (
        second[..., 0] - 2.0 * node.initial_mean * mean[..., 0] + np.square(node.initial_mean)) / node.initial_var)
    squares = (second[..., 1:] - 2.0 * gain * mean[..., 1:] * mean[..., :-1]
               + (gain * gain + gain_var) * second[..., :-1])
    energy[..., 1:] = 0.5 * (LOG_2PI - log_precision + precision * squares)
    return energy
