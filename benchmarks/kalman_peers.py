"""Smoothing a 2-D linear-Gaussian state-space model: ours against dynamax and pykalman, the libraries users pick.

Model: that of ``benchmarks/ssm.py`` (imported from it: the same constants, data and fgraph model)::

    x_1 ~ N(0, I),   x_t = A x_{t−1} + N(0, Q),   y_t = x_t + N(0, R),   t = 1..T,   d = 2,
    A = rotation by π/15 scaled by 0.99,  Q = 0.1 I,  R = 0.5 I,
    T = 10**4 and 10**5 (quick: 2·10**3)

with y drawn by ``ssm.simulate`` (numpy ``default_rng``, seed 20240601). Everyone computes the smoothed
moments E[x_t | y_{1:T}] (T, d) and Cov[x_t | y_{1:T}] (T, d, d) for every t and log p(y_{1:T}).

Ours (``ssm.ours``): ``ours_s`` is what a user pays, building the model (``MvGaussMarkovChain`` and one
observed ``MvNormal`` over the plate of T steps), ``fg.compile``, one sum-product sweep ``fg.run`` and
reading the means, covariances and log p(y); ``ours_run_s`` is the sweep and the reading on a compiled plan.

Peers, each timed end to end from the numpy data to numpy results:

* dynamax, float64 (``jax_enable_x64``), two smoothers, each compiled by ``jax.jit`` for the length T:

  - ``dynamax``: ``dynamax.linear_gaussian_ssm.lgssm_smoother``, a Kalman filter and an RTS smoother as two
    sequential ``lax.scan``;
  - ``dynamax_parallel``: ``dynamax.linear_gaussian_ssm.parallel_inference.lgssm_smoother``, the same
    posterior by associative scans (Särkkä and García-Fernández 2021). Not what a user reaches for first, but
    timed because it is dynamax's fastest route here, on one core too.

  The timed call makes the parameters (``make_lgssm_params``), moves y to a jax array, runs the compiled
  smoother, waits for it (``block_until_ready``) and reads ``smoothed_means``, ``smoothed_covariances`` and
  ``marginal_loglik`` back as numpy. The compilation for this T (``jax.jit(...).lower(...).compile()``:
  trace, lower, XLA compile; about 1 s for the sequential smoother, 12–33 s for the parallel one) is paid
  once per shape and reported apart (``dynamax_compile_s``, ``dynamax_parallel_compile_s``, and
  ``peer_compile_s`` for the peer ``ratio`` is against); it is in no run time or ratio. dynamax adds 1e-9·I
  to every matrix it solves against (``psd_solve``'s ``diagonal_boost``), which moves its moments 1e-9 to
  1e-8 off the exact ones and, in the parallel smoother, its log p(y) by about 5e-9 relative (1.5e-4 nats
  at T = 10**4); the tolerances below cover that.
* pykalman (``pykalman.KalmanFilter`` with the same A, Q, R, I and initial moments): ``smooth(y)`` for the
  moments and ``loglikelihood(y)`` for log p(y), its public API (each runs the Kalman filter, a Python loop
  over t on numpy, so the filter runs twice). pykalman 0.11.2 imports and runs on numpy 2.4; where it does
  not import, the benchmark runs without it and says why in the report (``"pykalman": "not importable: ..."``).

``ratio`` = ``ours_s`` / the fastest peer's time (compilation excluded); ``ratio_dynamax``,
``ratio_dynamax_parallel``, ``ratio_pykalman`` and ``ratio_run_only`` (``ours_run_s`` / the fastest peer)
are reported too. The numpy Kalman loop of ``benchmarks/ssm.py`` is that benchmark's peer and is not timed
here.

Agreement (the exit status is 1 if it fails): the smoothed means and covariances of each peer within 1e-8
(absolute) of ours at every t, log p(y) within 1e-8 relative.

Run from the repository root::

    python -m benchmarks.kalman_peers              # T = 10**4 and 10**5
    python -m benchmarks.kalman_peers --quick      # T = 2·10**3 (under a minute, most of it compiling)
    python -m benchmarks.kalman_peers --steps 50000 --repeats 3

Timing: ``time.perf_counter``; ours (both columns) and the peers alternate within each repeat (5 repeats,
quick 3), medians, after one untimed warm-up of each at full size (and of ours, pykalman and jax's backend at
T = 50). One JSON line per T; the
last line is one JSON object, for the largest T, with every T under ``per_T``.
"""
from __future__ import annotations

import argparse
import functools
import json
import sys
import time

import numpy as np

import fgraph as fg
from benchmarks import ssm
from benchmarks.timing import alternating_medians

MOMENT_TOLERANCE = 1e-8  # absolute, every entry of every smoothed mean and covariance
EVIDENCE_TOLERANCE = 1e-8  # relative, log p(y)
WARM_UP_STEPS = 50
DYNAMAX_ROUTES = ("dynamax", "dynamax_parallel")  # sequential and associative-scan smoothers


def ours(y: np.ndarray) -> dict:
    """What a user pays: build, compile, run, read (``benchmarks/ssm.py``)."""
    return ssm.ours(y)


def ours_run(plan) -> dict:
    """The sweep and the reading on a compiled plan."""
    return ssm.read(fg.run(plan))


def import_dynamax():
    """``(jax, make_lgssm_params)`` with jax switched to float64."""
    import jax

    jax.config.update("jax_enable_x64", True)  # before any array is made: the comparison is at 1e-8
    from dynamax.linear_gaussian_ssm.inference import make_lgssm_params
    return jax, make_lgssm_params


def dynamax_smoother(route: str):
    """dynamax's sequential smoother (``"dynamax"``) or its associative-scan one (``"dynamax_parallel"``)."""
    import_dynamax()
    if route == "dynamax":
        from dynamax.linear_gaussian_ssm import lgssm_smoother
    else:
        from dynamax.linear_gaussian_ssm.parallel_inference import lgssm_smoother
    return lgssm_smoother


def dynamax_parameters(make_lgssm_params):
    """The model of ssm.py as dynamax's ``ParamsLGSSM`` (emission matrix H = I, no biases or inputs)."""
    import jax.numpy as jnp

    return make_lgssm_params(jnp.asarray(ssm.INITIAL_MEAN), jnp.asarray(ssm.INITIAL_COV),
                             jnp.asarray(ssm.TRANSITION), jnp.asarray(ssm.PROCESS_COV), jnp.eye(2),
                             jnp.asarray(ssm.OBSERVATION_COV))


@functools.lru_cache(maxsize=None)
def dynamax_compile(route: str, steps: int) -> tuple:
    """``(smoother compiled for T = steps, seconds to trace, lower and compile it)``.

    ``jax.jit(smoother).lower(...).compile()`` is the compilation the first jitted call pays; the executable it
    returns is what later calls of that shape run. Remembered per route and T, as jax remembers it.
    """
    jax, make_lgssm_params = import_dynamax()
    smoother = jax.jit(dynamax_smoother(route))
    started = time.perf_counter()
    compiled = smoother.lower(dynamax_parameters(make_lgssm_params), jax.numpy.zeros((steps, 2))).compile()
    return compiled, time.perf_counter() - started


def dynamax_peer(y: np.ndarray, smoother) -> dict:
    """Parameters made, y moved to jax, the compiled smoother run to completion, the results read as numpy."""
    jax, make_lgssm_params = import_dynamax()
    posterior = smoother(dynamax_parameters(make_lgssm_params), jax.numpy.asarray(y))
    posterior = jax.block_until_ready(posterior)
    return {"mean": np.asarray(posterior.smoothed_means), "cov": np.asarray(posterior.smoothed_covariances),
            "log_evidence": float(posterior.marginal_loglik)}


def pykalman_available() -> str | None:
    """``None`` if pykalman imports, else why not (the benchmark then runs without it)."""
    try:
        import pykalman  # noqa: F401
    except Exception as error:  # an old package on a new numpy fails in several ways, not only ImportError
        return f"not importable: {type(error).__name__}: {error}"
    return None


def pykalman_peer(y: np.ndarray) -> dict:
    """``KalmanFilter.smooth`` for the moments and ``KalmanFilter.loglikelihood`` for log p(y)."""
    from pykalman import KalmanFilter

    d = y.shape[1]
    kalman = KalmanFilter(transition_matrices=ssm.TRANSITION, observation_matrices=np.eye(d),
                          transition_covariance=ssm.PROCESS_COV, observation_covariance=ssm.OBSERVATION_COV,
                          transition_offsets=np.zeros(d), observation_offsets=np.zeros(d),
                          initial_state_mean=ssm.INITIAL_MEAN, initial_state_covariance=ssm.INITIAL_COV)
    mean, cov = kalman.smooth(y)
    return {"mean": np.asarray(mean), "cov": np.asarray(cov), "log_evidence": float(kalman.loglikelihood(y))}


differences = ssm.differences  # largest differences of the moments over all t, relative one of log p(y)


def agrees(difference: dict) -> bool:
    return (difference["max_abs_diff_mean"] <= MOMENT_TOLERANCE and difference["max_abs_diff_cov"] <= MOMENT_TOLERANCE
            and difference["rel_diff_log_evidence"] <= EVIDENCE_TOLERANCE)


def run_one(steps: int, repeats: int, with_pykalman: bool) -> dict:
    """Time ours and the peers at one length T and compare each peer with ours."""
    y = ssm.simulate(steps)
    dynamax_peer(y[:WARM_UP_STEPS], dynamax_compile("dynamax", WARM_UP_STEPS)[0])  # jax's backend starts here
    compiled = {route: dynamax_compile(route, steps) for route in DYNAMAX_ROUTES}
    plan = fg.compile(ssm.build_model(y))
    calls = {"ours": lambda: ours(y), "ours_run": lambda: ours_run(plan)}
    calls.update({route: (lambda route=route: dynamax_peer(y, compiled[route][0])) for route in DYNAMAX_ROUTES})
    if with_pykalman:
        calls["pykalman"] = lambda: pykalman_peer(y)
    ours(y[:WARM_UP_STEPS])
    if with_pykalman:
        pykalman_peer(y[:WARM_UP_STEPS])
    for call in calls.values():  # warm-up at full size
        call()
    medians, results = alternating_medians(calls, repeats)
    peers = [name for name in (*DYNAMAX_ROUTES, "pykalman") if name in calls]
    quality = {f"ours_vs_{name}": differences(results["ours"], results[name]) for name in peers}
    quality["ours_run_vs_ours"] = differences(results["ours_run"], results["ours"])
    best = min(peers, key=medians.get)
    compile_s = {route: compiled[route][1] for route in DYNAMAX_ROUTES}
    return {
        "T": steps, "ours_s": round(medians["ours"], 6), "ours_run_s": round(medians["ours_run"], 6),
        "peer": best, "peer_s": round(medians[best], 6), "ratio": round(medians["ours"] / medians[best], 4),
        "ratio_run_only": round(medians["ours_run"] / medians[best], 4),
        "peer_compile_s": round(compile_s.get(best, 0.0), 4),
        **{f"{route}_s": round(medians[route], 6) for route in DYNAMAX_ROUTES},
        **{f"{route}_compile_s": round(compile_s[route], 4) for route in DYNAMAX_ROUTES},
        "pykalman_s": round(medians["pykalman"], 6) if with_pykalman else None,
        **{f"ratio_{name}": round(medians["ours"] / medians[name], 4) if name in medians else None
           for name in (*DYNAMAX_ROUTES, "pykalman")},
        "agree": all(agrees(difference) for difference in quality.values()), "quality": quality,
        "log_evidence": {name: results[name]["log_evidence"] for name in ("ours", *peers)},
    }


def run(quick: bool, steps: list | None = None, repeats: int | None = None) -> dict:
    sizes = steps or ([2000] if quick else [10**4, 10**5])
    repeats = repeats or (3 if quick else 5)
    pykalman_status = pykalman_available()
    per_T = []
    for size in sizes:
        per_T.append(run_one(size, repeats, pykalman_status is None))
        print(json.dumps(per_T[-1]), flush=True)
    last = per_T[-1]
    return {
        "benchmark": "kalman_peers",
        **{key: value for key, value in last.items() if key not in ("quality", "log_evidence", "agree")},
        "pykalman": pykalman_status or "used",
        "agree": all(entry["agree"] for entry in per_T), "per_T": per_T,
        "params": {"T": [entry["T"] for entry in per_T], "repeats": repeats, "quick": quick, "d": 2,
                   "tolerance": {"moments_abs": MOMENT_TOLERANCE, "log_evidence_rel": EVIDENCE_TOLERANCE},
                   "timing": "ours_s = build + compile + run + smoothed means/covariances of all x_t + log p(y); "
                             "ours_run_s = run + read on a compiled plan; dynamax_s and dynamax_parallel_s = "
                             "parameters + y to jax + the jit-compiled smoother + block_until_ready + results to "
                             "numpy (compilation apart: *_compile_s, peer_compile_s for the peer); pykalman_s = "
                             "KalmanFilter + smooth + loglikelihood; ratio against the fastest peer"},
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T = 2000 (under a minute)")
    parser.add_argument("--steps", type=int, nargs="+", help="other lengths T")
    parser.add_argument("--repeats", type=int, help="timed repeats (default 5, quick 3)")
    arguments = parser.parse_args(argv)
    report = run(arguments.quick, arguments.steps, arguments.repeats)
    print(json.dumps(report))
    if not report["agree"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
