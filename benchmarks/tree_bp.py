"""Discrete belief propagation on a tree with evidence: ours against pgmpy, the library users pick for it.

Model: a random tree of n discrete variables with K states each, a Bayesian network whose every edge points
away from the root::

    x_0 ~ Cat(π),   x_i ~ Cat(A_i e_{x_pa(i)})   (i = 1..n−1),   A_i[a, b] = P(x_i = a | x_pa(i) = b),
    pa(i) uniform on 0..i−1 (a random recursive tree, depth O(log n)),
    π ~ Dir(1), every column of every A_i ~ Dir(1),
    5 leaves observed, their states drawn from the model (ancestral sampling),
    n = 200 and 2000, K = 2 and 8 (quick: n = 200), numpy ``default_rng`` seeded per (n, K).

Everyone computes p(x_i | e) for every unobserved x_i, shape (n − 5, K), and log p(e).

Ours: ``ours_s`` is what a user pays, building the model (``Categorical`` for x_0, one ``Transition`` per
other variable, the observed leaves with ``observed=state``), ``fg.compile(model, marginals=<every hidden
variable>)``, one sum-product sweep ``fg.run`` (exact on a tree: the plan is ``exact``) and reading every
marginal and the log evidence (the log-scale of a belief, Theorem 3.1 of the model-comparison paper);
``ours_run_s`` is the sweep and the reading on a compiled plan.

Peers, pgmpy 1.1.2 (pure Python over numpy factors; it installs here without torch and imports in ~0.2 s).
pgmpy has no call that returns all posterior marginals and p(e) of a Bayesian network from one pass, so the
routes it offers were measured and the fastest is the peer:

* ``pgmpy_ve`` (the peer, ``ratio`` is against it): the ``DiscreteBayesianNetwork`` of ``TabularCPD`` s built,
  then ``VariableElimination.query([x_i], evidence=e)`` for each hidden x_i (pgmpy prunes the network to the
  ancestors of the query and the evidence, then contracts with opt_einsum), and log p(e) by the chain rule,
  Σ_j log p(e_j | e_1..e_{j−1}), one query per observed leaf. pgmpy's ``get_state_probability`` and
  ``get_partition_function`` enumerate all K^n joint states, so they are no route to p(e) here.
* ``pgmpy_bp`` (n ≤ :data:`BP_MAX_VARIABLES`, ``ratio_pgmpy_bp``): ``BeliefPropagation`` calibrated once on
  the network with the evidence entered by pgmpy's own ``DiscreteFactor.reduce`` (a ``DiscreteMarkovNetwork``
  of the CPD factors, each observed leaf's factor reduced to its parent), every marginal read from a clique
  belief (marginalised and normalised) and p(e) as the sum of a calibrated clique belief (the partition
  function of the reduced network). Its calibration is quadratic in n (it re-runs a pass rooted at each
  clique until its convergence check, a comparison of every sepset, holds): 1–2 s at n = 200 and, measured
  once (``--slow-pgmpy-once``), 159 s at n = 2000, K = 2.
* ``pgmpy_bp_query``: ``BeliefPropagation.query([x_i], evidence=e)`` per hidden variable, the documented
  call, and the chain rule for p(e) by the same call; every query rebuilds and recalibrates the junction
  tree: 74 s for n = 200, K = 2, measured once (``--slow-pgmpy-once``), not in the timed loop.
  One ``query`` of all hidden variables with ``joint=False`` contracts their joint table (K^n entries).

Extra column ``numpy_s`` (``ratio_numpy``): the two-pass sum-product a numpy user would write for this tree,
a Python loop over the variables on length-K numpy vectors (messages to the parent in reverse index order,
then the outside messages in index order). It is the most efficient straightforward implementation, and
faster than every pgmpy route.

Agreement (the exit status is 1 if it fails): every marginal of each peer and of the numpy passes within
1e-9 (absolute) of ours, log p(e) within 1e-9 relative.

Run from the repository root::

    python -m benchmarks.tree_bp                   # n = 200 and 2000, K = 2 and 8 (the last line: n = 2000, K = 8)
    python -m benchmarks.tree_bp --quick           # n = 200, K = 2 and 8
    python -m benchmarks.tree_bp --variables 500 --states 4 --repeats 3
    python -m benchmarks.tree_bp --slow-pgmpy-once --variables 200 2000 --states 2   # pgmpy's BP routes, once

Timing: ``time.perf_counter``; ours (both columns), the peers and the numpy passes alternate within each
repeat (5 repeats, quick 3), medians, after one untimed warm-up of each. The last line is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings

import numpy as np

import fgraph as fg
from benchmarks.timing import alternating_medians
from fgraph.nodes import Categorical, Transition

SEED = 20261128
OBSERVED_LEAVES = 5
BP_MAX_VARIABLES = 200  # pgmpy's calibration is quadratic in n: minutes per call beyond this
PROBABILITY_TOLERANCE = 1e-9  # absolute, every entry of every marginal
EVIDENCE_TOLERANCE = 1e-9  # relative, log p(e)


def random_tree(n: int, K: int, observed: int = OBSERVED_LEAVES, seed: int = SEED) -> dict:
    """A random tree Bayesian network with evidence on ``observed`` of its leaves.

    Returns ``parent`` (n,) with ``parent[0] = -1`` and ``parent[i] < i``, ``prior`` π (K,), ``cpts`` (n, K, K)
    with ``cpts[i][a, b] = P(x_i = a | x_parent[i] = b)`` (columns sum to one; ``cpts[0]`` is unused, x_0 has
    π) and ``evidence``, a dict {leaf index: observed state} in increasing index order.
    """
    rng = np.random.default_rng([seed, n, K])
    parent = np.concatenate([[-1], rng.integers(0, np.arange(1, n))])
    prior = rng.dirichlet(np.ones(K))
    cpts = rng.dirichlet(np.ones(K), size=(n, K)).transpose(0, 2, 1)  # Dirichlet draws are the columns
    states = np.empty(n, dtype=int)
    states[0] = rng.choice(K, p=prior)
    for i in range(1, n):  # parents come first: ancestral sampling in index order
        states[i] = rng.choice(K, p=cpts[i][:, states[parent[i]]])
    leaves = np.flatnonzero(np.bincount(parent[1:], minlength=n) == 0)
    chosen = np.sort(rng.choice(leaves, size=min(observed, len(leaves)), replace=False))
    return {"parent": parent, "prior": prior, "cpts": cpts, "evidence": {int(i): int(states[i]) for i in chosen}}


def name_of(i: int) -> str:
    return f"x{i}"


def hidden_variables(tree: dict) -> list[int]:
    return [i for i in range(len(tree["parent"])) if i not in tree["evidence"]]


# ------------------------------------------------------------------------------------------------ ours
def build_model(tree: dict) -> fg.Model:
    """x_0 ~ Categorical(π); x_i ~ Transition(x_parent[i], A_i), observed where the tree has evidence."""
    parent, cpts, evidence = tree["parent"], tree["cpts"], tree["evidence"]
    with fg.Model() as model:
        variables = [Categorical(name_of(0), tree["prior"])]
        for i in range(1, len(parent)):
            variables.append(Transition(name_of(i), variables[parent[i]], cpts[i], observed=evidence.get(i)))
    return model


def compile_model(tree: dict):
    return fg.compile(build_model(tree), marginals=[name_of(i) for i in hidden_variables(tree)])


def read(result, tree: dict) -> dict:
    """Every hidden marginal, shape (n − |e|, K), in index order, and log p(e)."""
    marginals = np.array([result.marginal(name_of(i)).probabilities for i in hidden_variables(tree)])
    return {"marginals": marginals, "log_evidence": float(result.log_evidence)}


def ours(tree: dict) -> dict:
    """What a user pays: build, compile, run, read."""
    return read(fg.run(compile_model(tree)), tree)


def ours_run(plan, tree: dict) -> dict:
    """The sweep and the reading on a compiled plan."""
    return read(fg.run(plan), tree)


# ------------------------------------------------------------------------------------------------ pgmpy
def import_pgmpy():
    """pgmpy's modules; its estimators announce a deprecation on import, which says nothing about this run."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        from pgmpy.factors.discrete import DiscreteFactor, TabularCPD
        from pgmpy.inference import BeliefPropagation, VariableElimination
        from pgmpy.models import DiscreteBayesianNetwork, DiscreteMarkovNetwork
    return {"DiscreteFactor": DiscreteFactor, "TabularCPD": TabularCPD, "BeliefPropagation": BeliefPropagation,
            "VariableElimination": VariableElimination, "DiscreteBayesianNetwork": DiscreteBayesianNetwork,
            "DiscreteMarkovNetwork": DiscreteMarkovNetwork}


def pgmpy_cpds(tree: dict, pgmpy: dict) -> list:
    """One ``TabularCPD`` per variable; pgmpy's CPD values are (child states, parent states), as ``cpts[i]``."""
    parent, cpts, K = tree["parent"], tree["cpts"], len(tree["prior"])
    TabularCPD = pgmpy["TabularCPD"]
    return [TabularCPD(name_of(0), K, tree["prior"][:, None])] + [
        TabularCPD(name_of(i), K, cpts[i], evidence=[name_of(parent[i])], evidence_card=[K])
        for i in range(1, len(parent))]


def pgmpy_network(tree: dict, pgmpy: dict):
    parent = tree["parent"]
    network = pgmpy["DiscreteBayesianNetwork"]([(name_of(parent[i]), name_of(i)) for i in range(1, len(parent))])
    network.add_cpds(*pgmpy_cpds(tree, pgmpy))
    return network


def pgmpy_evidence(tree: dict) -> dict:
    return {name_of(i): state for i, state in tree["evidence"].items()}


def pgmpy_ve_peer(tree: dict) -> dict:
    """One ``VariableElimination`` query per hidden variable; log p(e) = Σ_j log p(e_j | e_<j), one query each."""
    pgmpy = import_pgmpy()
    return _by_queries(pgmpy["VariableElimination"](pgmpy_network(tree, pgmpy)), tree)


def _by_queries(inference, tree: dict) -> dict:
    """Every hidden variable's marginal by one ``inference.query`` each, log p(e) by the chain rule."""
    evidence = pgmpy_evidence(tree)
    marginals = np.array([inference.query([name_of(i)], evidence=evidence, show_progress=False).values
                          for i in hidden_variables(tree)])
    log_evidence, given = 0.0, {}
    for name, state in evidence.items():
        log_evidence += math.log(inference.query([name], evidence=dict(given), show_progress=False).values[state])
        given[name] = state
    return {"marginals": marginals, "log_evidence": log_evidence}


def pgmpy_bp_peer(tree: dict) -> dict:
    """``BeliefPropagation.calibrate`` once on the evidence-reduced network; marginals and p(e) from clique beliefs.

    The evidence is entered as pgmpy does inside its queries: each observed leaf's factor P(x_leaf | x_parent)
    is reduced to the function of x_parent at the observed state. The calibrated clique beliefs are then
    unnormalised, Σ over a clique's belief = Σ_x Π factors = p(e).
    """
    pgmpy = import_pgmpy()
    parent, evidence = tree["parent"], tree["evidence"]
    factors = []
    for cpd in pgmpy_cpds(tree, pgmpy):
        factor = cpd.to_factor()
        index = int(cpd.variable[1:])
        if index in evidence:
            factor = factor.reduce([(cpd.variable, evidence[index])], inplace=False)
        factors.append(factor)
    hidden = hidden_variables(tree)
    network = pgmpy["DiscreteMarkovNetwork"]()
    network.add_nodes_from(name_of(i) for i in hidden)
    network.add_edges_from((name_of(parent[i]), name_of(i)) for i in hidden if i > 0)
    network.add_factors(*factors)
    propagation = pgmpy["BeliefPropagation"](network)
    propagation.calibrate()
    beliefs = propagation.get_clique_beliefs()
    clique_of = {}
    for clique in beliefs:
        for variable in clique:
            clique_of.setdefault(variable, clique)
    marginals = []
    for i in hidden:
        clique = clique_of[name_of(i)]
        values = beliefs[clique].marginalize([v for v in clique if v != name_of(i)], inplace=False).values
        marginals.append(values / values.sum())
    return {"marginals": np.array(marginals), "log_evidence": math.log(float(next(iter(beliefs.values())).values.sum()))}


def pgmpy_bp_query_peer(tree: dict) -> dict:
    """``BeliefPropagation.query([x_i], evidence=e)`` per hidden variable, pgmpy's documented call, and log p(e)
    by the chain rule with the same call; every query rebuilds and recalibrates the junction tree."""
    pgmpy = import_pgmpy()
    return _by_queries(pgmpy["BeliefPropagation"](pgmpy_network(tree, pgmpy)), tree)


# ------------------------------------------------------------------------------------------------ numpy
def numpy_two_pass(tree: dict) -> dict:
    """Sum-product on the tree in two passes, a Python loop over variables on length-K vectors.

    Inward (i = n−1..1, children before parents): λ_i = 1{x_i = e_i} (or 1) × Π_children m_c, the message to
    the parent m_i(b) = Σ_a A_i[a, b] λ_i(a), normalised, its sum added to the log-scale; log p(e) = Σ log-scales
    + log Σ_b π_b λ_0(b). Outward (i = 1..n−1): the belief of x_i is ∝ λ_i(a) Σ_b A_i[a, b] q_parent(b) / m_i(b),
    the parent's belief with x_i's own message divided out (Dirichlet CPTs have no zeros, so m_i > 0).
    """
    parent, prior, cpts, evidence = tree["parent"], tree["prior"], tree["cpts"], tree["evidence"]
    n, K = len(parent), len(prior)
    inside = np.ones((n, K))
    for i, state in evidence.items():
        inside[i] = np.eye(K)[state]
    upward = np.empty((n, K))
    log_scale = 0.0
    for i in range(n - 1, 0, -1):
        message = inside[i] @ cpts[i]
        total = message.sum()
        upward[i] = message / total
        log_scale += math.log(total)
        inside[parent[i]] *= upward[i]
    root = prior * inside[0]
    beliefs = np.empty((n, K))
    beliefs[0] = root / root.sum()
    for i in range(1, n):
        belief = inside[i] * (cpts[i] @ (beliefs[parent[i]] / upward[i]))
        beliefs[i] = belief / belief.sum()
    return {"marginals": beliefs[hidden_variables(tree)], "log_evidence": log_scale + math.log(root.sum())}


# ------------------------------------------------------------------------------------------------ comparison
def differences(result: dict, reference: dict) -> dict:
    return {"max_abs_diff_marginals": float(np.max(np.abs(result["marginals"] - reference["marginals"]))),
            "rel_diff_log_evidence": abs(result["log_evidence"] - reference["log_evidence"])
            / abs(reference["log_evidence"])}


def agrees(difference: dict) -> bool:
    return (difference["max_abs_diff_marginals"] <= PROBABILITY_TOLERANCE
            and difference["rel_diff_log_evidence"] <= EVIDENCE_TOLERANCE)


def compare(n: int, K: int, repeats: int) -> dict:
    """Time ours, the pgmpy routes and the numpy passes on one tree; compare each with ours."""
    tree = random_tree(n, K)
    plan = compile_model(tree)
    calls = {"ours": lambda: ours(tree), "ours_run": lambda: ours_run(plan, tree),
             "pgmpy_ve": lambda: pgmpy_ve_peer(tree), "numpy": lambda: numpy_two_pass(tree)}
    if n <= BP_MAX_VARIABLES:
        calls["pgmpy_bp"] = lambda: pgmpy_bp_peer(tree)
    for call in calls.values():  # warm-up (imports, rule registry, pgmpy's and numpy's first calls)
        call()
    times, results = alternating_medians(calls, repeats)
    compared = [name for name in calls if name != "ours"]
    quality = {f"{name}_vs_ours": differences(results[name], results["ours"]) for name in compared}
    pgmpy_bp_s = times.get("pgmpy_bp")
    return {
        "n": n, "K": K, "observed": len(tree["evidence"]), "ours_s": times["ours"], "ours_run_s": times["ours_run"],
        "peer": "pgmpy VariableElimination", "peer_s": times["pgmpy_ve"], "ratio": times["ours"] / times["pgmpy_ve"],
        "ratio_run_only": times["ours_run"] / times["pgmpy_ve"],
        "pgmpy_bp_s": pgmpy_bp_s, "ratio_pgmpy_bp": times["ours"] / pgmpy_bp_s if pgmpy_bp_s else None,
        "numpy_s": times["numpy"], "ratio_numpy": times["ours"] / times["numpy"],
        "log_evidence": results["ours"]["log_evidence"], "exact": bool(plan.exact),
        "agree": plan.exact and all(agrees(difference) for difference in quality.values()), "quality": quality,
    }


def slow_pgmpy_once(n: int, K: int) -> dict:
    """pgmpy's BeliefPropagation routes timed once each on one tree, against ours.

    The calibration takes minutes at n = 2000; the query per variable, quadratic with a larger constant, runs
    only up to n = :data:`BP_MAX_VARIABLES` (``None`` above it).
    """
    tree = random_tree(n, K)
    reference = ours(tree)
    routes = {"pgmpy_bp": pgmpy_bp_peer, "pgmpy_bp_query": pgmpy_bp_query_peer if n <= BP_MAX_VARIABLES else None}
    row = {"n": n, "K": K}
    for name, peer in routes.items():
        row[f"{name}_s"] = row[f"{name}_vs_ours"] = None
        if peer is not None:
            started = time.perf_counter()
            result = peer(tree)
            row[f"{name}_s"] = time.perf_counter() - started
            row[f"{name}_vs_ours"] = differences(result, reference)
    row["agree"] = all(agrees(row[f"{name}_vs_ours"]) for name, peer in routes.items() if peer is not None)
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 200 only")
    parser.add_argument("--variables", type=int, nargs="+", default=None, help="n (default 200 and 2000)")
    parser.add_argument("--states", type=int, nargs="+", default=[2, 8], help="K (default 2 and 8)")
    parser.add_argument("--repeats", type=int, default=None, help="timed repeats (default 5, quick 3)")
    parser.add_argument("--slow-pgmpy-once", action="store_true",
                        help="instead: time pgmpy's BeliefPropagation routes once each (calibrate; query per variable)")
    arguments = parser.parse_args(argv)
    sizes = arguments.variables or ([200] if arguments.quick else [200, 2000])
    if arguments.slow_pgmpy_once:
        rows = [slow_pgmpy_once(n, K) for n in sizes for K in arguments.states]
        print(json.dumps({"benchmark": "tree_bp_slow_pgmpy_once", "agree": all(row["agree"] for row in rows),
                          "rows": rows}))
        return 0 if all(row["agree"] for row in rows) else 1
    repeats = arguments.repeats or (3 if arguments.quick else 5)
    rows = []
    for n in sizes:
        for K in arguments.states:
            rows.append(compare(n, K, repeats))
            print(json.dumps(rows[-1]), flush=True)
    last = dict(rows[-1], benchmark="tree_bp", agree=all(row["agree"] for row in rows),
                params={"variables": sizes, "states": arguments.states, "observed_leaves": OBSERVED_LEAVES,
                        "repeats": repeats, "quick": arguments.quick,
                        "tolerance": {"marginals_abs": PROBABILITY_TOLERANCE, "log_evidence_rel": EVIDENCE_TOLERANCE},
                        "ratios": {f"n={row['n']},K={row['K']}": round(row["ratio"], 4) for row in rows},
                        "timing": "ours_s = build + compile + run + every hidden marginal + log p(e); ours_run_s = "
                                  "run + read on a compiled plan; peer_s (pgmpy_ve) = network + one "
                                  "VariableElimination query per hidden variable + one per observed leaf; "
                                  "pgmpy_bp_s = network + BeliefPropagation.calibrate + clique beliefs read "
                                  f"(n <= {BP_MAX_VARIABLES}); numpy_s = the two passes"})
    print(json.dumps(last))
    return 0 if last["agree"] else 1


if __name__ == "__main__":
    sys.exit(main())
