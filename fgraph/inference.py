"""``fg.infer``: compile a model, bind data, run message passing, return a :class:`Result`.

When a run counts as converged
------------------------------
BP on a tree is exact after one sweep: such a run is converged and is never
judged further. Every other plan (VMP, loopy BP, hybrids) iterates, and is
judged by the change of its free energy between its last two sweeps:

* with ``tol=``, the run stops as soon as the change is below ``tol`` (nats);
  if ``iterations`` run out first, it did not converge;
* with neither ``tol=`` nor ``iterations=``, the run does its
  ``DEFAULT_ITERATIONS`` sweeps and is then judged against
  ``DEFAULT_TOLERANCE`` relative to the free energy (at least that many
  nats): it does not stop early, so the default answer is as accurate as
  the sweeps allow, and a run that is still moving is reported;
* with ``iterations=`` and no ``tol=``, you asked for exactly that many
  sweeps (a fixed budget, e.g. a few VMP sweeps to warm up): the run is not
  judged, ``converged`` is ``None``. So is a run without a free energy
  (``free_energy=False``, or a plan compiled for some ``marginals=``), which
  has nothing to judge by; ``tol=`` is refused there. ``free_energy="last"``
  computes it once, after the last sweep (``result.free_energy`` has one
  entry): the sweeps of a fixed budget without the cost of a free energy
  each, and the final value still reported; the run is not judged either.

In a model with copies (``fg.Model(copies=R)``) every free energy is an
array with one entry per copy; a run stops (``tol=``) and counts as converged
when *every* copy's change is below the tolerance, ``last_change`` is the
largest change over the copies, and the default tolerance is relative to the
largest magnitude of their free energies.

A run that was judged and did not converge has ``converged=False``, says so
in ``result.summary()`` and emits a :class:`~fgraph.errors.ConvergenceWarning`
naming the cap that stopped it (``iterations=`` or the default cap), the
tolerance it missed and the last change. A run stopped by
``KeyboardInterrupt`` is not warned about (``interrupted=True`` says it all).
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
import numbers
import warnings

import numpy as np

from fgraph import free_energy as bethe  # (the module: `free_energy` is an option here)
from fgraph import codegen, floats, memory, registry
from fgraph.constraints import Constraints
from fgraph.collection import cycle_collection_paused
from fgraph.engine import Engine
from fgraph.errors import ConvergenceWarning, ModelError, ModelTypeError
from fgraph.families.pointmass import PointMass
from fgraph.model import Constant, Model, Variable
from fgraph.plan import Plan, compile_model, freeze
from fgraph.progress import ProgressBar
from fgraph.result import Result
from fgraph.schedule import Schedule

#: Compiled plans remembered per model (one per combination of options; the oldest is forgotten first).
REMEMBERED_PLANS = 8
#: The progress bar of a run without one.
_NO_BAR = contextlib.nullcontext()
#: Sweeps of an iterative plan when ``iterations=`` is not given.
DEFAULT_ITERATIONS = 50
#: Without ``tol=`` and ``iterations=``, an iterative run counts as converged when its last sweep changed the
#: free energy by at most this much relative to the free energy's magnitude (and at least this many nats).
DEFAULT_TOLERANCE = 1e-8


def infer(
    model: Model,
    data: dict | None = None,
    algorithm: str = "bp",
    constraints=None,
    schedule=None,
    iterations: int | None = None,
    tol: float | None = None,
    init: dict | None = None,
    damping: float = 0.0,
    free_energy: bool | None = None,
    progress: bool = False,
    callback=None,
) -> Result:
    """Run inference on ``model`` and return a :class:`~fgraph.result.Result`.

    Parameters
    ----------
    model : Model
    data : dict name -> array, optional
        Data for observed variables (binds or re-binds; shapes must match).
    algorithm : "bp" or "vmp"
        Default local factorisation of every node: sum-product or mean-field.
        Per-node overrides go in ``constraints`` (hybrid models).
    constraints : Constraints or dict, optional
        ``{"factorization": {node: "bp" | "mf" | clusters}, "form": {var: "point_mass"}}``.
    schedule : Schedule or list of (node name, interface), optional
        Replaces the automatic schedule.
    iterations : int >= 1, optional
        Number of sweeps; default 1 for BP on a tree (exact), else ``DEFAULT_ITERATIONS``.
    tol : float > 0, optional
        Stop when the free energy changes by less than ``tol`` (nats) between sweeps.
    init : dict name -> Distribution, optional
        Initial marginals/messages the schedule needs before it computes them.
    damping : float in [0, 1)
        Loopy BP damping of natural parameters (0: none).
    free_energy : bool or "last", optional
        Compute the Bethe free energy after each sweep (default: yes unless exact BP), or
        ``"last"``: once, after the last sweep (no ``tol``).
    progress : bool
        Show a progress bar over iterations, with the free energy (tqdm; a
        line per 10% on stderr without it).
    callback : callable(iteration, result), optional
        Called after every sweep with a :class:`~fgraph.result.Result` of the
        current state (marginals, messages, the free-energy trace so far).

    Notes
    -----
    See the module docstring for when a run counts as converged and when a
    :class:`~fgraph.errors.ConvergenceWarning` is emitted.

    A ``KeyboardInterrupt`` during the run stops it; the result keeps the
    state after the last complete sweep (its marginals and free-energy trace
    are those of a run with ``iterations=result.iterations``) and has
    ``interrupted=True``.
    """
    _check_run_options(iterations, tol, damping, free_energy, progress, callback)
    plan = compile(model, algorithm=algorithm, constraints=constraints, schedule=schedule, init=init)
    return _run(plan, data, iterations, tol, damping, free_energy, progress, callback)


def compile(model: Model, algorithm: str = "bp", constraints=None, schedule=None, init=None,
            collapse_plates: bool = True, marginals=None) -> Plan:
    """Compile ``model``: bind every message to a rule and check the schedule (no numbers computed).

    ``collapse_plates`` lets observed plates run on their sufficient statistics
    (see :mod:`fgraph.plates`). A run computes what is read: on a tree under
    sum-product a sweep computes the messages the log evidence needs, and the
    others when a reading needs them. ``marginals`` (a list of variable names)
    sweeps only the messages those beliefs (and, on a tree, the log evidence)
    depend on; in an iterative plan the other variables are then not computed,
    and neither is the free energy (see ``docs/concepts.md``, "Computing what is read").
    """
    if not isinstance(model, Model):
        hint = " (the model, not one of its variables)" if isinstance(model, Variable) else ""
        raise ModelTypeError(
            f"expected the Model of `with fg.Model() as model:`{hint}, got {type(model).__name__}"
        )
    if not model.nodes:
        raise ModelError(
            f"model {model.name!r} has no factors; create variables inside `with fg.Model() as model:` "
            "(e.g. Normal('x', mean=0.0, var=1.0)) before running inference"
        )
    if init is not None and not isinstance(init, dict):
        raise ModelTypeError(f"init must be a dict of variable name -> distribution, got {type(init).__name__}")
    if marginals is not None and (isinstance(marginals, str) or not hasattr(marginals, "__iter__")):
        raise ModelTypeError(f"marginals must be a list of variable names, got {marginals!r}")
    if not isinstance(collapse_plates, bool):
        raise ModelTypeError(f"collapse_plates must be True or False, got {collapse_plates!r}")
    registry.load_rule_packages()  # before the key: loading the rules changes the registry's generation
    init = model.aligned_init(init)  # a model with copies: shared or per-copy starting points at the batch shapes
    key = _structure_key(model, algorithm, constraints, schedule, init, collapse_plates, marginals)
    plan = model.compiled_plans.get(key) if key is not None else None
    if plan is not None:  # the same structure and families: the same plan, with today's initial values
        if not init and not plan.init:
            return plan
        same_init = plan.init.keys() == (init or {}).keys() and all(plan.init[n] is init[n] for n in plan.init)
        return plan if same_init else dataclasses.replace(plan, init=dict(init)).seal()
    with cycle_collection_paused():
        plan = compile_model(model, algorithm, constraints, schedule, init, collapse_plates, marginals)
        fold_constants(plan)
        freeze(plan)
    _check_operators(plan)
    for name in list(plan.forms) + list(plan.init):
        if plan.graph.slots[name].kind == "observed":
            what = "a form constraint" if name in plan.forms else "an initial distribution"
            raise ModelError(f"variable {name!r} is observed: {what} applies to latent variables only; remove it")
    if key is not None:
        model.compiled_plans[key] = plan
        if len(model.compiled_plans) > REMEMBERED_PLANS:  # a loop over many options keeps the latest few
            del model.compiled_plans[next(iter(model.compiled_plans))]
    return plan


def fold_constants(plan: Plan) -> None:
    """Compute, once, the message of every step whose inputs are all constants (a prior with fixed parameters):
    it is the same in every run and sweep (``Step.folded``). The pass after :func:`fgraph.plan.compile_model`
    in :func:`compile`, with the checks of a run: a rule that fails on constants fails here."""
    folding = [step for step in plan.schedule if _of_constants(step)]
    if folding:
        engine = Engine(plan, None)
        for step in folding:
            step.folded = engine.message(step)


def _of_constants(step) -> bool:
    """Whether every input of ``step`` is a constant (no message, marginal or data)."""
    row = step.node_plan.row
    return not step.binding.message_positions and all(
        item.kind == "clamp" and isinstance(row[item.position].target, Constant) for item in step.inputs)


def _structure_key(model: Model, algorithm, constraints, schedule, init, collapse_plates, marginals):
    """What a compiled plan of ``model`` depends on, as a hashable key (``None``: not worth remembering).

    A plan depends on the model's structure (its nodes, wiring, shapes and
    constants, fixed for one ``structure_version``), the options, the rules
    registered and the *families* of the initial values: numbers bound as data
    are read afresh by every run, and initial values are swapped into the plan.
    A point mass also counts with its value, which the compiler checks (a
    categorical one must be one-hot). Options that do not reduce to plain
    values (an object standing in for a list) are compiled afresh every time.
    """
    if constraints is None and schedule is None and init is None and marginals is None:  # (the common call)
        return (model.structure_version, registry.generation(), algorithm, (), None, None, collapse_plates, None)
    try:
        if isinstance(constraints, Constraints):
            parts = (constraints.factorization, constraints.form, constraints.operator)
        elif isinstance(constraints, dict):
            parts = (constraints.get("factorization"), constraints.get("form"), constraints.get("operator"),
                     tuple(constraints))
        elif constraints is None:
            parts = ()
        else:
            return None
        constraint_key = tuple(None if part is None else _frozen(part) for part in parts)
        if schedule is None:
            schedule_key = None
        else:
            pairs = schedule.pairs() if isinstance(schedule, Schedule) else schedule
            schedule_key = tuple(tuple(pair) for pair in pairs)
        init_key = None if init is None else tuple(
            (name, type(value), value.batch_shape, tuple(value.event_shape),
             value.value.tobytes() if isinstance(value, PointMass) else None)
            for name, value in init.items()
        )
        marginals_key = None if marginals is None else tuple(marginals)
        key = (model.structure_version, registry.generation(), algorithm, constraint_key, schedule_key, init_key,
               collapse_plates, marginals_key)
        hash(key)
    except (TypeError, ValueError, AttributeError):
        return None
    return key


def _frozen(value):
    """A hashable image of a constraint value: dicts and lists become tuples (in their order)."""
    if isinstance(value, dict):
        return ("dict",) + tuple((key, _frozen(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return (type(value).__name__,) + tuple(_frozen(item) for item in value)
    if isinstance(value, (str, type, int, float, bool)) or value is None:
        return value
    raise TypeError(f"unhashable constraint value {value!r}")


def _check_operators(plan: Plan) -> None:
    """Every operator a node asks for (constructor or constraints) must have rules registered under it.

    The rules a plan uses may never consult the operator (a plate rule, the
    flat message of a conditional factor), so a misspelt name would otherwise
    be ignored without a word.
    """
    for node_plan in plan.nodes.values():
        operator = node_plan.operator
        if operator is None:
            continue
        known = registry.operators(type(node_plan.node))
        if operator not in known:
            raise ModelError(
                f"node {node_plan.node.name!r} ({type(node_plan.node).__name__}): unknown operator {operator!r}; "
                f"operators registered for it: {', '.join(sorted(known)) or '(none)'}"
            )


def run(plan: Plan, data=None, iterations=None, tol=None, damping=0.0, free_energy=None, progress=False, callback=None) -> Result:
    """Run a compiled plan (it may be run again with new data without recompiling).

    The options are those of :func:`infer`; see the module docstring for when
    a run counts as converged.
    """
    if not isinstance(plan, Plan):
        raise ModelTypeError(f"fg.run expects a plan from fg.compile(model), got {type(plan).__name__}")
    _check_run_options(iterations, tol, damping, free_energy, progress, callback)
    return _run(plan, data, iterations, tol, damping, free_energy, progress, callback)


def _check_run_options(iterations, tol, damping, free_energy, progress, callback) -> None:
    """Reject options of the wrong kind or out of range before anything is compiled or computed."""
    if iterations is not None:
        if isinstance(iterations, bool) or not isinstance(iterations, numbers.Integral):
            raise ModelTypeError(f"iterations must be a whole number >= 1, got {iterations!r}")
        if iterations < 1:
            raise ModelError(f"iterations must be at least 1, got {iterations}")
    if tol is not None:
        if isinstance(tol, bool) or not isinstance(tol, numbers.Real):
            raise ModelTypeError(f"tol must be a positive number (nats), got {tol!r}")
        if not (math.isfinite(tol) and tol > 0):
            raise ModelError(
                f"tol must be a positive, finite number (the change of the free energy between sweeps, in nats), "
                f"got {tol!r}"
            )
    if type(damping) is not float and (isinstance(damping, bool) or not isinstance(damping, numbers.Real)):
        raise ModelTypeError(f"damping must be a number in [0, 1), got {damping!r}")
    if not 0.0 <= damping < 1.0:
        raise ModelError(f"damping must lie in [0, 1), got {damping}")
    if free_energy is not None and not isinstance(free_energy, (bool, np.bool_)) and free_energy != "last":
        raise ModelTypeError(f"free_energy must be True, False, \"last\" or None, got {free_energy!r}")
    if free_energy == "last" and tol is not None:
        raise ModelError("tol= compares the free energy of consecutive sweeps: it needs free_energy=True, "
                         "not \"last\"")
    if not isinstance(progress, (bool, np.bool_)):
        raise ModelTypeError(f"progress must be True or False, got {progress!r}")
    if callback is not None and not callable(callback):
        raise ModelTypeError(f"callback must be a function callback(iteration, result), got {callback!r}")


def _run(plan: Plan, data, iterations, tol, damping, free_energy, progress, callback) -> Result:
    if not memory.prepared:  # once per process: large arrays reused rather than faulted in (fgraph.memory)
        memory.raise_mmap_threshold()
    model = plan.graph.model
    if data is not None:
        model.bind(data)
    bound = {slot.name: model.data_for(slot.variable) for slot in plan.graph.observed_slots}
    budget_given = iterations is not None
    if iterations is None:
        iterations = 1 if plan.exact else DEFAULT_ITERATIONS
    if free_energy is None:
        free_energy = (not plan.exact or tol is not None) and plan.computed is None
    final_only = free_energy == "last"
    if final_only:
        free_energy = False  # per sweep; once after the last one (below)
        if plan.computed is not None:
            raise ModelError("the free energy needs every message: compile without marginals= to compute it")
    if free_energy and plan.computed is not None:
        raise ModelError("the free energy needs every message: compile without marginals= to compute it")
    if tol is not None and not free_energy and not plan.exact:
        raise ModelError("tol= is a tolerance on the free energy: it needs free_energy=True (and a plan compiled "
                         "without marginals=)")
    # which tolerance judges the run (None: not judged), see the module docstring
    judged = not plan.exact and free_energy and (tol is not None or not budget_given)
    with cycle_collection_paused():
        return _iterate(plan, bound, iterations, tol, damping, free_energy, progress, callback, judged, final_only,
                        cap_given=budget_given)


def _free_energy(engine: Engine):
    """The free energy of the engine's state, every on-demand message computed first (all of them enter)."""
    engine.complete()
    return bethe.free_energy(engine.state)


def _iterate(plan: Plan, bound: dict, iterations, tol, damping, free_energy, progress, callback, judged,
             final_only=False, cap_given=True) -> Result:
    """The sweeps of one run, from the data bound to the result (see the module docstring); ``final_only``: the
    free energy once, of the state after the last complete sweep; ``cap_given``: whether ``iterations`` is the
    caller's (else the default cap, which a warning names)."""
    engine = Engine(plan, bound)
    trace, met, interrupted = [], False, False
    committed = (0, engine.state.snapshot())  # (complete sweeps, engine state after them), replaced in one assignment
    with ProgressBar(iterations, "inference", "it", enabled=progress) if progress else _NO_BAR as bar:
        try:
            for iteration in range(iterations):
                if iteration == 1 and not (damping or progress or callback is not None):
                    # the rest on floats where every message is one normal or gamma (fgraph.floats)
                    runner = floats.float_run(engine) if codegen.MODE != "interpreted" else None
                    if runner is not None:
                        sweeps = (runner.run_compared if codegen.MODE == "compared" else runner.run)
                        try:
                            done, met = sweeps(engine, iterations - 1, free_energy, tol, trace, final_only)
                        except floats.Interrupted as stop:  # the engine holds the state of its complete sweeps
                            committed = (1 + stop.sweeps, engine.state.snapshot())
                            raise
                        committed = (1 + done, engine.state.snapshot())
                        final_only = False  # (its free energy is on the trace)
                        break
                engine.sweep(damping)
                if free_energy:
                    trace.append(_free_energy(engine))
                committed = (iteration + 1, engine.state.snapshot())
                if progress:
                    bar.update(1, **({"free_energy": f"{float(np.min(trace[-1])):.6g}"} if free_energy else {}))
                if callback is not None:
                    callback(iteration, Result(engine, trace, iteration + 1, None))
                if tol is not None and len(trace) >= 2 and _change(trace) < tol:
                    met = True
                    break
        except KeyboardInterrupt:
            # keep the state after the last complete sweep, so that iterations, the free-energy trace and
            # the marginals describe one and the same run
            interrupted = True
            engine.state.restore(committed[1])
            del trace[committed[0]:]
    done = committed[0]
    if final_only and done:
        trace.append(_free_energy(engine))
    last_change = _change(trace) if len(trace) >= 2 else None
    tolerance = None
    if judged:
        magnitude = float(np.max(np.abs(trace[-1]))) if trace else 1.0  # the largest over the copies of a model
        tolerance = tol if tol is not None else DEFAULT_TOLERANCE * max(1.0, magnitude)
        if tol is None and last_change is not None:
            met = last_change <= tolerance
    if plan.exact:
        converged = done >= 1
    elif judged:
        converged = met
    else:
        converged = None
    result = Result(engine, trace, done, converged, interrupted, tolerance=tolerance, last_change=last_change,
                    tol_given=tol is not None, cap_given=cap_given)
    if converged is False and not interrupted:
        message = result.convergence_report()
        result.warnings.append(message)
        warnings.warn(message, ConvergenceWarning, stacklevel=4)
    return result


def _change(trace: list) -> float:
    """The change of the free energy over the last sweep (nats): the largest over the copies of a model."""
    last, before = trace[-1], trace[-2]
    if type(last) is float:
        return abs(before - last)
    return float(np.max(np.abs(before - last)))
