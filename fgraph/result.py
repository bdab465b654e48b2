"""The answer of ``fg.infer``: marginals, evidence, free energy, predictions."""
from __future__ import annotations


import numpy as np

from fgraph import free_energy
from fgraph.errors import ModelError, RuleNotFoundError
from fgraph.families.base import Distribution
from fgraph.message_families import common_family, resolve_message_rule, rule_target


class Result:
    """Posterior marginals and model scores of one inference run.

    Attributes
    ----------
    free_energy : list of float, or list of arrays
        Bethe free energy after each iteration (nats); under VMP it never increases.
        When computed, it has one entry per iteration (``len(free_energy) == iterations``).
        In a model with copies (``fg.Model(copies=R)``) each entry is an array of
        the copy shape, one free energy per copy (``np.array(result.free_energy)``
        has shape ``(iterations, R)``), each of them never increasing under VMP.
    iterations : int
        Complete sweeps run.
    converged : bool or None
        ``True`` for exact BP, or when the tolerance in force was met (by every copy); ``False``
        when it was not (the run also warned, see :mod:`fgraph.inference`);
        ``None`` when the run was not judged (``iterations=`` without ``tol=``).
    tolerance, last_change : float or None
        The tolerance the run was judged against, and the change of the free
        energy over its last sweep (nats).
    interrupted : bool
        Whether a KeyboardInterrupt stopped the run; the result then holds the
        state after the last complete sweep.
    exact : bool
        Whether every marginal is the exact posterior marginal: sum-product on a
        cycle-free graph with every node in one sum-product cluster. ``False`` for
        loopy BP (the Bethe approximation: a converged run's means may be right,
        its variances are not) and for mean-field or structured VMP (variational
        marginals). ``summary()`` says which.
    warnings : list of str
        What the run warned about (a run that did not converge).
    schedule : Schedule
        The schedule that ran (print it for a numbered list of updates).
    """

    def __init__(self, engine, free_energy, iterations, converged, interrupted=False, tolerance=None,
                 last_change=None, tol_given=False, cap_given=True):
        self._engine = engine
        self.plan = engine.plan
        self.schedule = engine.plan.schedule
        self.free_energy = list(free_energy)
        self.iterations = iterations
        self.converged = converged
        self.interrupted = interrupted
        self.tolerance = tolerance
        self.last_change = last_change
        # how the run was bounded: whether tol= and iterations= were given (else the defaults were in force)
        self.tol_given, self.cap_given = tol_given, cap_given
        self.warnings: list = []

    @property
    def exact(self) -> bool:
        """Whether every marginal is exact (see the class docstring); :meth:`summary` names the approximation."""
        return self.plan.exact

    def convergence_report(self) -> str:
        """One sentence on whether and how the run converged."""
        sweeps = f"{self.iterations} iteration{'s' if self.iterations != 1 else ''}"
        if self.interrupted:
            return f"interrupted by the user after {sweeps}"
        if self.plan.exact:
            return f"exact (sum-product on a tree) after {sweeps}"
        if self.converged is None:
            return f"ran the {sweeps} asked for; convergence not checked (pass tol= to check it)"
        if self.converged:
            return (f"converged after {sweeps}: the free energy changed by {self.last_change:.3g} nats "
                    f"in the last iteration (tolerance {self.tolerance:.3g})")
        # the cap that stopped the run and how to raise it, the tolerance it was judged by
        cap = (f"the cap iterations={self.iterations}" if self.cap_given
               else f"the default cap of {self.iterations} iterations")
        tolerance = (f"tol={self.tolerance:.3g}" if self.tol_given
                     else f"the default tolerance {self.tolerance:.3g} (relative to the free energy)")
        if self.last_change is None:
            return (f"did not converge: {sweeps} cannot show a change of the free energy below {tolerance}; "
                    "run at least 2 iterations (iterations=2 or more)")
        return (f"did not converge after {sweeps}: stopped at {cap} without reaching {tolerance} (the free energy still changed "
                f"by {self.last_change:.3g} nats in the last iteration); pass iterations=N with N > "
                f"{self.iterations} (or damping= for loopy BP, or a larger tol=)")

    def summary(self) -> str:
        """A few lines on the run: algorithm, iterations and convergence, free energy, evidence."""
        algorithm = {"bp": "belief propagation", "vmp": "variational message passing"}[self.plan.algorithm]
        report = self.convergence_report()
        on_demand = f" ({len(self.plan.on_demand)} more when read)" if self.plan.on_demand else ""
        lines = [f"{algorithm}, {len(self.plan.sweep)} messages per iteration{on_demand}",
                 f"  marginals: {_kind_of_marginals(self.plan)}",
                 f"  {'warning: ' if report in self.warnings else ''}{report}"]
        if self.free_energy:
            lines.append(f"  free energy: {_describe(self.free_energy[-1], 10)} nats")
        if self.plan.exact and self.iterations >= 1:
            lines.append(f"  log evidence: {_describe(self.log_evidence, 10)} nats")
        lines.extend(f"  warning: {message}" for message in self.warnings if message != report)
        return "\n".join(lines)

    def draw(self):
        """The model's factor graph (as ``model.draw()``) with each factor's end of an edge labelled by the rule
        bound to the message leaving it there and its number in ``print(result.schedule)`` (:mod:`fgraph.drawing`)."""
        from fgraph.drawing import draw

        return draw(self.plan.graph.model, plan=self.plan)

    def plot_free_energy(self, ax=None, path=None, relative: bool = False):
        """The free energy per iteration as a matplotlib figure; returns its Axes (:func:`fgraph.plotting.plot_free_energy`:
        ``relative=True`` plots F − min F on a log scale; ``path=`` also writes the figure)."""
        from fgraph.plotting import plot_free_energy

        return plot_free_energy(self, ax=ax, path=path, relative=relative)

    def marginal(self, name: str) -> Distribution:
        """The posterior marginal ``q(name)`` (normalised, batch shape of the variable).

        In a model with copies its batch is ``copies + plate``: ``result.marginal("x")[r]``
        is copy r's (see also :meth:`copy`).
        """
        slot = self._slot(name)
        self._engine.complete([slot])
        marginal = self._engine.state.marginal(slot).normalised()
        model = self.plan.graph.model
        return model.unpadded(marginal, slot.variable) if model.copy_shape else marginal

    def copy(self, index) -> "CopyResult":
        """The results of one copy of a model with copies (``fg.Model(copies=R)``): ``result.copy(r)``.

        E.g. the best of R random restarts: ``result.copy(int(np.argmin(result.free_energy[-1])))``.
        """
        copy_shape = self.plan.graph.model.copy_shape
        if not copy_shape:
            raise ModelError("result.copy(...) reads one copy of a model with copies (fg.Model(copies=R)); "
                             "this model has none")
        index = index if isinstance(index, tuple) else (index,)
        try:
            np.empty(copy_shape)[index].item()
        except (IndexError, TypeError, ValueError):
            raise ModelError(f"copy index {index} does not select one copy of the copies {copy_shape}") from None
        return CopyResult(self, index)

    @property
    def marginals(self) -> dict:
        """Every computed posterior marginal, by variable name."""
        self._engine.complete()
        return {slot.name: self.marginal(slot.name) for slot in self.plan.graph.latent_slots
                if self.plan.computed is None or slot.name in self.plan.computed}

    @property
    def log_evidence(self) -> float:
        """``log p(data)`` in nats, from scale factors.

        Exact for sum-product on a tree. For any other plan it raises: use
        ``-free_energy[-1]``, a lower bound (VMP) or the Bethe approximation
        (loopy BP).
        """
        if not self.plan.exact:
            raise ModelError(
                "log_evidence is exact only for sum-product (algorithm='bp') on a tree-shaped graph; "
                "for this plan use -result.free_energy[-1] (a bound or the Bethe approximation)"
            )
        return free_energy.log_evidence(self._engine.state)  # one per copy in a model with copies

    def evidence_per_variable(self) -> dict:
        """Log-scale of the belief at every latent variable.

        On a tree each equals the log evidence of the variable's connected
        component, except inside a branch k of a mixture node, where it is
        ``log p(y, m = k)``. Scales are carried by sum-product messages only:
        a plan without any sum-product node (plain VMP) has none to read, and
        raises.
        """
        if not any(node_plan.sum_product for node_plan in self.plan.nodes.values()):
            raise ModelError(
                "evidence_per_variable reads the scales of sum-product messages, and this plan has none (VMP); "
                "use -result.free_energy[-1], a lower bound of the log evidence"
            )
        self._engine.complete()
        evidences = free_energy.evidence_per_variable(self._engine.state)
        model = self.plan.graph.model
        if model.copy_shape:
            slots = self.plan.graph.slots
            evidences = {name: model.unpadded(value, slots[name].variable) for name, value in evidences.items()}
        return evidences

    def messages(self, node: str, interface: str) -> tuple:
        """The two messages on one node interface: ``(out of the node, into the node)``.

        Both are scaled (their ``log_scale`` is the evidence of the sub-graph
        behind them); the second is a point mass for a clamped interface.
        """
        sockets = self.plan.graph.node_sockets.get(node)
        if sockets is None:
            raise ModelError(f"unknown node {node!r}; nodes are: {', '.join(self.plan.graph.node_sockets)}")
        if interface not in sockets:
            raise ModelError(f"node {node!r} has no interface {interface!r}; it has {tuple(sockets)}")
        socket = sockets[interface]
        if socket.slot is not None:
            self._engine.complete([socket.slot])
        state = self._engine.state
        return state.outbound[socket.index], state.inbound(socket)

    def predictive(self, name: str) -> Distribution:
        """The predictive distribution of observed variable ``name`` given the posterior.

        It is the sum-product message its factor would send to it with the
        posterior marginals of the other interfaces in place of messages,
        ``∫ f(y | θ) q(θ) dθ``, where a rule for that exists; otherwise the
        variational message ``exp E_q[log f(y | θ)]``.
        """
        slot = self._slot(name, latent=False)
        engine = self._engine
        socket = next((s for s in slot.sockets if s.interface == "out"), slot.sockets[0])
        node = socket.node
        sockets = self.plan.nodes[node.name].sockets
        engine.complete([other.slot for other in sockets.values() if other is not socket and not other.clamped])
        for prefix in ("m_", "q_"):
            inputs = {}
            for interface, other in sockets.items():
                if other is socket:
                    continue
                if other.clamped:
                    inputs["q_" + interface] = engine.state.clamped[other.index]
                else:
                    inputs[prefix + interface] = engine.state.socket_marginal(other).normalised()
            families = node.group_inputs({k: type(v) for k, v in inputs.items()}, common_family)
            try:
                bound = resolve_message_rule(
                    node, rule_target(node, socket.interface), families, self.plan.nodes[node.name].operator
                )
            except RuleNotFoundError:
                continue
            message = bound(node.group_inputs(inputs, tuple), node).normalised()
            if message.batch_shape != socket.batch_shape:
                message = message.broadcast_to(socket.batch_shape)
            model = self.plan.graph.model
            return model.unpadded(message, slot.variable) if model.copy_shape else message
        raise RuleNotFoundError(f"no rule computes a predictive distribution for {name!r} at node {node.name!r}")

    def to_arviz(self, draws: int = 1000, seed=None, observed: bool = True, log_likelihood: bool = True,
                 chains: int = 1):
        """An ``arviz.InferenceData``: ``posterior`` (``chains × draws`` draws of every latent marginal),
        ``observed_data`` and the pointwise ``log_likelihood`` for ``arviz.waic`` / ``arviz.loo``
        (:mod:`fgraph.arviz_export`; needs the ``arviz`` extra). A model with copies is refused."""
        from fgraph.arviz_export import result_to_arviz

        return result_to_arviz(self, self._engine.state, draws=draws, seed=seed, observed=observed,
                               log_likelihood=log_likelihood, chains=chains)

    def _slot(self, name: str, latent: bool = True):
        slots = self.plan.graph.slots
        if name not in slots:
            raise ModelError(f"unknown variable {name!r}; the model has: {', '.join(sorted(slots))}")
        slot = slots[name]
        if latent and self.plan.computed is not None and name not in self.plan.computed:
            raise ModelError(
                f"{name!r} was not computed: the plan, compiled with marginals=, computes only "
                f"{sorted(self.plan.computed)}; add {name!r} to marginals= or compile without it"
            )
        if latent and slot.kind == "observed":
            raise ModelError(f"{name!r} is observed; use result.predictive({name!r}) for its predictive distribution")
        if not latent and slot.kind != "observed":
            raise ModelError(f"{name!r} is latent; use result.marginal({name!r})")
        return slot

    def __repr__(self) -> str:
        fe = f", free_energy={_describe(self.free_energy[-1])}" if self.free_energy else ""
        interrupted = ", interrupted=True" if self.interrupted else ""
        return f"Result({self.plan.algorithm}, iterations={self.iterations}, converged={self.converged}{fe}{interrupted})"


def _kind_of_marginals(plan) -> str:
    """What a plan's marginals are, in words: ``"exact"``, ``"approximate (Bethe / loopy BP)"`` (every node
    sum-product, on a graph with a cycle) or ``"variational (mean-field VMP)"`` (every node with a latent
    interface mean-field or structured; a hybrid names its variational nodes, and point-mass form
    constraints, which make the nodes around them variational, are named too)."""
    if plan.exact:
        return "exact"
    latent = [node_plan for node_plan in plan.nodes.values() if node_plan.clusters]  # clamped-only: a constant
    variational = [node_plan.node.name for node_plan in latent
                   if not (node_plan.sum_product and len(node_plan.clusters) <= 1)]
    if not variational:
        return "approximate (Bethe / loopy BP)"
    details = ["mean-field VMP"]
    if len(variational) < len(latent):
        names = ", ".join(repr(name) for name in variational[:5]) + (", ..." if len(variational) > 5 else "")
        details = [f"mean-field VMP on node{'s' if len(variational) > 1 else ''} {names}",
                   "belief propagation elsewhere"]
    if plan.forms:
        details.append(f"point mass{'es' if len(plan.forms) > 1 else ''} for "
                       + ", ".join(repr(name) for name in plan.forms))
    return f"variational ({'; '.join(details)})"


def _describe(value, digits: int = 6) -> str:
    """A number, or the values of an array of one number per copy."""
    if np.ndim(value) == 0:
        return f"{float(value):.{digits}g}"
    return "[" + ", ".join(f"{float(v):.{digits}g}" for v in np.ravel(value)) + "] (per copy)"


class CopyResult:
    """One copy of a :class:`Result` of a model with copies: its marginals, free energy and evidence.

    ``marginal(name)`` is ``result.marginal(name)[index]``; ``free_energy`` the
    copy's entry of every iteration (a list of floats); ``log_evidence`` and
    ``evidence_per_variable()`` the copy's values.
    """

    def __init__(self, result: Result, index: tuple):
        self.result = result
        self.index = index

    def marginal(self, name: str) -> Distribution:
        return self.result.marginal(name)[self.index]

    @property
    def marginals(self) -> dict:
        return {name: marginal[self.index] for name, marginal in self.result.marginals.items()}

    @property
    def free_energy(self) -> list:
        return [float(np.asarray(entry)[self.index]) for entry in self.result.free_energy]

    @property
    def log_evidence(self) -> float:
        return float(np.asarray(self.result.log_evidence)[self.index])

    @property
    def exact(self) -> bool:
        return self.result.exact

    def evidence_per_variable(self) -> dict:
        return {name: np.asarray(value)[self.index] for name, value in self.result.evidence_per_variable().items()}

    def __repr__(self) -> str:
        return f"CopyResult(copy {self.index}, {self.result!r})"
