"""benchmarks/tree_bp.py: ours, the numpy passes and pgmpy against brute-force enumeration of a tiny tree, and,
where pgmpy is installed, the quick path at a small size agreeing and failing when the peer is off.
No wall-clock asserts."""
import itertools
import json

import numpy as np
import pytest
from scipy.special import logsumexp

from benchmarks import tree_bp


def tiny_tree(seed: int) -> dict:
    """n = 8, K = 3, two leaves observed: 3^8 = 6561 joint states to enumerate."""
    return tree_bp.random_tree(8, 3, observed=2, seed=seed)


def brute_force(tree: dict) -> dict:
    """p(x_i | e) for every hidden x_i and log p(e), by summing the joint over every state of every variable.

    log p(x) = log π[x_0] + Σ_i log A_i[x_i, x_parent(i)]; the evidence keeps the states that match it.
    """
    parent, prior, cpts, evidence = tree["parent"], tree["prior"], tree["cpts"], tree["evidence"]
    n, K = len(parent), len(prior)
    states = np.array(list(itertools.product(range(K), repeat=n)))  # (K^n, n)
    for i, state in evidence.items():
        states = states[states[:, i] == state]
    log_joint = np.log(prior[states[:, 0]])
    for i in range(1, n):
        log_joint = log_joint + np.log(cpts[i][states[:, i], states[:, parent[i]]])
    log_evidence = logsumexp(log_joint)
    weights = np.exp(log_joint - log_evidence)
    marginals = np.array([[weights[states[:, i] == k].sum() for k in range(K)] for i in tree_bp.hidden_variables(tree)])
    return {"marginals": marginals, "log_evidence": float(log_evidence)}


def assert_matches(result: dict, reference: dict) -> None:
    np.testing.assert_allclose(result["marginals"], reference["marginals"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(result["log_evidence"], reference["log_evidence"], rtol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ours_and_the_numpy_passes_match_enumeration_on_a_tiny_tree(seed):
    tree = tiny_tree(seed)
    assert len(tree["evidence"]) == 2 and all(tree["parent"][i] < i for i in range(1, 8))
    reference = brute_force(tree)
    assert_matches(tree_bp.ours(tree), reference)
    assert_matches(tree_bp.ours_run(tree_bp.compile_model(tree), tree), reference)
    assert_matches(tree_bp.numpy_two_pass(tree), reference)


@pytest.mark.parametrize("seed", [0, 1])
def test_every_pgmpy_route_matches_enumeration_on_a_tiny_tree(seed):
    pytest.importorskip("pgmpy")
    tree = tiny_tree(seed)
    reference = brute_force(tree)
    assert_matches(tree_bp.pgmpy_ve_peer(tree), reference)
    assert_matches(tree_bp.pgmpy_bp_peer(tree), reference)
    assert_matches(tree_bp.pgmpy_bp_query_peer(tree), reference)


def test_the_slow_pgmpy_routes_timed_once_agree_with_ours(capsys):
    pytest.importorskip("pgmpy")
    assert tree_bp.main(["--slow-pgmpy-once", "--variables", "20", "--states", "3"]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["benchmark"] == "tree_bp_slow_pgmpy_once" and line["agree"] is True
    row, = line["rows"]
    assert (row["n"], row["K"]) == (20, 3) and row["pgmpy_bp_s"] > 0.0 and row["pgmpy_bp_query_s"] > 0.0


def test_the_agreement_check_rejects_a_result_just_outside_the_tolerance():
    tree = tiny_tree(3)
    reference = tree_bp.numpy_two_pass(tree)
    assert tree_bp.agrees(tree_bp.differences(reference, reference))
    moved = {**reference, "marginals": reference["marginals"] + 2e-9}
    assert not tree_bp.agrees(tree_bp.differences(moved, reference))
    moved = {**reference, "log_evidence": reference["log_evidence"] * (1 + 2e-9)}
    assert not tree_bp.agrees(tree_bp.differences(moved, reference))


def test_the_quick_path_agrees_with_pgmpy_and_fails_when_it_is_off(monkeypatch, capsys):
    pytest.importorskip("pgmpy")
    arguments = ["--quick", "--variables", "40", "--states", "2", "3", "--repeats", "1"]
    assert tree_bp.main(arguments) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["benchmark"] == "tree_bp" and line["agree"] is True and (line["n"], line["K"]) == (40, 3)
    assert line["exact"] is True and line["ratio"] > 0.0 and line["peer_s"] > 0.0 and line["pgmpy_bp_s"] > 0.0
    assert set(line["quality"]) == {"ours_run_vs_ours", "pgmpy_ve_vs_ours", "numpy_vs_ours", "pgmpy_bp_vs_ours"}
    honest = tree_bp.pgmpy_ve_peer

    def one_marginal_off(tree):
        found = honest(tree)
        found["marginals"] = found["marginals"].copy()
        found["marginals"][5] = found["marginals"][5][::-1]
        return found

    monkeypatch.setattr(tree_bp, "pgmpy_ve_peer", one_marginal_off)
    assert tree_bp.main(arguments) == 1
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["agree"] is False
