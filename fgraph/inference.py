"""``fg.infer``: compile a model, bind data, run message passing, return a :class:`Result`."""
from __future__ import annotations


from fgraph.engine import Engine
from fgraph.errors import ModelError
from fgraph.model import Model
from fgraph.plan import Plan, compile_model
from fgraph.progress import ProgressBar
from fgraph.result import Result


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
    iterations : int, optional
        Number of sweeps; default 1 for BP on a tree (exact), else 50.
    tol : float, optional
        Stop when the free energy changes by less than ``tol`` between sweeps.
    init : dict name -> Distribution, optional
        Initial marginals/messages the schedule needs before it computes them.
    damping : float in [0, 1)
        Loopy BP damping of natural parameters (0: none).
    free_energy : bool, optional
        Compute the Bethe free energy after each sweep (default: yes unless exact BP).
    progress : bool
        Show a progress bar over iterations, with the free energy (tqdm; a
        line per 10% on stderr without it).
    callback : callable(iteration, result), optional
        Called after every sweep with a :class:`~fgraph.result.Result` of the
        current state (marginals, messages, the free-energy trace so far).

    A ``KeyboardInterrupt`` during the run stops it after the current message;
    the result keeps what was computed and has ``interrupted=True``.
    """
    plan = compile(model, algorithm=algorithm, constraints=constraints, schedule=schedule, init=init)
    return run(plan, data=data, iterations=iterations, tol=tol, damping=damping,
               free_energy=free_energy, progress=progress, callback=callback)


def compile(model: Model, algorithm: str = "bp", constraints=None, schedule=None, init=None,
            collapse_plates: bool = True, marginals=None) -> Plan:
    """Compile ``model``: bind every message to a rule and check the schedule (no numbers computed).

    ``collapse_plates`` lets observed plates run on their sufficient statistics
    (see :mod:`fgraph.plates`). ``marginals`` (a list of variable names) keeps
    only the messages those beliefs, and the log evidence, depend on; the
    free energy then needs the full schedule and is not available.
    """
    return compile_model(model, algorithm, constraints, schedule, init, collapse_plates, marginals)


def run(plan: Plan, data=None, iterations=None, tol=None, damping=0.0, free_energy=None, progress=False, callback=None) -> Result:
    """Run a compiled plan (it may be run again with new data without recompiling)."""
    model = plan.graph.model
    if data is not None:
        model.bind(data)
    bound = {}
    for slot in plan.graph.slots.values():
        if slot.kind == "observed":
            bound[slot.name] = model.data_for(slot.variable)
    if not 0.0 <= damping < 1.0:
        raise ModelError(f"damping must lie in [0, 1), got {damping}")
    if iterations is None:
        iterations = 1 if plan.exact else 50
    if iterations < 1:
        raise ModelError(f"iterations must be at least 1, got {iterations}")
    if free_energy is None:
        free_energy = (not plan.exact or tol is not None) and plan.computed is None
    if free_energy and plan.computed is not None:
        raise ModelError("the free energy needs every message: compile without marginals= to compute it")
    engine = Engine(plan, bound)
    trace, converged, interrupted, done = [], False, False, 0
    with ProgressBar(iterations, "inference", "it", enabled=progress) as bar:
        try:
            for iteration in range(iterations):
                engine.sweep(damping)
                done = iteration + 1
                if free_energy:
                    trace.append(engine.free_energy())
                if progress:
                    status = {"free_energy": f"{trace[-1]:.6g}"} if free_energy else {}
                    bar.update(1, **status)
                if callback is not None:
                    callback(iteration, Result(engine, trace, done, False))
                if tol is not None and len(trace) >= 2 and abs(trace[-2] - trace[-1]) < tol:
                    converged = True
                    break
        except KeyboardInterrupt:
            interrupted = True
    if plan.exact and done >= 1:
        converged = True
    return Result(engine, trace, done, converged, interrupted)
