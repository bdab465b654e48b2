"""The Markov-chain node with a MatrixDirichlet-random transition matrix under VMP: q(z_1..z_T) q(A).

Three references:

* the unrolled HMM of ``tests/models/test_dirichlet_hmm_vmp.py`` (a Categorical and T − 1 Transition
  nodes sharing the MatrixDirichlet matrix, structured ``[("out", "in"), ("matrix",)]``), the graph the
  compound node replaces;
* a variational Bayesian HMM written here in numpy (Beal 2003, ch. 3): scaled forward–backward with
  Ã = exp E[log A], q(A) = MatrixDirichlet(α₀ + Σ_t E[z_t z_{t−1}ᵀ]), and the free energy
  F = KL(q(A) ‖ p(A)) − log Z(Ã) (plus a correction term when q(z) was computed from an earlier q(A));
* the node's own contract: the free energy never increases, a fixed matrix keeps the fixed-matrix rule.

**Iterations, not only fixed points.** The compound node sends A one message with every step's counts,
so each sweep is Beal's batch update: the default schedule updates A first (its counts from the chain
posterior under the current q(A)), then the states. The unrolled graph updates its T − 1 matrix messages
one after the other, each seeing a q(A) already moved by those before, so its iterates differ from the
batch ones (its fixed point is the same). But in its first sweep q(A) is the initial value until every
matrix message exists, so one sweep of the unrolled graph started from q(A) does the batch step. The
per-iteration comparison therefore restarts the unrolled graph, for every iteration k, from the compound's
q(A) after iteration k − 1 and runs one sweep: states, matrix messages, states again (the order of the
compound's default sweep); its free energy, q(A) and marginals must be the compound's of iteration k.
"""
import numpy as np
import pytest
from scipy.special import digamma, gammaln

import fgraph as fg
from fgraph.nodes import Categorical, MatrixDirichlet, Mixture, Normal, Transition
from fgraph.nodes.markov_chain import MarkovChain

TOLERANCE = 1e-8


# ------------------------------------------------------------------ the numpy VB-HMM (Beal 2003)
def expected_log(alpha):
    """E[log A_ij] of independent Dirichlet columns: ψ(α_ij) − ψ(Σ_i' α_i'j)."""
    return digamma(alpha) - digamma(alpha.sum(axis=-2, keepdims=True))


def kl_matrix_dirichlet(alpha, alpha0):
    """KL(MatrixDirichlet(α) ‖ MatrixDirichlet(α₀)), summed over columns (and over any batch)."""
    def log_beta(a):
        return np.sum(gammaln(a), axis=-2) - gammaln(np.sum(a, axis=-2))
    return float(np.sum(log_beta(alpha0) - log_beta(alpha)) + np.sum((alpha - alpha0) * expected_log(alpha)))


def forward_backward(initial, matrix, likelihood):
    """Rabiner's scaled α–β recursion with any non-negative matrix (``matrix[i, j]``: from j to i).

    ``likelihood`` (T, K) is p(y_t | z_t = k). Returns log Z = log Σ_paths π Π matrix Π likelihood, the
    marginals (T, K) and the two-slice marginals ξ (T − 1, K, K), ``ξ[t − 1, i, j] = q(z_t = i, z_{t−1} = j)``.
    """
    steps, count = likelihood.shape
    alpha, scale = np.zeros((steps, count)), np.zeros(steps)
    beta = np.ones((steps, count))
    alpha[0] = initial * likelihood[0]
    scale[0] = alpha[0].sum()
    alpha[0] /= scale[0]
    for t in range(1, steps):
        alpha[t] = (matrix @ alpha[t - 1]) * likelihood[t]
        scale[t] = alpha[t].sum()
        alpha[t] /= scale[t]
    for t in range(steps - 2, -1, -1):
        beta[t] = matrix.T @ (likelihood[t + 1] * beta[t + 1]) / scale[t + 1]
    pairs = np.array([matrix * np.outer(likelihood[t] * beta[t], alpha[t - 1]) / scale[t] for t in range(1, steps)])
    return np.log(scale).sum(), alpha * beta, pairs.reshape(steps - 1, count, count)


def vb_hmm(initial, alpha0, emission, labels, iterations, states_first=False):
    """Beal's VB-HMM for the sequences ``labels`` (B, T) sharing one matrix (``alpha0`` (K, K)) or with one each
    (``alpha0`` (B, K, K)); the concentrations, marginals (B, T, K) and free energy after every iteration.

    An iteration takes the counts Σ_t ξ_t of the chain posteriors under Ã = exp E[log A] of the current q(A)
    and sets q(A) = MatrixDirichlet(α₀ + counts). ``states_first=False`` (the node's default sweep): q(z) is
    then recomputed under the new q(A), and F = KL(q(A) ‖ p(A)) − Σ_b log Z_b(Ã). ``states_first=True`` (a
    sweep that updates A last): q(z) stays the posterior under the previous Ã', and F adds the change of the
    energy, Σ_t ξ_t · (log Ã' − E[log A]) (F of that q(z) with the new q(A)).
    """
    alpha = np.array(alpha0, dtype=float)  # q(A) starts at the prior, as init={'A': prior} does
    shared = np.ndim(alpha0) == 2
    history = []
    for _ in range(iterations):
        matrices = np.broadcast_to(np.exp(expected_log(alpha)), (len(labels),) + emission.shape[1:] * 2)
        passes = [forward_backward(initial, matrices[b], emission[sequence]) for b, sequence in enumerate(labels)]
        counts = np.array([pairs.sum(axis=0) for _, _, pairs in passes])
        alpha = alpha0 + (counts.sum(axis=0) if shared else counts)
        if states_first:
            new_log = np.broadcast_to(expected_log(alpha), matrices.shape)
            change = sum(np.sum(counts[b] * (np.log(matrices[b]) - new_log[b])) for b in range(len(labels)))
            free_energy = kl_matrix_dirichlet(alpha, alpha0) - sum(p[0] for p in passes) + change
            marginals = np.array([p[1] for p in passes])
        else:
            matrices = np.broadcast_to(np.exp(expected_log(alpha)), matrices.shape)
            passes = [forward_backward(initial, matrices[b], emission[sequence]) for b, sequence in enumerate(labels)]
            free_energy = kl_matrix_dirichlet(alpha, alpha0) - sum(p[0] for p in passes)
            marginals = np.array([p[1] for p in passes])
        history.append((alpha.copy(), marginals, free_energy))
    return history


# ------------------------------------------------------------------ models
def random_case(seed, count=3, symbols=3, steps=12, chains=None):
    rng = np.random.default_rng(seed)
    initial = rng.dirichlet(np.ones(count))
    emission = rng.dirichlet(np.ones(symbols), count).T  # P(label | state), columns sum to one
    alpha0 = rng.uniform(0.5, 2.0, (count, count))
    labels = rng.integers(0, symbols, (chains or 1, steps))
    return initial, alpha0, emission, labels


def compound(initial, alpha0, emission, labels, batched=True):
    """The chain node: one chain (``batched=False``: batch (T,)) or a batch (B, T); α₀ (K, K) shared or
    (B, 1, K, K) one matrix per chain."""
    with fg.Model() as model:
        matrix = MatrixDirichlet("A", alpha0)
        shape = labels.shape if batched else labels.shape[-1:]
        z = MarkovChain("z", initial, matrix, shape[-1], batch_shape=shape[:-1])
        Transition("y", z, emission, observed=labels.reshape(shape))
    return model


def unrolled(initial, alpha0, emission, labels):
    """B unrolled chains (Categorical + Transition nodes) sharing the MatrixDirichlet matrix, structured VMP."""
    with fg.Model() as model:
        matrix = MatrixDirichlet("A", alpha0)
        for b, sequence in enumerate(labels):
            state = Categorical(f"s{b}_0", initial)
            for t, label in enumerate(sequence):
                if t > 0:
                    state = Transition(f"s{b}_{t}", state, matrix)
                Transition(f"y{b}_{t}", state, emission, observed=label)
    steps = labels.shape[1]
    constraints = {"factorization": {f"s{b}_{t}": [("out", "in"), ("matrix",)]
                                     for b in range(len(labels)) for t in range(1, steps)}}
    return model, constraints


def one_batch_step(labels, states_last=True):
    """The unrolled graph's schedule of one batch step: the priors and emissions, the chains' forward and
    backward messages, every matrix message, and (``states_last``) the chains again under the new q(A)."""
    chains, steps = labels.shape
    constants = [("A", "out")] + [(f"s{b}_0", "out") for b in range(chains)] + [
        (f"y{b}_{t}", "in") for b in range(chains) for t in range(steps)]
    states = [(f"s{b}_{t}", "out") for b in range(chains) for t in range(1, steps)] + [
        (f"s{b}_{t}", "in") for b in range(chains) for t in range(steps - 1, 0, -1)]
    matrix = [(f"s{b}_{t}", "matrix") for b in range(chains) for t in range(1, steps)]
    return constants + states + matrix + (states if states_last else [])


def unrolled_marginals(result, labels):
    chains, steps = labels.shape
    return np.array([[result.marginal(f"s{b}_{t}").probabilities for t in range(steps)] for b in range(chains)])


def run_compound(model, alpha0, iterations, schedule=None):
    """The run and (q(A) concentrations, q(z) probabilities) after every iteration."""
    states = []
    result = fg.infer(model, algorithm="vmp", init={"A": fg.MatrixDirichlet(alpha0)}, iterations=iterations,
                      schedule=schedule, callback=lambda iteration, r: states.append(
                          (r.marginal("A").alpha.copy(), r.marginal("z").probabilities.copy())))
    return result, states


A_LAST = [("A", "out"), ("y", "in"), ("z", "out"), ("z", "pairs"), ("z", "transition")]


# ------------------------------------------------------------------ (1) the unrolled graph
@pytest.mark.parametrize("schedule", [None, A_LAST], ids=["default", "matrix-last"])
def test_every_iteration_is_one_batch_step_of_the_unrolled_graph(schedule):
    """Iteration k of the compound node from q(A)_{k−1} = one sweep of the unrolled graph from q(A)_{k−1}:
    free energy, q(A) and every q(z_t) to 1e-8 (see the module docstring). With the matrix updated last
    (``A_LAST``) the chain's q(z) was computed under the previous q(A): its free-energy term then needs the
    structured correction, and the unrolled sweep ends without its second pass over the states."""
    initial, alpha0, emission, labels = random_case(0)
    result, states = run_compound(compound(initial, alpha0, emission, labels, batched=False), alpha0, 6, schedule)
    model, constraints = unrolled(initial, alpha0, emission, labels)
    previous = alpha0
    for k in range(6):
        step = fg.infer(model, algorithm="vmp", constraints=constraints, init={"A": fg.MatrixDirichlet(previous)},
                        iterations=1, schedule=one_batch_step(labels, states_last=schedule is None))
        np.testing.assert_allclose(result.free_energy[k], step.free_energy[-1], rtol=0, atol=TOLERANCE)
        np.testing.assert_allclose(states[k][0], step.marginal("A").alpha, rtol=0, atol=TOLERANCE)
        np.testing.assert_allclose(states[k][1], unrolled_marginals(step, labels)[0], rtol=0, atol=TOLERANCE)
        previous = states[k][0]
    assert not np.allclose(states[0][0], states[-1][0])  # q(A) did move


def test_the_fixed_point_is_the_unrolled_graphs():
    """Both with their default schedules, to convergence: q(A), every q(z_t) and F to 1e-8."""
    initial, alpha0, emission, labels = random_case(1, steps=10)
    a, _ = run_compound(compound(initial, alpha0, emission, labels, batched=False), alpha0, 120)
    model, constraints = unrolled(initial, alpha0, emission, labels)
    b = fg.infer(model, algorithm="vmp", constraints=constraints, init={"A": fg.MatrixDirichlet(alpha0)},
                 iterations=120)
    np.testing.assert_allclose(a.marginal("A").alpha, b.marginal("A").alpha, rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(a.marginal("z").probabilities, unrolled_marginals(b, labels)[0], rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(a.free_energy[-1], b.free_energy[-1], rtol=0, atol=TOLERANCE)
    assert a.free_energy[0] - a.free_energy[-1] > 1e-3  # the run did learn


# ------------------------------------------------------------------ (2) the numpy VB-HMM
@pytest.mark.parametrize("seed, count, steps", [(2, 2, 6), (3, 3, 40), (4, 4, 25)])
def test_every_iteration_is_the_numpy_vb_hmm(seed, count, steps):
    initial, alpha0, emission, labels = random_case(seed, count=count, symbols=3, steps=steps)
    result, states = run_compound(compound(initial, alpha0, emission, labels, batched=False), alpha0, 15)
    reference = vb_hmm(initial, alpha0, emission, labels, 15)
    for k, (alpha, marginals, free_energy) in enumerate(reference):
        np.testing.assert_allclose(states[k][0], alpha, rtol=0, atol=TOLERANCE)
        np.testing.assert_allclose(states[k][1], marginals[0], rtol=0, atol=TOLERANCE)
        np.testing.assert_allclose(result.free_energy[k], free_energy, rtol=0, atol=TOLERANCE)


def test_with_the_matrix_updated_last_every_iteration_is_the_numpy_vb_hmm():
    """q(z) under the previous q(A), and F with the energy's change: the structured free-energy correction."""
    initial, alpha0, emission, labels = random_case(5)
    result, states = run_compound(compound(initial, alpha0, emission, labels, batched=False), alpha0, 8, A_LAST)
    for k, (alpha, marginals, free_energy) in enumerate(vb_hmm(initial, alpha0, emission, labels, 8,
                                                               states_first=True)):
        np.testing.assert_allclose(states[k][0], alpha, rtol=0, atol=TOLERANCE)
        np.testing.assert_allclose(states[k][1], marginals[0], rtol=0, atol=TOLERANCE)
        np.testing.assert_allclose(result.free_energy[k], free_energy, rtol=0, atol=TOLERANCE)


def test_a_long_chain_is_the_numpy_vb_hmm():
    """T = 3000: the scan over normalised matrices, no underflow of the sub-stochastic products."""
    initial, alpha0, emission, labels = random_case(6, count=3, steps=3000)
    result, states = run_compound(compound(initial, alpha0, emission, labels, batched=False), alpha0, 3)
    alpha, marginals, free_energy = vb_hmm(initial, alpha0, emission, labels, 3)[-1]
    np.testing.assert_allclose(states[-1][0], alpha, rtol=1e-10)
    np.testing.assert_allclose(states[-1][1], marginals[0], rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(result.free_energy[-1], free_energy, rtol=1e-11)


# ------------------------------------------------------------------ (3) monotone
@pytest.mark.parametrize("schedule", [None, A_LAST], ids=["default", "matrix-last"])
@pytest.mark.parametrize("seed", [7, 8])
def test_the_free_energy_never_increases(seed, schedule):
    initial, alpha0, emission, labels = random_case(seed, steps=30, chains=2)
    result = fg.infer(compound(initial, alpha0, emission, labels), algorithm="vmp",
                      init={"A": fg.MatrixDirichlet(alpha0)}, iterations=40, schedule=schedule)
    free_energy = np.array(result.free_energy)
    assert np.all(np.diff(free_energy) <= 1e-10 * np.abs(free_energy[1:])), np.diff(free_energy)
    assert free_energy[0] - free_energy[-1] > 1e-3


def test_mixture_emissions_learn_the_matrix_with_a_monotone_free_energy():
    """States emitting through a mixture node (variational switch, exact sub-models), as in a voice-activity
    model: the learnt matrix favours staying, as the data were made, and F never increases."""
    rng = np.random.default_rng(9)
    path = np.zeros(200, dtype=int)
    for t in range(1, 200):
        path[t] = path[t - 1] if rng.random() < 0.95 else 1 - path[t - 1]
    y = rng.normal(0.0, np.where(path == 0, 0.7, 3.0))
    alpha0 = np.ones((2, 2))
    with fg.Model() as model:
        matrix = MatrixDirichlet("A", alpha0)
        z = MarkovChain("z", [0.5, 0.5], matrix, len(y))
        inputs = [Normal(f"state{k}", mean=0.0, var=var, batch_shape=(len(y),)) for k, var in enumerate((0.5, 9.0))]
        Mixture("y", z, inputs, observed=y)
    result = fg.infer(model, algorithm="vmp", init={"A": fg.MatrixDirichlet(alpha0)}, iterations=30,
                      constraints={"factorization": {"state0": "bp", "state1": "bp"}})
    free_energy = np.array(result.free_energy)
    assert np.all(np.diff(free_energy) <= 1e-10 * np.abs(free_energy[1:])), np.diff(free_energy)
    assert np.all(np.diag(result.marginal("A").mean) > 0.85)
    assert np.mean(np.argmax(result.marginal("z").probabilities, axis=-1) == path) > 0.8


# ------------------------------------------------------------------ (4) batches of chains
def test_a_batch_sharing_the_matrix_is_the_unrolled_batch():
    """Three chains (batch (3, T)) sharing A: the counts of all chains add in q(A); per iteration against one
    sweep of the three unrolled chains, and against the numpy VB-HMM."""
    initial, alpha0, emission, labels = random_case(10, steps=8, chains=3)
    result, states = run_compound(compound(initial, alpha0, emission, labels), alpha0, 5)
    model, constraints = unrolled(initial, alpha0, emission, labels)
    previous = alpha0
    for k, (alpha, marginals, free_energy) in enumerate(vb_hmm(initial, alpha0, emission, labels, 5)):
        step = fg.infer(model, algorithm="vmp", constraints=constraints, init={"A": fg.MatrixDirichlet(previous)},
                        iterations=1, schedule=one_batch_step(labels))
        for expected_alpha, expected_marginals, expected_f in ((step.marginal("A").alpha,
                                                                unrolled_marginals(step, labels),
                                                                step.free_energy[-1]),
                                                               (alpha, marginals, free_energy)):
            np.testing.assert_allclose(states[k][0], expected_alpha, rtol=0, atol=TOLERANCE)
            np.testing.assert_allclose(states[k][1], expected_marginals, rtol=0, atol=TOLERANCE)
            np.testing.assert_allclose(result.free_energy[k], expected_f, rtol=0, atol=TOLERANCE)
        previous = states[k][0]


def test_a_batch_with_a_matrix_per_chain_is_separate_chains():
    """A of batch (B, 1): one q(A) per chain, each that of the chain run alone (and of the numpy VB-HMM)."""
    initial, alpha0, emission, labels = random_case(11, steps=9, chains=3)
    per_chain = np.stack([alpha0, alpha0 + 0.5, 2.0 * alpha0])[:, None]  # (3, 1, K, K)
    result = fg.infer(compound(initial, per_chain, emission, labels), algorithm="vmp",
                      init={"A": fg.MatrixDirichlet(per_chain)}, iterations=10)
    assert result.marginal("A").alpha.shape == (3, 1, 3, 3)
    reference = vb_hmm(initial, per_chain[:, 0], emission, labels, 10)[-1]
    np.testing.assert_allclose(result.marginal("A").alpha[:, 0], reference[0], rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(result.marginal("z").probabilities, reference[1], rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(result.free_energy[-1], reference[2], rtol=0, atol=TOLERANCE)
    for b in range(3):
        alone = fg.infer(compound(initial, per_chain[b, 0], emission, labels[b:b + 1], batched=False),
                         algorithm="vmp", init={"A": fg.MatrixDirichlet(per_chain[b, 0])}, iterations=10)
        np.testing.assert_allclose(result.marginal("A").alpha[b, 0], alone.marginal("A").alpha, rtol=0, atol=TOLERANCE)


def test_copies_of_the_model_learn_one_matrix_each():
    """``fg.Model(copies=R)`` with a data set per copy: each copy's q(A), q(z) and F are those of its model alone."""
    initial, alpha0, emission, labels = random_case(16, count=2, symbols=2, steps=7, chains=6)
    labels = labels.reshape(3, 2, 7)  # 3 copies of 2 chains
    with fg.Model(copies=3) as model:
        z = MarkovChain("z", initial, MatrixDirichlet("A", alpha0), 7, batch_shape=(2,))
        Transition("y", z, emission, observed=fg.per_copy(labels))
    together = fg.infer(model, algorithm="vmp", init={"A": fg.MatrixDirichlet(alpha0)}, iterations=10)
    for copy in range(3):
        alone = fg.infer(compound(initial, alpha0, emission, labels[copy]), algorithm="vmp",
                         init={"A": fg.MatrixDirichlet(alpha0)}, iterations=10)
        np.testing.assert_allclose(together.marginal("A").alpha[copy], alone.marginal("A").alpha, rtol=1e-12)
        np.testing.assert_allclose(together.marginal("z").probabilities[copy], alone.marginal("z").probabilities,
                                   rtol=0, atol=1e-12)
        np.testing.assert_allclose(together.free_energy[-1][copy], alone.free_energy[-1], rtol=1e-12)


# ------------------------------------------------------------------ (5) a fixed matrix is unchanged
def test_a_fixed_matrix_keeps_the_fixed_matrix_rule_and_a_variable_the_structured_ones():
    initial, alpha0, emission, labels = random_case(12, steps=5)
    with fg.Model() as fixed:
        z = MarkovChain("z", initial, alpha0 / alpha0.sum(axis=0), 5)
        Transition("y", z, emission, observed=labels[0])
    assert fixed.nodes[0].interfaces == ("out",) and "z_pairs" not in fixed.variables
    for algorithm in ("bp", "vmp"):
        rules = {(step.node.name, step.interface): step.rules[-1].name
                 for step in fg.compile(fixed, algorithm=algorithm).schedule}
        assert rules[("z", "out")] == "fgraph.rules.markov_chain.out.forward_backward"
    random = compound(initial, alpha0, emission, labels, batched=False)
    rules = {(step.node.name, step.interface): step.rules[-1].name
             for step in fg.compile(random, algorithm="vmp", init={"A": fg.MatrixDirichlet(alpha0)}).schedule}
    assert rules[("z", "out")] == "fgraph.rules.markov_chain.structured.structured"
    assert rules[("z", "pairs")] == "fgraph.rules.markov_chain.structured.two_slices"
    assert rules[("z", "transition")] == "fgraph.rules.markov_chain.transition.structured"


def test_the_pairs_are_the_two_slice_marginals():
    """``z_pairs`` holds q(z_t, z_{t−1}) (element 0: diag q(z_1)); their margins are the states' marginals."""
    initial, alpha0, emission, labels = random_case(13, steps=7)
    result = fg.infer(compound(initial, alpha0, emission, labels, batched=False), algorithm="vmp",
                      init={"A": fg.MatrixDirichlet(alpha0)}, iterations=5)
    pairs = result.marginal("z_pairs").probabilities
    states = result.marginal("z").probabilities
    _, _, expected = forward_backward(initial, np.exp(expected_log(result.marginal("A").alpha)),
                                              emission[labels[0]])
    np.testing.assert_allclose(pairs[1:], expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(pairs[0], np.diag(states[0]), rtol=0, atol=1e-12)
    np.testing.assert_allclose(pairs.sum(axis=-1), states, rtol=0, atol=1e-12)  # over z_{t−1}
    np.testing.assert_allclose(pairs[1:].sum(axis=-2), states[:-1], rtol=0, atol=1e-12)  # over z_t


def test_a_known_matrix_given_as_data_equals_the_fixed_matrix():
    """A transition that is observed data (``fg.Data``) is a known matrix: exact under BP, equal to the
    attribute version (evidence and marginals), and re-bindable."""
    initial, alpha0, emission, labels = random_case(14, steps=9)
    known = alpha0 / alpha0.sum(axis=0)
    with fg.Model() as model:
        matrix = fg.Data("A", known, event_ndim=2)
        z = MarkovChain("z", initial, matrix, 9)
        Transition("y", z, emission, observed=labels[0])
    with fg.Model() as reference:
        z = MarkovChain("z", initial, known, 9)
        Transition("y", z, emission, observed=labels[0])
    a, b = fg.infer(model), fg.infer(reference)
    assert a.log_evidence == pytest.approx(b.log_evidence, rel=1e-12)
    np.testing.assert_allclose(a.marginal("z").probabilities, b.marginal("z").probabilities, rtol=0, atol=1e-12)
    # every step of both beliefs of the chain holds the evidence of the whole model
    for name in ("z", "z_pairs"):
        np.testing.assert_allclose(a.evidence_per_variable()[name], b.log_evidence, rtol=1e-12)
    other = np.full((3, 3), 1.0 / 3.0)
    with fg.Model() as uniform:
        z = MarkovChain("z", initial, other, 9)
        Transition("y", z, emission, observed=labels[0])
    assert fg.infer(model, data={"A": other}).log_evidence == pytest.approx(fg.infer(uniform).log_evidence, rel=1e-12)


# ------------------------------------------------------------------ errors
def test_sum_product_with_a_random_matrix_is_refused_when_compiling():
    initial, alpha0, emission, labels = random_case(15, steps=4)
    model = compound(initial, alpha0, emission, labels, batched=False)
    with pytest.raises(fg.ModelError, match=r"no sum-product \(algorithm='bp'\) rules.*Use algorithm='vmp'"):
        fg.compile(model, algorithm="bp", init={"A": fg.MatrixDirichlet(alpha0)})
    with pytest.raises(fg.ModelError, match="Use algorithm='vmp'"):  # the chain alone under "bp" in a VMP run
        fg.compile(model, algorithm="vmp", init={"A": fg.MatrixDirichlet(alpha0)},
                   constraints={"factorization": {"z": "bp"}})


@pytest.mark.parametrize("alpha, arguments, match", [
    (np.ones((2, 2)), {"initial": [0.5, 0.5], "causal": True},
     "causal chain .* random transition matrix is not supported"),
    (np.ones((2, 2)), {"initial": [0.2, 0.3, 0.5]}, r"must have event shape \(3, 3\)"),
    (np.ones((4, 2, 2)), {"initial": [0.5, 0.5], "batch_shape": (4,)},
     r"batch shape \(4,\).*one per chain batch \(4, 1\)"),
])
def test_unsupported_uses_are_reported(alpha, arguments, match):
    with fg.Model() as model:
        matrix = MatrixDirichlet("A", alpha)
        with pytest.raises(fg.ModelError, match=match):
            MarkovChain("z", transition=matrix, length=4, **arguments)
    assert set(model.variables) == {"A"}


def test_a_failed_chain_leaves_no_pairs_variable():
    with fg.Model() as model:
        matrix = MatrixDirichlet("A", np.ones((2, 2)))
        with pytest.raises(fg.ModelError, match="initial must be a probability vector"):
            MarkovChain("z", [0.5, 0.6], matrix, 4)
    assert set(model.variables) == {"A"}
