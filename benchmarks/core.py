"""Core engine benchmark: a plated VMP model.

Part ``vmp``: Normal–Gamma variational message passing on an i.i.d. plate of
N points (full: 10**6, quick: 10**5), 50 iterations, fgraph against BayesPy's
equivalent model (same priors, same initial q(tau), same number of
iterations, lower bound / free energy computed every iteration by both).
Times include model construction and inference. Ours is timed twice: as
``fg.infer`` runs it (the engine collapses the observed plate to its
sufficient statistics, see ``fgraph/plates.py``) and with
``fg.compile(..., collapse_plates=False)``, element-wise like BayesPy.

Run from the repository root::

    python -m benchmarks.core            # full
    python -m benchmarks.core --quick    # under a minute
    python -m benchmarks.core --profile [--part vmp]   # cProfile of ours only

Timing: ``time.perf_counter``, ours and the peer alternate within each repeat
(full: 5 repeats, quick: 3), medians reported; one untimed warm-up run of each
on a small instance first (imports, rule registry loading). The last line
printed is one JSON object for the whole run; one JSON line per part precedes it.
The scalar Gaussian chain has its own benchmark, ``benchmarks/gauss_markov_chain.py``.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
import warnings

import numpy as np

import fgraph as fg
from benchmarks.profiling import profile
from nodes import Gamma, Normal

SEED = 20240601

# Normal–Gamma priors (shared by ours and BayesPy): mu ~ N(m0, v0), tau ~ Gamma(a0, b0) (rate).
PRIOR_MEAN = 0.0
PRIOR_VAR = 100.0
PRIOR_SHAPE = 2.0
PRIOR_RATE = 1.0
VMP_ITERATIONS = 50



def median_times(repeats: int, functions: dict) -> tuple[dict, dict]:
    """Call each function once per repeat, alternating; return (median seconds, last results)."""
    times = {name: [] for name in functions}
    results = {}
    for _ in range(repeats):
        for name, function in functions.items():
            start = time.perf_counter()
            results[name] = function()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}, results


def relative_difference(ours: float, peer: float) -> float:
    return abs(ours - peer) / max(abs(peer), 1e-300)


# ---------------------------------------------------------------- part 1: VMP
def vmp_ours(data: np.ndarray, collapse_plates: bool = True) -> dict:
    """Ours; ``collapse_plates=False`` makes the engine run the observed plate element-wise (as BayesPy does)."""
    with fg.Model() as model:
        mu = Normal("mu", mean=PRIOR_MEAN, var=PRIOR_VAR)
        tau = Gamma("tau", shape=PRIOR_SHAPE, rate=PRIOR_RATE)
        Normal("y", mean=mu, precision=tau, observed=data)
    if collapse_plates:
        result = fg.infer(
            model,
            algorithm="vmp",
            init={"tau": fg.Gamma(PRIOR_SHAPE, PRIOR_RATE)},
            iterations=VMP_ITERATIONS,
            free_energy=True,
        )
    else:
        plan = fg.compile(model, algorithm="vmp", init={"tau": fg.Gamma(PRIOR_SHAPE, PRIOR_RATE)}, collapse_plates=False)
        result = fg.run(plan, iterations=VMP_ITERATIONS, free_energy=True)
    q_mu, q_tau = result.marginal("mu"), result.marginal("tau")
    return {
        "mean_mu": float(q_mu.mean),
        "var_mu": float(q_mu.var),
        "mean_tau": float(q_tau.mean),
        "free_energy": result.free_energy[-1],
        "iterations": result.iterations,
    }


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
        "lower_bound": float(inference.L[inference.iter - 1]),
        "iterations": int(inference.iter),
    }


def run_vmp(quick: bool) -> dict:
    size = 10**5 if quick else 10**6
    repeats = 3 if quick else 5
    rng = np.random.default_rng(SEED)
    data = rng.normal(2.0, 0.5, size=size)
    warm = data[:1000]
    vmp_ours(warm)
    vmp_ours(warm, collapse_plates=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vmp_bayespy(warm)
        medians, results = median_times(
            repeats,
            {
                "ours": lambda: vmp_ours(data),
                "peer": lambda: vmp_bayespy(data),
                "ours_uncollapsed": lambda: vmp_ours(data, collapse_plates=False),
            },
        )
    ours, peer, uncollapsed = results["ours"], results["peer"], results["ours_uncollapsed"]
    return {
        "benchmark": "core.vmp",
        "ours_s": round(medians["ours"], 4),
        "peer": "bayespy",
        "peer_s": round(medians["peer"], 4),
        "ratio": round(medians["ours"] / medians["peer"], 3),
        # The engine collapses an observed plate of a conjugate mean-field factor to its
        # sufficient statistics (fgraph/plates.py); BayesPy does not. The uncollapsed run
        # (fg.compile(..., collapse_plates=False)) is the like-for-like engine comparison.
        "ours_uncollapsed_s": round(medians["ours_uncollapsed"], 4),
        "ratio_uncollapsed": round(medians["ours_uncollapsed"] / medians["peer"], 3),
        "params": {
            "N": size,
            "iterations": VMP_ITERATIONS,
            "repeats": repeats,
            "timing": "model construction + inference (bound computed every iteration by both)",
            "prior": {"m0": PRIOR_MEAN, "v0": PRIOR_VAR, "a0": PRIOR_SHAPE, "b0": PRIOR_RATE},
            "data": "N(2, 0.5**2), numpy default_rng seed %d" % SEED,
        },
        "quality": {
            "E_mu_ours": ours["mean_mu"],
            "E_mu_peer": peer["mean_mu"],
            "E_mu_rel_diff": relative_difference(ours["mean_mu"], peer["mean_mu"]),
            "Var_mu_rel_diff": relative_difference(ours["var_mu"], peer["var_mu"]),
            "E_tau_ours": ours["mean_tau"],
            "E_tau_peer": peer["mean_tau"],
            "E_tau_rel_diff": relative_difference(ours["mean_tau"], peer["mean_tau"]),
            "free_energy_ours": ours["free_energy"],
            "lower_bound_peer": peer["lower_bound"],
            "F_plus_L_rel": relative_difference(ours["free_energy"], -peer["lower_bound"]),
            "E_mu_rel_diff_uncollapsed": relative_difference(uncollapsed["mean_mu"], peer["mean_mu"]),
            "E_tau_rel_diff_uncollapsed": relative_difference(uncollapsed["mean_tau"], peer["mean_tau"]),
            "F_plus_L_rel_uncollapsed": relative_difference(uncollapsed["free_energy"], -peer["lower_bound"]),
            "iterations_ours": ours["iterations"],
            "iterations_peer": peer["iterations"],
        },
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
    parser.add_argument("--part", choices=("vmp",), help="run one part only (default: all)")
    parser.add_argument("--profile", action="store_true", help="profile ours only (cProfile) instead of timing")
    arguments = parser.parse_args(argv)
    if arguments.profile:
        for part in ["vmp", "vmp-uncollapsed"]:
            profile_ours(part, arguments.quick)
            print()
        return
    parts = [arguments.part] if arguments.part else ["vmp"]
    reports = {}
    if "vmp" in parts:
        reports["vmp"] = run_vmp(arguments.quick)
        print(json.dumps(reports["vmp"]), flush=True)
    headline = reports["vmp"]
    summary = {"benchmark": "core", "parts": parts, "quick": arguments.quick}
    summary.update({key: value for key, value in headline.items() if key != "benchmark"})
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
