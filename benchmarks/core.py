"""Core engine benchmark: a plated VMP model.

Part ``vmp``: Normal–Gamma variational message passing on an i.i.d. plate of
N points (full: 10**6, quick: 10**5), 50 iterations, with the free energy
(the negative lower bound) computed after every iteration. Three peers, same
priors, same initial q(tau), same iterations, same bound:

* ``numpy``, the strongest: the same coordinate updates written by hand on the
  sufficient statistics (Σy, Σy², N), one ``sum`` and one ``dot`` pass over
  the data, then Python floats (``vmp_numpy``). ``ratio`` is against it.
* BayesPy's equivalent model, which works element by element
  (``ratio_vs_bayespy``).
* Ours element-wise, ``fg.compile(..., collapse_plates=False)``, against
  BayesPy (``ratio_uncollapsed``): the like-for-like engine comparison.

Ours (``ours_s``) is what a user pays: build the model, ``fg.compile`` (the
engine collapses the observed plate to its sufficient statistics, see
``fgraph/plates.py``), ``fg.run`` and read the posteriors; ``ours_run_s`` is
``fg.run`` alone (``ratio_run_only``). ``agree`` checks the posteriors and
the free energy of every iteration against the numpy peer and the final ones
against BayesPy; the benchmark exits non-zero if they disagree.

Run from the repository root::

    python -m benchmarks.core            # full
    python -m benchmarks.core --quick    # under a minute
    python -m benchmarks.core --profile [--part vmp]   # cProfile of ours only
    python -m benchmarks.core --passes   # operations over the N data per iteration, counted

Timing: ``time.perf_counter``, ours and the peer alternate within each repeat
(full: 5 repeats, quick: 3), medians reported; one untimed warm-up run of each
on a small instance first (imports, rule registry loading). The last line
printed is one JSON object for the whole run; one JSON line per part precedes it.
The scalar Gaussian chain has its own benchmark, ``benchmarks/gauss_markov_chain.py``.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
import warnings

import numpy as np
from scipy.special import digamma

import fgraph as fg
from benchmarks.profiling import profile
from benchmarks.timing import alternating_medians
from fgraph.nodes import Gamma, Normal

SEED = 20240601

# Normal–Gamma priors (shared by ours and BayesPy): mu ~ N(m0, v0), tau ~ Gamma(a0, b0) (rate).
PRIOR_MEAN = 0.0
PRIOR_VAR = 100.0
PRIOR_SHAPE = 2.0
PRIOR_RATE = 1.0
VMP_ITERATIONS = 50



def relative_difference(ours: float, peer: float) -> float:
    return abs(ours - peer) / max(abs(peer), 1e-300)


# ---------------------------------------------------------------- part 1: VMP
def build_vmp_model(data: np.ndarray) -> fg.Model:
    with fg.Model() as model:
        mu = Normal("mu", mean=PRIOR_MEAN, var=PRIOR_VAR)
        tau = Gamma("tau", shape=PRIOR_SHAPE, rate=PRIOR_RATE)
        Normal("y", mean=mu, precision=tau, observed=data)
    return model


def vmp_ours(data: np.ndarray, collapse_plates: bool = True, iterations: int = VMP_ITERATIONS) -> dict:
    """Build, compile, run (bound every iteration), read; ``collapse_plates=False`` runs the plate element-wise.

    ``fg.infer`` is ``fg.compile`` followed by ``fg.run``; they are called
    separately here to time the run alone as well (``run_s``).
    """
    model = build_vmp_model(data)
    plan = fg.compile(model, algorithm="vmp", init={"tau": fg.Gamma(PRIOR_SHAPE, PRIOR_RATE)},
                      collapse_plates=collapse_plates)
    start = time.perf_counter()
    result = fg.run(plan, iterations=iterations, free_energy=True)
    run_s = time.perf_counter() - start
    q_mu, q_tau = result.marginal("mu"), result.marginal("tau")
    return {
        "mean_mu": float(q_mu.mean),
        "var_mu": float(q_mu.var),
        "mean_tau": float(q_tau.mean),
        "free_energy": result.free_energy[-1],
        "trace": list(result.free_energy),
        "iterations": result.iterations,
        "run_s": run_s,
    }


def vmp_numpy(data: np.ndarray, iterations: int = VMP_ITERATIONS) -> dict:
    """The same VMP written by hand on the sufficient statistics (Σy, Σy², N), with the same bound.

    q(mu) = N(m, v) and q(tau) = Gamma(a, b) (rate); each iteration updates
    q(mu) given E[tau], then q(tau) given q(mu) (the engine's schedule), then
    the free energy

        F = N/2 log 2π - N/2 E[log tau] + E[tau] S/2 + KL(q(mu) ‖ p(mu)) + KL(q(tau) ‖ p(tau)),
        S = E[Σ (y_i - mu)²] = Σy² - 2 m Σy + N (m² + v).

    One ``sum`` and one ``dot`` pass over the data, then Python floats.
    """
    count = data.size
    total = float(data.sum())
    total_squares = float(np.dot(data, data))
    m0, v0, a0, b0 = PRIOR_MEAN, PRIOR_VAR, PRIOR_SHAPE, PRIOR_RATE
    shape = a0 + 0.5 * count  # q(tau)'s shape does not change
    digamma_shape = float(digamma(shape))
    constant = (0.5 * count * math.log(2.0 * math.pi) + (shape - a0) * digamma_shape - math.lgamma(shape)
                + math.lgamma(a0) - a0 * math.log(b0) - 0.5 * count * digamma_shape)
    mean_tau = a0 / b0
    trace = []
    for _ in range(iterations):
        var_mu = 1.0 / (1.0 / v0 + count * mean_tau)
        mean_mu = var_mu * (m0 / v0 + mean_tau * total)
        squares = total_squares - 2.0 * mean_mu * total + count * (mean_mu * mean_mu + var_mu)
        rate = b0 + 0.5 * squares
        log_rate = math.log(rate)
        mean_tau = shape / rate
        # the terms of F that depend on q: likelihood and KL(q(tau)) (with E[log tau] = ψ(a) − log b), KL(q(mu))
        trace.append(constant + 0.5 * count * log_rate + 0.5 * mean_tau * squares + a0 * log_rate
                     + shape * (b0 - rate) / rate
                     + 0.5 * (math.log(v0 / var_mu) + (var_mu + (mean_mu - m0) ** 2) / v0 - 1.0))
    return {"mean_mu": mean_mu, "var_mu": var_mu, "mean_tau": mean_tau, "free_energy": trace[-1], "trace": trace}


def vmp_bayespy(data: np.ndarray) -> dict:
    from bayespy.inference import VB
    from bayespy.nodes import Gamma as BayesPyGamma
    from bayespy.nodes import GaussianARD

    mu = GaussianARD(PRIOR_MEAN, 1.0 / PRIOR_VAR)
    tau = BayesPyGamma(PRIOR_SHAPE, PRIOR_RATE)
    y = GaussianARD(mu, tau, plates=data.shape)
    y.observe(data)
    inference = VB(y, mu, tau)
    tau.initialize_from_parameters(PRIOR_SHAPE, PRIOR_RATE)
    # BayesPy stops when (L1 - L0) / mean(|L0|, |L1|) < tol; with tol = -inf that never
    # holds, so it runs exactly `repeat` iterations (the bound is still computed each one).
    inference.update(repeat=VMP_ITERATIONS, tol=-np.inf, verbose=False)
    # Variance from the natural parameters (precision * mean, -precision / 2): E[mu^2] - E[mu]^2
    # would lose ~9 digits to cancellation here.
    return {
        "mean_mu": float(mu.u[0]),
        "var_mu": float(-0.5 / mu.phi[1]),
        "mean_tau": float(tau.u[0]),
        "free_energy": -float(inference.L[inference.iter - 1]),
        "iterations": int(inference.iter),
    }


#: Largest relative difference of posteriors and free energies counted as agreement (rounding is ~1e-14 here).
AGREEMENT = 1e-9


def vmp_differences(ours: dict, peer: dict) -> dict:
    """Relative differences of the posterior moments and the final free energy (and the trace, if both have one)."""
    differences = {
        "E_mu": relative_difference(ours["mean_mu"], peer["mean_mu"]),
        "Var_mu": relative_difference(ours["var_mu"], peer["var_mu"]),
        "E_tau": relative_difference(ours["mean_tau"], peer["mean_tau"]),
        "F": relative_difference(ours["free_energy"], peer["free_energy"]),
    }
    if "trace" in peer:
        if len(ours["trace"]) != len(peer["trace"]):
            differences["F_every_iteration"] = math.inf
        else:
            differences["F_every_iteration"] = max(relative_difference(a, b) for a, b in zip(ours["trace"], peer["trace"]))
    return differences


def run_vmp(quick: bool, size: int | None = None, repeats: int | None = None) -> dict:
    size = size or (10**5 if quick else 10**6)
    repeats = repeats or (3 if quick else 5)
    rng = np.random.default_rng(SEED)
    data = rng.normal(2.0, 0.5, size=size)
    warm = data[:1000]
    vmp_ours(warm)
    vmp_ours(warm, collapse_plates=False)
    vmp_numpy(warm)
    run_times = {True: [], False: []}  # fg.run alone, per repeat, collapsed and element-wise

    def timed_ours(collapse_plates: bool):
        def call():
            result = vmp_ours(data, collapse_plates)
            run_times[collapse_plates].append(result["run_s"])
            return result
        return call

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vmp_bayespy(warm)
        medians, results = alternating_medians(
            {
                "ours": timed_ours(True),
                "numpy": lambda: vmp_numpy(data),
                "bayespy": lambda: vmp_bayespy(data),
                "ours_uncollapsed": timed_ours(False),
            },
            repeats,
        )
    ours_run_s, uncollapsed_run_s = statistics.median(run_times[True]), statistics.median(run_times[False])
    ours, numpy_peer, bayespy = results["ours"], results["numpy"], results["bayespy"]
    uncollapsed = results["ours_uncollapsed"]
    differences = {
        "ours_vs_numpy": vmp_differences(ours, numpy_peer),
        "ours_vs_bayespy": vmp_differences(ours, bayespy),
        "uncollapsed_vs_numpy": vmp_differences(uncollapsed, numpy_peer),
        "uncollapsed_vs_bayespy": vmp_differences(uncollapsed, bayespy),
    }
    agree = all(value <= AGREEMENT for pair in differences.values() for value in pair.values())
    agree = agree and ours["iterations"] == uncollapsed["iterations"] == bayespy["iterations"] == VMP_ITERATIONS
    return {
        "benchmark": "core.vmp",
        "ours_s": round(medians["ours"], 5),
        "peer": "numpy VMP on sufficient statistics (sum + dot, Python floats)",
        "peer_s": round(medians["numpy"], 5),
        "ratio": round(medians["ours"] / medians["numpy"], 3),
        "ours_run_s": round(ours_run_s, 5),
        "ratio_run_only": round(ours_run_s / medians["numpy"], 3),
        "agree": agree,
        "bayespy_s": round(medians["bayespy"], 4),
        "ratio_vs_bayespy": round(medians["ours"] / medians["bayespy"], 4),
        # the engine run element by element, as BayesPy works: the like-for-like engine comparison
        "ours_uncollapsed_s": round(medians["ours_uncollapsed"], 4),
        "ours_uncollapsed_run_s": round(uncollapsed_run_s, 4),
        "ratio_uncollapsed": round(medians["ours_uncollapsed"] / medians["bayespy"], 3),
        "params": {
            "N": size,
            "iterations": VMP_ITERATIONS,
            "repeats": repeats,
            "timing": "ours_s = build + compile + run + read (bound every iteration); ours_run_s = fg.run alone "
            "(medians); peer_s = sum + dot + 50 iterations with the bound; ratio_uncollapsed = "
            "ours element-wise / bayespy",
            "prior": {"m0": PRIOR_MEAN, "v0": PRIOR_VAR, "a0": PRIOR_SHAPE, "b0": PRIOR_RATE},
            "data": "N(2, 0.5**2), numpy default_rng seed %d" % SEED,
        },
        "quality": {
            "relative_differences": differences,
            "agreement_threshold": AGREEMENT,
            "E_mu": ours["mean_mu"],
            "E_tau": ours["mean_tau"],
            "free_energy_ours": ours["free_energy"],
            "free_energy_numpy": numpy_peer["free_energy"],
            "minus_lower_bound_bayespy": bayespy["free_energy"],
        },
    }


class _CountedData(np.ndarray):
    """A view of the plate's data that records every numpy operation reading or making N elements.

    Each ufunc call (``subtract``, ``multiply``, ...), each reduction
    (``add.reduce``: a ``sum``) and each array function (``dot``) with an
    operand of at least ``size`` elements that are not a broadcast (stride-0)
    view counts as one pass over the plate; results of N elements stay
    counted, so everything computed from the data is followed.
    """

    size = 0
    log: list = []

    @staticmethod
    def _plain(value):
        return value.view(np.ndarray) if isinstance(value, _CountedData) else value

    @classmethod
    def _over_plate(cls, values) -> bool:
        return any(isinstance(v, np.ndarray) and v.size >= cls.size and 0 not in v.strides for v in values)

    @classmethod
    def _wrap(cls, result):
        return result.view(cls) if isinstance(result, np.ndarray) and result.size >= cls.size else result

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inputs = [self._plain(i) for i in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(self._plain(o) for o in kwargs["out"])
        if self._over_plate(inputs):
            _CountedData.log.append(f"{ufunc.__name__}.{method}" if method != "__call__" else ufunc.__name__)
        result = getattr(ufunc, method)(*inputs, **kwargs)
        return self._wrap(result) if method == "__call__" else result

    def __array_function__(self, function, types, args, kwargs):
        args = [self._plain(a) for a in args]
        kwargs = {key: self._plain(value) for key, value in kwargs.items()}
        viewing = function.__name__ in ("broadcast_to", "shape", "ndim", "size", "reshape", "ravel")
        if not viewing and self._over_plate(args):
            _CountedData.log.append(function.__name__)
        result = function(*args, **kwargs)
        return result if function.__name__ == "broadcast_to" else self._wrap(result)


def count_passes(size: int = 10_000, collapse_plates: bool = False, iterations: int = 10) -> dict:
    """Passes over the N data of the VMP model per iteration (bound included), counted, not estimated.

    The data are bound as a :class:`_CountedData` view (and array conversions
    keep the view while counting), so that every operation on N elements
    derived from them is recorded. Runs of ``iterations`` and ``iterations + 1``
    sweeps are counted; their difference is one iteration, what stays the
    same is what a run does once (the sums of the data). Returns
    ``{"per_iteration": [...], "per_run": [...]}`` (operation names).
    """
    import fgraph.families.base as base_module

    data = np.random.default_rng(SEED).normal(2.0, 0.5, size=size)
    model = build_vmp_model(data)
    plan = fg.compile(model, algorithm="vmp", init={"tau": fg.Gamma(PRIOR_SHAPE, PRIOR_RATE)},
                      collapse_plates=collapse_plates)
    model.data["y"] = model.data["y"].view(_CountedData)  # the bound data, as every run reads them
    as_float_array, asarray = base_module.as_float_array, np.asarray

    def keeping_the_view(value, name):
        return value if isinstance(value, _CountedData) else as_float_array(value, name)

    patched = [module for name, module in sys.modules.items()
               if name.split(".")[0] in ("fgraph", "nodes", "rules") and getattr(module, "as_float_array", None) is as_float_array]
    _CountedData.size = size
    counts = []
    try:
        np.asarray = np.asanyarray
        for module in patched:
            module.as_float_array = keeping_the_view
        for sweeps in (iterations, iterations + 1):
            _CountedData.log = []
            fg.run(plan, iterations=sweeps, free_energy=True)
            counts.append(list(_CountedData.log))
    finally:
        np.asarray = asarray
        for module in patched:
            module.as_float_array = as_float_array
    shorter, longer = counts
    per_iteration = list(longer)
    for name in shorter:  # what the longer run did on top of the shorter one
        per_iteration.remove(name)
    per_run = list(shorter)
    for _ in range(iterations):
        for name in per_iteration:
            per_run.remove(name)
    return {"per_iteration": sorted(per_iteration), "per_run": sorted(per_run)}


def run_vmp_long(quick: bool, iterations: int = 5000, repeats: int | None = None) -> dict:
    """The collapsed VMP over many sweeps, where the run itself is the cost: ours compiled by numba (the
    structure hot after the warm-up runs, as in a user's loop over data sets), ours in Python on floats, and
    the numpy peer (the same loop by hand on Python floats)."""
    from fgraph import float_kernels, jit

    size = 10**5 if quick else 10**6
    repeats = repeats or (3 if quick else 5)
    data = np.random.default_rng(SEED).normal(2.0, 0.5, size=size)
    for _ in range(20):  # 20 runs of 5,000 sweeps: past floats.HOT_WORK, the kernel compiled (or loaded from disk)
        vmp_ours(data[:1000], iterations=iterations)
    def in_python():
        with jit.compiled_loops(False):
            return vmp_ours(data, iterations=iterations)

    medians, results = alternating_medians({"ours": lambda: vmp_ours(data, iterations=iterations),
                                            "ours_python": in_python,
                                            "numpy": lambda: vmp_numpy(data, iterations=iterations)}, repeats)
    ours, in_python_result, peer = results["ours"], results["ours_python"], results["numpy"]
    differences = vmp_differences(ours, peer)
    agree = (all(value <= AGREEMENT for value in differences.values())
             and ours["trace"] == in_python_result["trace"] and ours["iterations"] == iterations)
    return {
        "benchmark": "core.vmp_long",
        "ours_s": round(medians["ours"], 5),
        "peer": "numpy VMP on sufficient statistics (sum + dot, Python floats)",
        "peer_s": round(medians["numpy"], 5),
        "ratio": round(medians["ours"] / medians["numpy"], 3),
        "agree": agree,
        "compiled": jit.enabled() and float_kernels.kernels_in_memory() > 0,
        "ours_python_s": round(medians["ours_python"], 5),
        "ratio_python": round(medians["ours_python"] / medians["numpy"], 3),
        "params": {"N": size, "iterations": iterations, "repeats": repeats,
                   "timing": "build + compile + run + read (medians); ours compiled once hot (numba), ours_python "
                             "the same runs on floats in Python; compiled and Python traces equal to the bit"},
        "quality": {"relative_differences": differences, "agreement_threshold": AGREEMENT},
    }


def profile_ours(part: str, quick: bool, top: int = 10) -> None:
    """Run ours only under cProfile (5 calls after a warm-up) and print the top functions."""
    rng = np.random.default_rng(SEED)
    data = rng.normal(2.0, 0.5, size=10**5 if quick else 10**6)
    call = lambda: vmp_ours(data, collapse_plates=part == "vmp")  # noqa: E731
    profile(call, 5, f"part {part}, {'quick' if quick else 'full'} size", top)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, fewer repeats (under a minute)")
    parser.add_argument("--part", choices=("vmp", "vmp-long"), help="run one part only (default: all)")
    parser.add_argument("--profile", action="store_true", help="profile ours only (cProfile) instead of timing")
    parser.add_argument("--passes", action="store_true",
                        help="count the passes over the N data per iteration (element-wise and collapsed), no timing")
    arguments = parser.parse_args(argv)
    if arguments.passes:
        for collapse_plates in (False, True):
            print(json.dumps({"collapse_plates": collapse_plates, **count_passes(collapse_plates=collapse_plates)}))
        return
    if arguments.profile:
        for part in ["vmp", "vmp-uncollapsed"]:
            profile_ours(part, arguments.quick)
            print()
        return
    parts = [arguments.part] if arguments.part else ["vmp", "vmp-long"]
    reports = {}
    if "vmp" in parts:
        reports["vmp"] = run_vmp(arguments.quick)
        print(json.dumps(reports["vmp"]), flush=True)
    if "vmp-long" in parts:
        reports["vmp-long"] = run_vmp_long(arguments.quick)
        print(json.dumps(reports["vmp-long"]), flush=True)
    headline = reports["vmp"] if "vmp" in reports else reports["vmp-long"]
    summary = {"benchmark": "core", "parts": parts, "quick": arguments.quick}
    summary.update({key: value for key, value in headline.items() if key != "benchmark"})
    print(json.dumps(summary))
    if any(report.get("agree") is False for report in reports.values()):
        sys.exit("the results of ours and a peer disagree (see the quality fields above)")


if __name__ == "__main__":
    main()
