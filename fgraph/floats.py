"""Runs on floats: the sweeps of a plan whose every message is one normal or one gamma, on Python floats.

A mean-field plan of scalar variables (a normal mean and a gamma precision, a plate collapsed to its
sufficient statistics, priors of constants) passes two or three numbers per message. Carried by
family objects, each update costs a rule call, an object, a power, a check and a product of
objects, and each free energy as many again: some tens of microseconds per sweep for a handful of
floating-point operations. Here the messages are tuples of floats, every update is a *float twin*
of its rule (registered beside the rule, :func:`float_rule`), every average energy a twin of the
node's (:func:`float_energy`), and the sweeps after the first, with the free energy and the
tolerance test of each, are one generated Python function over float locals.

Kinds of message (the floats a message is, fixed per kind):

* ``normal``: ``(ξ, w, log-scale)``, the weighted mean and the precision of a univariate normal;
* ``gamma``: ``(a, b, log-scale)``, the shape and the rate;
* ``point``: ``(v,)``, a scalar point mass (a constant, one datum);
* ``moments``: ``(ȳ, s²)``, the mean and the empirical variance of a collapsed plate
  (:class:`~fgraph.plates.EmpiricalMoments`).

A twin reads of each marginal the expectations it declares (``mean``, ``var``, ``mean_log``,
``mean_inverse``, ``mean_log_gamma``), computed from the kind's floats, and returns the floats of
its message's kind. The first sweep of a run is made on objects (its rules are bound to the
initial values' families); the kinds of every message are then read from the state, and a plan
whose steady sweep, beliefs and free-energy terms all have float forms runs the remaining sweeps
here (:func:`float_run`). The messages of the last complete sweep are written back as objects, so
everything read afterwards (marginals, the free energy, ``messages``) is read as after any run.
The same arithmetic as the objects', in another order: equal to round-off, which the compared
mode (``FGRAPH_SWEEPS=compared``) checks on every run.

The run's source is written in the subset of Python that numba compiles, and depends only on the
plan's structure (the powers and weights that depend on the data are its parameters): once a
structure is hot (:data:`HOT_WORK`), with numba installed (the ``fast`` extra), the same source is
compiled and cached on disk (:mod:`fgraph.float_kernels`), and its sweeps cost nanoseconds per call
rather than a third of a microsecond. The compared mode runs both forms against the objects.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fgraph import codegen, jit
from fgraph.calls import Call, argument_order
from fgraph.errors import NumericalError
from fgraph.families.gamma import Gamma
from fgraph.families.normal import NormalMeanPrecision, NormalMeanVariance, NormalWeightedMeanPrecision
from fgraph.families.pointmass import PointMass
from fgraph.float_math import LOG_2PI, digamma  # (the run's code names them)

NORMAL, GAMMA, POINT, MOMENTS = "normal", "gamma", "point", "moments"
_NORMALS = (NormalMeanVariance, NormalMeanPrecision, NormalWeightedMeanPrecision)


# ------------------------------------------------------------------ twins
@dataclass(frozen=True)
class FloatTwin:
    """A rule's or an energy's form on floats: ``function`` takes, for every input in the order of
    ``reads``, the expectations named there, and returns the floats of a message of kind ``output`` (an
    energy: one float)."""

    function: object
    reads: tuple  # ((input name, (expectation, ...)), ...) in the order the function takes them
    output: str | None


FLOAT_RULES: dict = {}  # rule function -> FloatTwin
FLOAT_ENERGIES: dict = {}  # average-energy function -> FloatTwin


def float_rule(rule, output: str, **reads):
    """Register the decorated function as the float form of ``rule`` (a message of kind ``output``), taking
    the expectations ``reads[input]`` of each input, in the order of the keywords."""
    def register(function):
        FLOAT_RULES[getattr(rule, "__wrapped__", rule)] = FloatTwin(function, tuple(reads.items()), output)
        return function
    return register


def float_energy(energy, **reads):
    """Register the decorated function as the float form of the average energy ``energy`` (one element)."""
    def register(function):
        FLOAT_ENERGIES[getattr(energy, "__wrapped__", energy)] = FloatTwin(function, tuple(reads.items()), None)
        return function
    return register


def expected_squared_difference(out_mean: float, out_var: float, mean_mean: float, mean_var: float) -> float:
    """``E[(out − mean)²]`` under independent marginals, as :func:`fgraph.nodes.normal.expected_squared_difference`."""
    difference = out_mean - mean_mean
    return difference * difference + (out_var + mean_var)


# ------------------------------------------------------------------ kinds
def floats_of(message):
    """``(kind, floats)`` of an unbatched scalar message, or ``None`` for anything else."""
    if message is None or message.batch_shape:
        return None
    kind = type(message)
    if kind in _NORMALS:
        return NORMAL, (float(message.weighted_mean), float(message.precision), float(message.log_scale))
    if kind is Gamma:
        return GAMMA, (float(message.shape), float(message.rate), float(message.log_scale))
    if kind is PointMass and message.event_ndim == 0:
        return POINT, (float(message.value),)
    from fgraph.plates import EmpiricalMoments

    if kind is EmpiricalMoments and message.event_ndim == 0:
        return MOMENTS, (float(message.mean), float(message.var))
    return None


def message_of(kind: str, floats: tuple):
    """The message object of ``floats`` (a normal as weighted mean and precision, a gamma)."""
    if kind == NORMAL:
        return NormalWeightedMeanPrecision.unbatched(*floats)
    return Gamma.unbatched(*floats)


#: kind -> expectation -> source of it from the floats' names (a list of local names)
_EXPECTATIONS = {
    NORMAL: {"mean": "({0} / {1})", "var": "(1.0 / {1})"},
    GAMMA: {"mean": "({0} / {1})", "mean_log": "(digamma({0}) - log({1}))"},
    POINT: {"mean": "{0}", "value": "{0}", "var": "0.0", "mean_log": "log({0})", "mean_inverse": "(1.0 / {0})",
            "mean_log_gamma": "lgamma({0})"},
    MOMENTS: {"mean": "{0}", "var": "{1}"},
}
#: a gamma belief kept with ψ(a) (the free energy's: ``(a, b, ψ(a))``)
GAMMA_BELIEF = "gamma belief"
_EXPECTATIONS[GAMMA_BELIEF] = {"mean": "({0} / {1})", "mean_log": "({2} - log({1}))"}
#: kind -> source of its entropy from the floats' names
_ENTROPIES = {
    NORMAL: "0.5 * (LOG_2PI + 1.0 - log({1}))",
    GAMMA_BELIEF: "({0} - log({1}) + lgamma({0}) + (1.0 - {0}) * {2})",
}
_WIDTH = {NORMAL: 3, GAMMA: 3, POINT: 1, MOMENTS: 2}


# ------------------------------------------------------------------ the run
_COMPILED: dict = {}  # source of a run -> its code object (Python)
#: The rule and energy calls on floats (over all runs of one structure in a process) after which the structure's
#: runs are compiled by numba (numba installed; the compared mode compiles every structure): about 0.15 s of Python (0.3 µs a call), against
#: a compile of about a second once per machine (the kernel is cached on disk) and about 0.2 s in a later process
#: (importing numba, loading the kernel); compiled, the calls cost some nanoseconds each.
HOT_WORK = 500_000
_WORK: dict = {}  # source of a run -> its calls on floats so far in this process


class _NotOnFloats(Exception):
    """A plan, or a state, that this module does not run (the run stays on objects)."""


def float_run(engine):
    """The run on floats of the rest of ``engine``'s run (an object with ``run`` and ``run_compared``), or
    ``None``: the plan or the state has a message, a belief or a term without a float form, or its sweep
    is longer than generated code is made for (:data:`fgraph.codegen.MAX_GENERATED_STEPS`). Made once per
    plan and kinds of its messages, kept with the plan."""
    plan = engine.plan
    if len(plan.sweep) > codegen.MAX_GENERATED_STEPS:  # (one function of that many statements compiles slowly)
        return None
    try:
        kinds = _kinds(engine)
    except _NotOnFloats:
        return None
    key = tuple(sorted(kinds.items()))
    cache = plan.derived.float_runs
    if key not in cache:
        try:
            cache[key] = _FloatRun(engine, kinds)
        except _NotOnFloats:
            cache[key] = None
    return cache[key]


def _kinds(engine):
    """The kind of every message a run on floats reads: outgoing messages at latent variables (by socket
    index) and clamped values, or _NotOnFloats."""
    plan = engine.plan
    if plan.exact or plan.forms or plan.on_demand or engine.state.copy_shape:
        raise _NotOnFloats
    kinds = {}
    for slot in plan.graph.latent_slots:
        weight = slot.variable.entropy_weight
        if type(weight) is not float or weight != 1.0 or slot.kind == "dangling":
            raise _NotOnFloats
        for socket in slot.sockets:
            if socket.batch_shape != ():
                raise _NotOnFloats
            found = floats_of(engine.state.outbound[socket.index])
            if found is None or found[0] not in (NORMAL, GAMMA):
                raise _NotOnFloats
            kinds[socket.index] = found[0]
    for index, message in engine.state.clamped.items():
        found = floats_of(message)
        if found is not None:
            kinds[index] = found[0]
    return kinds


class _FloatRun:
    """The generated run of one plan and kinds of message (see :func:`float_run`): ``run(engine, iterations,
    free_energy, tol, trace, final)`` -> ``(sweeps done, tolerance met)``, the engine's messages those of the
    last complete sweep.

    The run's source is one function of the plan's *structure*: the powers and weights that depend on the
    data (a collapsed plate's size) are its ``parameters``, so every plan of the same structure shares the
    source, its compiled Python code and its numba kernel (:mod:`fgraph.float_kernels`). The kernel runs it
    once the structure is hot (:data:`HOT_WORK`), and beside the Python run in the ``compared`` mode."""

    def __init__(self, engine, kinds: dict):
        plan = engine.plan
        self.kinds = kinds
        made = _run_source(engine, kinds)
        self.source, self.twins, self.parameters, self.statements = (made.source, made.twins, made.parameters,
                                                                     made.statements)
        self.layout = made.layout  # ((socket index, position of its first float in the state), ...)
        self.computed = made.computed  # the socket indices the sweeps write, in the order of the layout
        code = _COMPILED.get(self.source)
        if code is None:  # (a model built again, or another of the same structure, has the same source)
            if len(_COMPILED) >= 256:
                _COMPILED.clear()
            code = _COMPILED[self.source] = compile(self.source, "<fgraph run on floats>", "exec")
        namespace = _python_namespace(self.twins)
        exec(code, namespace)
        self._function = namespace["run"]
        self.model_name = plan.graph.model.name

    # -- the two forms of the same source
    def kernel(self, iterations: int):
        """The numba kernel of this run's structure when it runs these ``iterations`` (see the class), or None."""
        if not jit.enabled():
            return None
        from fgraph import float_kernels

        if codegen.MODE != "compared":  # (compared: every form of the run is checked against the objects)
            work = _WORK.get(self.source, 0) + iterations * self.statements
            _WORK[self.source] = work
            if work < HOT_WORK and not float_kernels.loaded(self.source, self.twins):
                return None
        return float_kernels.kernel(self.source, self.twins, self.model_name)

    def run(self, engine, iterations: int, free_energy: bool, tol, trace: list, final: bool = False) -> tuple:
        """Run ``iterations`` sweeps (fewer when ``tol`` is met) from the engine's state, the free energy after
        each (``free_energy``) or after the last (``final``) appended to ``trace``; returns ``(sweeps done,
        met)`` and leaves the engine at the state after the last complete sweep. A message or free energy
        that is not finite stops the run at the sweep before, and that sweep is made again on objects,
        which says what failed."""
        return self._run(engine, iterations, free_energy, tol, trace, final, self.kernel(iterations))

    def _run(self, engine, iterations, free_energy, tol, trace, final, kernel) -> tuple:
        state = self._state(engine)
        energies, progress, parameters = [0.0] * (iterations + 2), [0, 0], self.parameters
        if free_energy and trace:  # the tolerance compares the first sweep on floats with the one before
            energies[0] = trace[-1]
            progress[1] = 1
        base = progress[1]
        tolerance = -1.0 if tol is None else float(tol)  # (no difference is below −1)
        try:
            if kernel is None:
                met, failed = self._function(state, energies, progress, iterations, bool(free_energy), tolerance,
                                             bool(final), parameters)
            else:
                from fgraph import float_kernels

                state, energies = np.array(state, dtype=float), np.array(energies, dtype=float)
                progress, parameters = np.array(progress, dtype=np.int64), np.array(parameters, dtype=float)
                met, failed = float_kernels.run(kernel, self.statements, state, energies, progress, iterations,
                                                bool(free_energy), tolerance, bool(final), parameters)
        except KeyboardInterrupt:  # the state and energies of the last complete sweep, then the interruption
            trace.extend(float(energy) for energy in energies[base:progress[1]])
            self._write_back(engine, state)
            raise Interrupted(int(progress[0])) from None
        trace.extend(float(energy) for energy in energies[base:progress[1]])
        self._write_back(engine, state)
        if failed:
            engine.sweep(0.0)  # the sweep that failed, on objects: it raises with the node named
            raise NumericalError("a run on floats met a NaN or infinity that the same sweep on objects did not")
        return int(progress[0]), bool(met)

    def _state(self, engine) -> list:
        """The floats of every message the run reads, in the order of :attr:`layout`."""
        state = []
        for index, _ in self.layout:
            message = engine.state.clamped[index] if index in engine.state.clamped else engine.state.outbound[index]
            state.extend(floats_of(message)[1])
        return state

    def _write_back(self, engine, state) -> None:
        outbound = list(engine.state.outbound)
        positions = dict(self.layout)
        for index in self.computed:
            kind, start = self.kinds[index], positions[index]
            outbound[index] = message_of(kind, tuple(float(x) for x in state[start:start + _WIDTH[kind]]))
        engine.state.restore((outbound, True, {}))

    def run_compared(self, engine, iterations: int, free_energy: bool, tol, trace: list, final: bool = False) -> tuple:
        """:meth:`run` in Python and, with numba, by the compiled kernel, then the same sweeps on objects from
        the same state (``FGRAPH_SWEEPS=compared``): the sweeps done, the numbers of messages and the free
        energies must agree to round-off, or :class:`~fgraph.codegen.GeneratedSweepMismatch` is raised. The
        engine keeps the objects' state."""
        from fgraph import free_energy as bethe
        from fgraph.codegen import GeneratedSweepMismatch

        before = engine.state.snapshot()
        forms = [("in Python", None)]
        kernel = self.kernel(iterations)
        if kernel is not None:
            forms.append(("compiled by numba", kernel))
        outcomes = []
        for name, form in forms:
            engine.state.restore(before)
            energies = list(trace)
            done, met = self._run(engine, iterations, free_energy, tol, energies, final, form)
            outcomes.append((name, done, [engine.state.outbound[index] for index in self.computed], energies[len(trace):]))
        engine.state.restore(before)
        done = outcomes[0][1]
        on_objects = []
        for sweep in range(done):
            engine.sweep(0.0)
            if free_energy:
                on_objects.append(bethe.free_energy(engine.state))
        if final and done:
            on_objects.append(bethe.free_energy(engine.state))
        for name, sweeps, messages, on_floats in outcomes:
            if sweeps != done:
                raise GeneratedSweepMismatch(f"the run on floats of model {self.model_name!r} {name} made {sweeps} "
                                             f"sweeps, in Python {done}")
            for index, message in zip(self.computed, messages):
                kind, floats = floats_of(message)
                _, reference = floats_of(engine.state.outbound[index])
                if not all(math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) for a, b in zip(floats[:2], reference[:2])):
                    raise GeneratedSweepMismatch(f"the run on floats of model {self.model_name!r} {name} gave "
                                                 f"{message!r} on socket {index}; on objects {engine.state.outbound[index]!r}")
            if not all(math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9) for a, b in zip(on_floats, on_objects)):
                raise GeneratedSweepMismatch(f"the run on floats of model {self.model_name!r} {name} gave the free "
                                             f"energies {on_floats}; on objects {on_objects}")
        trace.extend(on_objects)
        met = bool(free_energy and tol is not None and len(trace) >= 2 and abs(trace[-2] - trace[-1]) < tol)
        return done, met


@dataclass(frozen=True)
class _RunSource:
    """What :func:`_run_source` makes: the source, the functions it names, its parameters, its state."""

    source: str
    twins: tuple  # ((name in the source, twin function), ...)
    parameters: list  # the powers and weights the source reads as p0, p1, ...
    layout: tuple  # ((socket index, position of its first float in the state), ...)
    computed: tuple  # socket indices of the messages the sweeps compute
    statements: int  # rule and energy calls per sweep (the unit of HOT_WORK)


def _python_namespace(twins: tuple) -> dict:
    namespace = {"log": math.log, "lgamma": math.lgamma, "digamma": digamma, "LOG_2PI": LOG_2PI, "INF": math.inf}
    namespace.update(twins)
    return namespace


def _run_source(engine, kinds: dict) -> _RunSource:
    """The source of ``run(state, energies, progress, iterations, free_energy, tol, final, parameters)`` ->
    ``(met, failed)``, in the subset of Python that numba compiles.

    ``state`` holds the floats of every message the run reads (the layout); after each complete sweep the
    run writes its computed messages there, appends its free energy (``free_energy``) to ``energies`` at
    ``progress[1]`` and counts the sweep in ``progress[0]``, so an interruption or a NaN (``failed``) leaves
    the last complete sweep in them. ``tol``: stop once two successive free energies differ by less
    (−1: never); ``final``: the free energy of the last sweep only."""
    plan = engine.plan
    names, layout, position = {}, [], 0  # socket index -> the local names of its floats
    for index in sorted(kinds):
        names[index] = [f"s{index}_{j}" for j in range(_WIDTH[kinds[index]])]
        layout.append((index, position))
        position += _WIDTH[kinds[index]]
    positions = dict(layout)
    computed = tuple(index for index, _ in layout
                     if index in {step.socket.index for step in plan.sweep if step.binding.folded is None})
    twins, parameters = {}, []
    body, steps = [], 0
    for k, step in enumerate(plan.sweep):
        if step.binding.folded is not None:
            continue  # a message of constants: among the state, never changed
        body.extend(_step_lines(k, step, plan, kinds, names, twins, parameters))
        steps += 1
    energy_lines = _free_energy_lines(engine, kinds, names, twins, parameters)
    finite_checks = " and ".join(f"{name} == {name} and abs({name}) != INF" for index in computed
                                 for name in names[index][:2])
    lines = ["def run(state, energies, progress, iterations, free_energy, tol, final, parameters):"]
    lines += [f"    p{j} = parameters[{j}]" for j in range(len(parameters))]
    lines += [f"    {name} = state[{positions[index] + j}]" for index in positions for j, name in enumerate(names[index])]
    lines += ["    n = progress[1]",
              "    met = False",
              "    for iteration in range(iterations):"]
    # the free energy of the state, checked and appended to the energies (after each sweep, or after the last)
    energy = energy_lines + ["if not (F == F and abs(F) != INF):",
                             "    return met, True",
                             "energies[n] = F",
                             "n += 1"]
    lines += ["        " + line for line in body]
    lines += [f"        if not ({finite_checks or 'True'}):",
              "            return met, True",
              "        if free_energy:"]
    lines += ["            " + line for line in energy]
    lines += [f"        state[{positions[index] + j}] = {name}" for index in computed
              for j, name in enumerate(names[index])]
    lines += ["        progress[0] += 1",
              "        progress[1] = n",
              "        if free_energy and n >= 2 and abs(energies[n - 2] - energies[n - 1]) < tol:",
              "            met = True",
              "            break",
              "    if final and progress[0] > 0:  # the free energy of the last sweep only (free_energy=\"last\")"]
    lines += ["        " + line for line in energy]
    lines += ["        progress[1] = n",
              "    return met, False"]
    statements = steps + sum(1 for line in energy_lines if line.startswith("F +="))  # a twin or an entropy each
    return _RunSource("\n".join(lines) + "\n", tuple(sorted(twins.items())), parameters, tuple(layout), computed,
                      max(statements, 1))


class Interrupted(KeyboardInterrupt):
    """A run on floats stopped by the user after ``sweeps`` complete sweeps (the engine holds their state)."""

    def __init__(self, sweeps: int):
        super().__init__()
        self.sweeps = sweeps


def _belief(slot, kinds: dict, names: dict) -> tuple:
    """``(kind, expressions of its floats)`` of the belief at ``slot``: the sum of its messages' natural
    parameters (normals: ξ and w; gammas: a − 1 and b)."""
    kinds_here = {kinds[socket.index] for socket in slot.sockets}
    if len(kinds_here) != 1:
        raise _NotOnFloats
    kind = kinds_here.pop()
    parts = [names[socket.index] for socket in slot.sockets]
    if kind == NORMAL:
        return NORMAL, ("(" + " + ".join(p[0] for p in parts) + ")", "(" + " + ".join(p[1] for p in parts) + ")")
    shape = "(" + " + ".join(f"({p[0]} - 1.0)" for p in parts) + " + 1.0)"
    return GAMMA, (shape, "(" + " + ".join(p[1] for p in parts) + ")")


def _input_floats(kind_and_source, plan, kinds: dict, names: dict, lines: list, tag: str,
                  beliefs: dict | None = None) -> tuple:
    """``(kind, local names)`` of one input of a rule or energy (a clamped value or a belief), with the
    statements that compute a belief appended to ``lines``; with ``beliefs`` (slot index -> kind and
    locals), each belief is computed once and kept there (the free energy reads each several times)."""
    kind, source = kind_and_source
    if kind not in (Call.CLAMPED, Call.MARGINAL):
        raise _NotOnFloats
    if kind == Call.CLAMPED or source.clamped:  # a constant or a datum: its floats are in the state
        if source.index not in kinds:
            raise _NotOnFloats
        return kinds[source.index], names[source.index]
    slot = source.slot
    if beliefs is not None:
        return _kept_belief(slot, kinds, names, lines, beliefs)
    belief_kind, expressions = _belief(slot, kinds, names)
    local = [f"b{tag}_{j}" for j in range(len(expressions))]
    lines.append(f"{', '.join(local)} = {', '.join(expressions)}")
    return belief_kind, local


def _kept_belief(slot, kinds: dict, names: dict, lines: list, beliefs: dict) -> tuple:
    """The belief at ``slot`` computed once into locals ``q<slot>_0, q<slot>_1`` (and ``d<slot>`` = ψ(a) for a
    gamma, read by its E[log x] and its entropy): ``(kind, locals)``."""
    found = beliefs.get(slot.index)
    if found is not None:
        return found
    kind, expressions = _belief(slot, kinds, names)
    local = [f"q{slot.index}_{j}" for j in range(len(expressions))]
    lines.append(f"{', '.join(local)} = {', '.join(expressions)}")
    if kind == GAMMA:
        local.append(f"d{slot.index}")
        lines.append(f"d{slot.index} = digamma({local[0]})")
        kind = GAMMA_BELIEF
    beliefs[slot.index] = (kind, local)
    return kind, local


def _expectations(kind: str, local: list, wanted: tuple) -> list:
    table = _EXPECTATIONS[kind]
    try:
        return [table[name].format(*local) for name in wanted]
    except KeyError:
        raise _NotOnFloats from None


def _step_lines(k: int, step, plan, kinds: dict, names: dict, twins: dict, parameters: list) -> list:
    """The statements of step ``k`` on floats: its inputs' expectations, its rule's twin (named ``T<k>`` in
    ``twins``), the node's power (a parameter)."""
    binding = step.binding
    if binding.index is not None or binding.cluster_inputs or binding.scaled_power:
        raise _NotOnFloats
    call = binding.calls[1]
    twin = FLOAT_RULES.get(call.registered)
    if twin is None or call.names is not None or call.extra:
        raise _NotOnFloats
    order = [name for name, _ in twin.reads]
    inputs = dict(zip(_argument_names(step.rules[1]), call.fetchers))
    if set(order) != set(inputs):
        raise _NotOnFloats
    lines = [f"# step {k + 1}: {_qualified(call.registered)}"]
    arguments = []
    for position, (name, wanted) in enumerate(twin.reads):
        kind, local = _input_floats(inputs[name], plan, kinds, names, lines, f"{k}_{position}")
        arguments.extend(_expectations(kind, local, wanted))
    twins[f"T{k}"] = twin.function
    target = names[step.socket.index]
    if kinds[step.socket.index] != twin.output:
        raise _NotOnFloats
    exponent = binding.exponent
    if exponent is None:
        lines.append(f"{', '.join(target)} = T{k}({', '.join(arguments)})")
    elif type(exponent) is not float and getattr(exponent, "ndim", 1) != 0:
        raise _NotOnFloats
    else:
        parameters.append(float(exponent))
        power = f"p{len(parameters) - 1}"
        first, second, _ = (f"r{k}_{j}" for j in range(3))
        lines.append(f"{first}, {second}, _ = T{k}({', '.join(arguments)})")
        if twin.output == NORMAL:  # the natural parameters (ξ, −w/2) times the power
            lines.append(f"{', '.join(target)} = {power} * {first}, {power} * {second}, 0.0")
        else:  # (a − 1, −b) times the power
            lines.append(f"{', '.join(target)} = {power} * ({first} - 1.0) + 1.0, {power} * {second}, 0.0")
    return lines


def _free_energy_lines(engine, kinds: dict, names: dict, twins: dict, parameters: list) -> list:
    """Statements computing ``F``, the free energy of the state, as :func:`fgraph.free_energy.free_energy`
    (each node's energy twin named ``U<position>`` in ``twins``, its weight a parameter)."""
    from fgraph.free_energy import energy_call, variable_terms

    plan = engine.plan
    lines = ["F = 0.0"]
    beliefs = {}
    for position, node_plan in enumerate(plan.nodes.values()):
        if node_plan.sum_product or any(len(cluster) > 1 for cluster in node_plan.clusters):
            raise _NotOnFloats
        energy = node_plan.energy
        twin = FLOAT_ENERGIES.get(energy.function) if energy is not None else None
        if twin is None:
            raise _NotOnFloats
        call = energy_call(engine.state, node_plan)
        if call.names is not None or call.extra:
            raise _NotOnFloats
        inputs = dict(zip(_argument_names(energy), call.fetchers))
        if set(inputs) != {name for name, _ in twin.reads}:
            raise _NotOnFloats
        arguments = []
        for index, (name, wanted) in enumerate(twin.reads):
            kind, local = _input_floats(inputs[name], plan, kinds, names, lines, f"e{position}_{index}", beliefs)
            arguments.extend(_expectations(kind, local, wanted))
        node = node_plan.node
        batch = node.batch_shape if node_plan.copies == 1 else ()
        if node_plan.copies == 1 and batch != ():
            raise _NotOnFloats
        weight = float(node_plan.copies) * float(node.power)
        if type(node.power) is not float:
            raise _NotOnFloats
        twins[f"U{position}"] = twin.function
        parameters.append(weight)
        lines.append(f"F += p{len(parameters) - 1} * U{position}({', '.join(arguments)})  # {_qualified(energy.function)}")
    for slot, degree, coefficient in variable_terms(engine.state):
        if coefficient is None:
            raise _NotOnFloats
        kind, local = _kept_belief(slot, kinds, names, lines, beliefs)
        lines.append(f"F += {coefficient!r} * ({_ENTROPIES[kind].format(*local)})  # entropy of slot {slot.index}")
    return lines


def _qualified(function) -> str:
    function = getattr(function, "__wrapped__", function)
    return f"{function.__module__}.{function.__qualname__}"


def _argument_names(bound) -> list:
    """The names of a bound rule's or energy's inputs in the order its call fetches them."""
    return list(argument_order(bound.function, bound.input_names)[0])
