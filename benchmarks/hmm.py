"""HMM smoothing with known parameters: ours against hmmlearn, the library a user picks for it.

Model: K states, a Markov chain of switches with a sticky random transition matrix (columns: from state j) and a
Gaussian emission per state with its own mean and variance::

    z_1..z_T ~ MarkovChain(π, A),   y_t = Mixture(z_t, [c_t^1 .. c_t^K]),   c_t^k ~ N(μ_k, v_k),   y_t observed

with y drawn from the model (numpy ``default_rng``, seed 7). Both compute p(z_t | y) for every t and log p(y).

* Ours, what a user pays: the model built, ``fg.infer(model)`` (one sum-product sweep towards z: the switch
  messages of the K emission plates, one forward–backward pass in the chain node) and p(z_t | y), log p(y)
  read; ``ours_run_s``: the sweep and the reading on a compiled plan.
* Peer: ``hmmlearn.hmm.GaussianHMM(covariance_type="diag", implementation=...)`` with the same π, A (hmmlearn's
  rows: from state i, so Aᵀ), means and variances set, ``score_samples(y)`` (log p(y) and the posteriors in one
  call). Both implementations are timed; ``ratio`` is against the faster one ("scaling" for these sizes).

Agreement (the exit status is 1 if it fails): p(z_t | y) within 1e-8 of hmmlearn's at every t, log p(y) within
1e-9 relative. Timing: ``time.perf_counter``; ours and the peers alternate within each repeat (5 repeats, quick
3), medians, after one untimed warm-up. The last line is one JSON object.

    python -m benchmarks.hmm                      # K = 2 and 10, T = 10^4 and 10^5 (the last line: K = 10, T = 10^5)
    python -m benchmarks.hmm --quick              # K = 2 and 10, T = 10^4
    python -m benchmarks.hmm --states 5 --steps 20000
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np

import fgraph as fg
from benchmarks.timing import alternating_medians
from fgraph.nodes import Mixture, Normal
from fgraph.nodes.markov_chain import MarkovChain

SEED = 7
PROBABILITY_TOLERANCE = 1e-8
EVIDENCE_TOLERANCE = 1e-9


def parameters(K: int, seed: int = SEED) -> dict:
    """π uniform-ish, a sticky A (0.9 on the diagonal), means spread over [−K, K], variances in [0.5, 2]."""
    rng = np.random.default_rng(seed)
    stay = 0.9
    A = rng.dirichlet(np.ones(K), size=K).T * (1 - stay) + stay * np.eye(K)  # columns sum to one
    A /= A.sum(axis=0, keepdims=True)
    return {"initial": rng.dirichlet(np.ones(K) * 5), "transition": A, "means": np.linspace(-K, K, K),
            "variances": rng.uniform(0.5, 2.0, K)}


def simulate(p: dict, T: int, seed: int = SEED) -> np.ndarray:
    rng = np.random.default_rng(seed + 1)
    K = len(p["initial"])
    z = np.empty(T, dtype=int)
    z[0] = rng.choice(K, p=p["initial"])
    for t in range(1, T):
        z[t] = rng.choice(K, p=p["transition"][:, z[t - 1]])
    return rng.normal(p["means"][z], np.sqrt(p["variances"][z]))


def build_model(y: np.ndarray, p: dict) -> fg.Model:
    T = len(y)
    with fg.Model() as model:
        z = MarkovChain("z", p["initial"], p["transition"], T)
        components = [Normal(f"c{k}", mean=float(mean), var=float(var), batch_shape=(T,))
                      for k, (mean, var) in enumerate(zip(p["means"], p["variances"]))]
        Mixture("y", z, components, observed=y)
    return model


def read(result) -> dict:
    return {"posterior": np.asarray(result.marginal("z").probabilities), "log_evidence": float(result.log_evidence)}


def ours(y, p) -> dict:
    return read(fg.infer(build_model(y, p)))


def peer(y, p, implementation: str) -> dict:
    from hmmlearn.hmm import GaussianHMM

    K = len(p["initial"])
    model = GaussianHMM(n_components=K, covariance_type="diag", implementation=implementation, init_params="",
                        params="")
    model.startprob_ = p["initial"]
    model.transmat_ = p["transition"].T  # hmmlearn: rows are "from"
    model.means_ = p["means"][:, None]
    model.covars_ = p["variances"][:, None]
    log_evidence, posterior = model.score_samples(y[:, None])
    return {"posterior": posterior, "log_evidence": float(log_evidence)}


def compare(K: int, T: int, repeats: int) -> dict:
    p = parameters(K)
    y = simulate(p, T)
    plan = fg.compile(build_model(y, p))
    calls = {"ours": lambda: ours(y, p), "ours_run": lambda: read(fg.run(plan)),
             "scaling": lambda: peer(y, p, "scaling"), "log": lambda: peer(y, p, "log")}
    for call in calls.values():  # warm-up (compiled loops, imports)
        call()
    times, results = alternating_medians(calls, repeats)
    best = min(("scaling", "log"), key=times.get)
    reference = results["scaling"]
    probability = max(float(np.max(np.abs(results[name]["posterior"] - reference["posterior"])))
                      for name in ("ours", "ours_run", "log"))
    evidence = max(abs(results[name]["log_evidence"] - reference["log_evidence"]) / abs(reference["log_evidence"])
                   for name in ("ours", "ours_run", "log"))
    return {"K": K, "T": T, "ours_s": times["ours"], "ours_run_s": times["ours_run"],
            "hmmlearn_scaling_s": times["scaling"], "hmmlearn_log_s": times["log"], "peer": f"hmmlearn {best}",
            "peer_s": times[best], "ratio": times["ours"] / times[best], "ratio_run": times["ours_run"] / times[best],
            "max_probability_difference": probability, "evidence_relative_difference": evidence,
            "agree": probability <= PROBABILITY_TOLERANCE and evidence <= EVIDENCE_TOLERANCE}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T = 10^4 only")
    parser.add_argument("--states", type=int, nargs="+", default=[2, 10], help="K (default 2 and 10)")
    parser.add_argument("--steps", type=int, nargs="+", default=None, help="T (default 10^4 and 10^5)")
    parser.add_argument("--repeats", type=int, default=None)
    arguments = parser.parse_args(argv)
    steps = arguments.steps or ([10_000] if arguments.quick else [10_000, 100_000])
    repeats = arguments.repeats or (3 if arguments.quick else 5)
    rows = [compare(K, T, repeats) for T in steps for K in arguments.states]
    for row in rows[:-1]:
        print(json.dumps(row))
    last = dict(rows[-1], benchmark="hmm", agree=all(row["agree"] for row in rows),
                params={"states": arguments.states, "steps": steps, "repeats": repeats,
                        "ratios": {f"K={row['K']},T={row['T']}": round(row["ratio"], 3) for row in rows}})
    print(json.dumps(last))
    return 0 if last["agree"] else 1


if __name__ == "__main__":
    sys.exit(main())
