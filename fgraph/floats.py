"""Runs on floats: the sweeps of a plan whose every message is one normal or one gamma, on Python floats.

A mean-field plan of scalar variables (a normal mean and a gamma precision, a plate collapsed to its
sufficient statistics, priors of constants) passes two or three numbers per message. Carried by
family objects, each update costs a rule call, an object, a power, a check and a product of
objects, and each free energy as many again: some tens of microseconds per sweep for a handful of
floating-point operations. Here the messages are tuples of floats, every update is a *float twin*
of its rule (registered beside the rule, :func:`fgraph.float_twins.float_rule`), every average energy a
twin of the node's (:func:`fgraph.float_twins.float_energy`), and the sweeps after the first, with the free energy and the
tolerance test of each, are one generated Python function over float locals.

The kinds of message and the twins are :mod:`fgraph.float_twins`; the source of a plan's run is
written by :mod:`fgraph.float_source`; this module decides when a run goes on floats and runs it. The first sweep of a run is made on objects (its rules are bound to the
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

import numpy as np

from fgraph import codegen, jit
from fgraph.errors import NumericalError
from fgraph.float_source import NotOnFloats, python_namespace, run_source
from fgraph.float_twins import GAMMA, NORMAL, WIDTH, floats_of, message_of

_COMPILED: dict = {}  # source of a run -> its code object (Python)
#: The rule and energy calls on floats (over all runs of one structure in a process) after which the structure's
#: runs are compiled by numba (numba installed; the compared mode compiles every structure): about 0.15 s of Python (0.3 µs a call), against
#: a compile of about a second once per machine (the kernel is cached on disk) and about 0.2 s in a later process
#: (importing numba, loading the kernel); compiled, the calls cost some nanoseconds each.
HOT_WORK = 500_000
_WORK: dict = {}  # source of a run -> its calls on floats so far in this process


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
    except NotOnFloats:
        return None
    key = tuple(sorted(kinds.items()))
    cache = plan.derived.float_runs
    if key not in cache:
        try:
            cache[key] = _FloatRun(engine, kinds)
        except NotOnFloats:
            cache[key] = None
    return cache[key]


def _kinds(engine):
    """The kind of every message a run on floats reads: outgoing messages at latent variables (by socket
    index) and clamped values, or NotOnFloats."""
    plan = engine.plan
    if plan.exact or plan.forms or plan.on_demand or engine.state.copy_shape:
        raise NotOnFloats
    kinds = {}
    for slot in plan.graph.latent_slots:
        weight = slot.variable.entropy_weight
        if type(weight) is not float or weight != 1.0 or slot.kind == "dangling":
            raise NotOnFloats
        for socket in slot.sockets:
            if socket.batch_shape != ():
                raise NotOnFloats
            found = floats_of(engine.state.outbound[socket.index])
            if found is None or found[0] not in (NORMAL, GAMMA):
                raise NotOnFloats
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
        made = run_source(engine, kinds)
        self.source, self.twins, self.parameters, self.statements = (made.source, made.twins, made.parameters,
                                                                     made.statements)
        self.layout = made.layout  # ((socket index, position of its first float in the state), ...)
        self.computed = made.computed  # the socket indices the sweeps write, in the order of the layout
        code = _COMPILED.get(self.source)
        if code is None:  # (a model built again, or another of the same structure, has the same source)
            if len(_COMPILED) >= 256:
                _COMPILED.clear()
            code = _COMPILED[self.source] = compile(self.source, "<fgraph run on floats>", "exec")
        namespace = python_namespace(self.twins)
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
            outbound[index] = message_of(kind, tuple(float(x) for x in state[start:start + WIDTH[kind]]))
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


class Interrupted(KeyboardInterrupt):
    """A run on floats stopped by the user after ``sweeps`` complete sweeps (the engine holds their state)."""

    def __init__(self, sweeps: int):
        super().__init__()
        self.sweeps = sweeps
