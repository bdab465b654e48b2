"""The conditional mixture network built by fgraph.models.cmn: restarts as copies of one graph, against the
graph run alone per restart and against the CMN reference per restart and iteration; the free energy never
rises on pinwheels and breast cancer; bad input is named."""
import numpy as np
import pytest

from fgraph.datasets import load_dataset, make_pinwheels
from fgraph.errors import DataError, ModelError
from fgraph.models.cmn import CMNPriors, build_cmn, cmn_schedule, fit_cmn, initial_state
from fgraph.testing.cmn_reference import STATE_KEYS, CMNReference, Priors

R = 3


def small_problem(seed=11, N=30, d=2, L=3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(N, d)), rng.integers(L, size=N)


@pytest.mark.parametrize("initial", ["prior-mean", "draws"])
def test_the_initial_state_is_the_references(initial):
    """initial_state(seed) holds the reference's initial_state(R, seed): the parameter posteriors per restart and
    the local factors the first sweep reads (q(x1) as the mixture of the experts' predictions, q(z) uniform)."""
    x, labels = small_problem()
    K = 4
    network = build_cmn(x, labels, K, n_restarts=R)
    init = initial_state(network, seed=3, initial=initial)
    start = CMNReference(x, labels, n_experts=K).initial_state(R, seed=3, initial=initial)
    for j in range(K - 1):
        np.testing.assert_array_equal(init[f"beta0_{j}"].mean, start["gate_mean"][:, j])
        np.testing.assert_array_equal(init[f"beta0_{j}"].cov, start["gate_cov"][:, j])
    np.testing.assert_array_equal(init["beta1_1"].mean, start["out_mean"][:, 1])
    np.testing.assert_array_equal(init["theta"].matrix_mean[:, :, 0], start["M"])
    np.testing.assert_allclose(init["theta"].mean_precision[:, :, 0], start["a"][..., None] / start["b"])
    np.testing.assert_allclose(np.stack([c.mean for c in init["x1"].components], axis=2), start["x1_mean"],
                               rtol=1e-14)
    np.testing.assert_allclose(np.broadcast_to(init["x1"].components[2].cov, start["x1_cov"][:, :, 2].shape),
                               start["x1_cov"][:, :, 2])
    np.testing.assert_allclose(init["x1"].weights, start["gamma"])


def test_every_restart_equals_the_graph_run_alone():
    """R = 3 copies: each restart's free energy per iteration and posteriors equal those of the graph built for
    one restart and run from that restart's initial state."""
    x, labels = small_problem()
    K, iterations = 3, 5
    network = build_cmn(x, labels, K, n_restarts=R)
    init = initial_state(network, seed=5, initial="draws")  # every coefficient drawn: restarts far apart
    batched = fit_cmn(network, iterations=iterations, init=init)
    assert batched.elbo.shape == (iterations, R)
    together = batched.posteriors()
    alone_network = build_cmn(x, labels, K, n_restarts=1)
    for r in range(R):
        alone_init = {name: start[r:r + 1] for name, start in init.items()}
        alone = fit_cmn(alone_network, iterations=iterations, init=alone_init)
        np.testing.assert_allclose(batched.elbo[:, r], alone.elbo[:, 0], rtol=1e-10)
        single = alone.posteriors()
        for key in STATE_KEYS:
            np.testing.assert_allclose(together[key][r], single[key][0], rtol=1e-9, atol=1e-12, err_msg=key)
    # the restarts differ: the test compares distinct fits
    assert np.ptp(batched.elbo[-1]) > 1.0
    assert batched.elbo[-1, batched.best_restart] == batched.elbo[-1].max()
    best = batched.result.copy(batched.best_restart)  # an in-process fit keeps the engine's result
    np.testing.assert_allclose(best.marginal("theta").matrix_mean[:, 0], together["M"][batched.best_restart])


def test_the_batched_graph_equals_the_reference_per_restart_and_iteration():
    """From the same initial state (initial_state(seed) is the reference's, test above) the graph's ELBO after every
    sweep is the reference's after every iteration, per restart, and so are the posteriors at the end."""
    x, labels = small_problem(seed=2, N=40, d=3, L=3)
    K, iterations = 4, 8
    network = build_cmn(x, labels, K, n_restarts=R)
    fit = fit_cmn(network, iterations=iterations, seed=7)
    cmn = CMNReference(x, labels, n_experts=K)
    state = cmn.initial_state(R, seed=7)
    elbos = []
    for _ in range(iterations):
        state = cmn.iterate_joint_e_step(state)
        elbos.append(cmn.elbo(state))
    np.testing.assert_allclose(fit.elbo, np.array(elbos), rtol=1e-9)
    final = fit.posteriors()
    for key in STATE_KEYS:
        np.testing.assert_allclose(final[key], state[key], rtol=1e-8, atol=1e-10, err_msg=key)


def test_the_batched_graph_equals_the_reference_on_breast_cancer():
    """The same on 60 points of breast cancer (d = 30, binary: h = 1), 6 experts, 3 restarts."""
    data = load_dataset("breast_cancer")
    rows = np.random.default_rng(1).choice(len(data.y), size=60, replace=False)
    x, labels = zscored(data.X)[rows], data.y[rows]
    fit = fit_cmn(build_cmn(x, labels, 6, n_restarts=R), iterations=5, seed=4)
    cmn = CMNReference(x, labels, n_experts=6)
    state = cmn.initial_state(R, seed=4)
    for t in range(5):
        state = cmn.iterate_joint_e_step(state)
        np.testing.assert_allclose(fit.elbo[t], cmn.elbo(state), rtol=1e-9)
    final = fit.posteriors()
    for key in STATE_KEYS:
        np.testing.assert_allclose(final[key], state[key], rtol=1e-8, atol=1e-10, err_msg=key)


def test_the_priors_reach_the_graph():
    """Other priors — eq. (4)'s zero means among them — give the reference's ELBO under the same priors (a prior
    dropped or swapped would not)."""
    x, labels = small_problem(seed=4, N=25, d=2, L=2)
    priors = CMNPriors(v0=3.0, a0=1.5, b0=0.5, sigma0=2.0, sigma1=0.7, stick_bias=False)
    network = build_cmn(x, labels, 3, n_restarts=2, priors=priors)
    fit = fit_cmn(network, iterations=3, seed=1)
    cmn = CMNReference(x, labels, n_experts=3, priors=Priors(3.0, 1.5, 0.5, 2.0, 0.7, stick_bias=False))
    state = cmn.initial_state(2, seed=1)
    for t in range(3):
        state = cmn.iterate_joint_e_step(state)
        np.testing.assert_allclose(fit.elbo[t], cmn.elbo(state), rtol=1e-9)


def zscored(x):
    return (x - x.mean(0)) / x.std(0)


def assert_never_decreasing(elbo):
    rises = np.diff(elbo, axis=0)
    assert np.all(rises >= -1e-9 * np.abs(elbo[1:])), rises.min()


def test_the_elbo_never_decreases_on_pinwheels():
    x, labels = make_pinwheels(n=100, random_state=0)
    fit = fit_cmn(build_cmn(zscored(x), labels, n_experts=10, n_restarts=3), iterations=12, seed=0)
    assert_never_decreasing(fit.elbo)
    assert np.all(fit.elbo[-1] - fit.elbo[0] > 10.0)  # it learns


def test_the_elbo_never_decreases_on_breast_cancer():
    data = load_dataset("breast_cancer")
    rows = np.random.default_rng(0).choice(len(data.y), size=120, replace=False)
    fit = fit_cmn(build_cmn(zscored(data.X)[rows], data.y[rows], n_experts=5, n_restarts=4), iterations=25,
                  seed=0)
    assert_never_decreasing(fit.elbo)
    assert np.all(fit.elbo[-1] - fit.elbo[0] > 10.0)


def test_several_e_step_passes_equal_the_reference():
    """e_step_passes = 3: the E-step (c1, q(x1 | z) q(z)) three times per sweep, then the M-step, as the
    reference's local iterations; K = 1 repeats its E-step too."""
    x, labels = small_problem(seed=2, N=40, d=3, L=3)
    K, iterations, passes = 4, 4, 3
    fit = fit_cmn(build_cmn(x, labels, K, n_restarts=R), iterations=iterations, seed=7, e_step_passes=passes)
    single = fit_cmn(build_cmn(x, labels, K, n_restarts=R), iterations=iterations, seed=7)
    cmn = CMNReference(x, labels, n_experts=K)
    state = cmn.initial_state(R, seed=7)
    for t in range(iterations):
        state = cmn.iterate_joint_e_step(state, e_step_passes=passes)
        np.testing.assert_allclose(fit.elbo[t], cmn.elbo(state), rtol=1e-9)
    assert np.max(np.abs(fit.elbo - single.elbo)) > 1e-3  # the passes change the fit
    for key in STATE_KEYS:
        np.testing.assert_allclose(fit.posteriors()[key], state[key], rtol=1e-8, atol=1e-10, err_msg=key)
    assert cmn_schedule(1, 2, e_step_passes=2).count(("x1", "out")) == 2
    with pytest.raises(ModelError, match="e_step_passes must be an integer >= 1"):
        cmn_schedule(K, 3, e_step_passes=0)


def test_restarts_in_worker_processes_equal_one_process():
    """n_jobs = 2: the restarts in two blocks, each a graph of its own in a worker process, from the initial
    states of one fit of all of them: the same ELBO per restart and iteration, the same posteriors."""
    x, labels = small_problem(seed=2, N=40, d=3, L=3)
    network = build_cmn(x, labels, 4, n_restarts=R)
    alone = fit_cmn(network, iterations=6, seed=7)
    workers = fit_cmn(network, iterations=6, seed=7, n_jobs=2)
    assert workers.result is None and workers.iterations == 6 and not workers.converged
    np.testing.assert_allclose(workers.elbo, alone.elbo, rtol=1e-10)
    for key in STATE_KEYS:
        np.testing.assert_allclose(workers.posteriors()[key], alone.posteriors()[key], rtol=1e-9, atol=1e-12,
                                   err_msg=key)
    # with tol, a block stops on its own restarts; its last ELBO is repeated to the slowest block's end
    stopped = fit_cmn(network, iterations=500, tol=1e-3, seed=7, n_jobs=2)
    assert stopped.converged and stopped.elbo.shape == (stopped.iterations, R)
    assert np.max(np.abs(stopped.elbo[-1] - stopped.elbo[-2])) < 1e-3


@pytest.mark.parametrize("n_jobs", [0, -2, 1.5, True])
def test_bad_n_jobs_and_init_with_workers_are_named(n_jobs):
    x, labels = small_problem()
    network = build_cmn(x, labels, 2, n_restarts=2)
    with pytest.raises(ModelError, match="n_jobs must be None, -1 or an integer >= 1"):
        fit_cmn(network, iterations=1, n_jobs=n_jobs)
    with pytest.raises(ModelError, match="pass seed instead of init"):
        fit_cmn(network, iterations=1, n_jobs=2, init=initial_state(network, seed=0))


def test_tol_stops_once_every_restart_has_converged():
    x, labels = small_problem()
    fit = fit_cmn(build_cmn(x, labels, 3, n_restarts=2), iterations=500, tol=1e-3, seed=0)
    assert fit.converged and fit.iterations < 500
    assert np.max(np.abs(fit.elbo[-1] - fit.elbo[-2])) < 1e-3


def test_one_expert_has_no_gate():
    """K = 1: no gate, a known switch; q(A, Λ) is updated first (cmn_schedule says why), then q(x1) and q(β1);
    the graph still equals the reference in that order."""
    x, labels = small_problem(seed=8, N=20, d=2, L=2)
    network = build_cmn(x, labels, 1, n_restarts=2)
    assert cmn_schedule(1, 2)[:2] == [("theta", "out"), ("x1", "parameters")]
    fit = fit_cmn(network, iterations=4, seed=2)
    cmn = CMNReference(x, labels, n_experts=1)
    state = cmn.initial_state(2, seed=2)
    for t in range(4):
        state = cmn.update_experts(state)
        state = cmn.update_x1(state, cmn.optimal_c1(state))
        state = cmn.update_out(state, cmn.optimal_c1(state))
        np.testing.assert_allclose(fit.elbo[t], cmn.elbo(state), rtol=1e-9)
    np.testing.assert_allclose(fit.posteriors()["M"], state["M"], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("change, error, words", [
    (dict(y=np.array([0, 1, 3] * 10)), DataError, "CMN: labels must lie in 0..2"),
    (dict(y=np.array([0, 1, -1] * 10)), DataError, "CMN: labels must lie"),
    (dict(y=np.zeros(30, dtype=int)), DataError, "single class"),
    (dict(y=np.array([0.5, 1.0, 0.0] * 10)), DataError, "integer labels"),
    (dict(x0=np.where(np.arange(60).reshape(30, 2) == 7, np.nan, 1.0)), DataError, "NaN"),
    (dict(x0=np.ones(30)), DataError, "shape (N, d)"),
    (dict(n_experts=0), ModelError, "n_experts must be an integer >= 1"),
    (dict(n_experts=2.5), ModelError, "n_experts"),
    (dict(n_restarts=0), ModelError, "n_restarts"),
    (dict(latent_dim=0), ModelError, "latent_dim"),
])
def test_bad_input_gives_a_named_error(change, error, words):
    x, labels = small_problem()
    arguments = dict(x0=x, y=labels, n_experts=3, n_classes=3)
    arguments.update(change)
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")):
        build_cmn(**arguments)


def test_bad_priors_and_iterations_are_named():
    with pytest.raises(ModelError, match="sigma1 must be a positive"):
        CMNPriors(sigma1=-1.0)
    x, labels = small_problem()
    with pytest.raises(ModelError, match="iterations"):
        fit_cmn(build_cmn(x, labels, 2), iterations=0)


def test_the_products_with_the_rows_outer_products_equal_the_row_by_row_ones(monkeypatch):
    """Quadratic forms and plate sums of the known inputs by one matrix product per stick, expert and copy (the
    rows' outer products, kept) give the fit of the row-by-row products used beyond ``ROW_OUTER_BUDGET``."""
    import fgraph.families.linalg
    x, labels = small_problem(seed=6, N=30, d=3, L=3)
    network = build_cmn(x, labels, 4, n_restarts=2)
    init = initial_state(network, seed=2)
    together = fit_cmn(network, iterations=4, init=init)
    monkeypatch.setattr(fgraph.families.linalg, "ROW_OUTER_BUDGET", 0)
    network = build_cmn(x, labels, 4, n_restarts=2)
    row_by_row = fit_cmn(network, iterations=4, init=initial_state(network, seed=2))
    np.testing.assert_allclose(together.elbo, row_by_row.elbo, rtol=1e-12)
    for key, value in together.posteriors().items():
        np.testing.assert_allclose(value, row_by_row.posteriors()[key], rtol=1e-9, atol=1e-12, err_msg=key)


def test_the_sticks_prior_bias_reaches_the_graph():
    """The authors' intercept means −log(J − j) (``stick_bias``) give the reference's ELBO under the same means, per
    iteration; the same fit under eq. (4)'s zero means does not."""
    x, labels = small_problem(seed=8, N=25, d=2, L=3)
    network = build_cmn(x, labels, 4, n_restarts=2, priors=CMNPriors(stick_bias=True))
    fit = fit_cmn(network, iterations=3, seed=1)
    plain = fit_cmn(build_cmn(x, labels, 4, n_restarts=2, priors=CMNPriors(stick_bias=False)), iterations=3, seed=1)
    cmn = CMNReference(x, labels, n_experts=4, priors=Priors(stick_bias=True))
    state = cmn.initial_state(2, seed=1)
    for t in range(3):
        state = cmn.iterate_joint_e_step(state)
        np.testing.assert_allclose(fit.elbo[t], cmn.elbo(state), rtol=1e-9)
    assert np.all(np.abs(plain.elbo[-1] - fit.elbo[-1]) > 1e-3)


@pytest.mark.parametrize("sticks", [1, 2, 4, 19])
def test_the_sticks_prior_bias_gives_every_class_the_same_probability_at_zero(sticks):
    """At x = 0 (x̃ = [0, …, 0, 1]) the biased prior means give the J + 1 classes probability 1/(J + 1) each:
    stick j takes σ(−log(J − j)) = 1/(J − j + 1) of what the sticks before it left."""
    means = CMNPriors(stick_bias=True).stick_prior_means(sticks, 3)
    assert np.all(means[:, :-1] == 0.0)
    psi = means[:, -1]  # ψ_j = mean_jᵀ x̃ at x = 0
    left, probabilities = 1.0, []
    for value in psi:
        taken = left / (1.0 + np.exp(-value))
        probabilities.append(taken)
        left -= taken
    probabilities.append(left)
    np.testing.assert_allclose(probabilities, np.full(sticks + 1, 1.0 / (sticks + 1)), rtol=1e-12)
    np.testing.assert_array_equal(CMNPriors(stick_bias=False).stick_prior_means(sticks, 3), np.zeros((sticks, 3)))


def test_the_authors_initial_state():
    """``initial="prior-mean"``: every coefficient posterior at its prior mean (with the sticks' bias) and covariance
    I/100, the experts' means uniform in ±3/√D (spread over that range, other draws for another seed), V = I,
    shape a0 and rates b0; an unknown kind is named."""
    x, labels = small_problem(seed=2, N=40, d=3, L=3)
    K, D = 5, 4
    network = build_cmn(x, labels, K, n_restarts=R, priors=CMNPriors(stick_bias=True))
    init = initial_state(network, seed=5, initial="prior-mean")
    gate_means = CMNPriors(stick_bias=True).stick_prior_means(K - 1, D)
    for j in range(K - 1):
        np.testing.assert_array_equal(init[f"beta0_{j}"].mean, np.broadcast_to(gate_means[j], (R, D)))
        np.testing.assert_allclose(init[f"beta0_{j}"].cov, np.broadcast_to(0.01 * np.eye(D), (R, D, D)))
    np.testing.assert_array_equal(init["beta1_0"].mean, np.broadcast_to([0.0, 0.0, -np.log(2.0)], (R, 3)))
    M = init["theta"].matrix_mean[:, :, 0]
    bound = 3.0 / np.sqrt(D)
    assert M.shape == (R, K, 2, D) and np.all(np.abs(M) < bound) and M.max() > 0.8 * bound and M.min() < -0.8 * bound
    np.testing.assert_allclose(init["theta"].mean_precision[:, :, 0], np.full((R, K, 2), 2.0))
    other = initial_state(network, seed=6, initial="prior-mean")["theta"].matrix_mean
    assert not np.allclose(other[:, :, 0], M)
    with pytest.raises(ModelError, match="initial must be one of 'draws', 'prior-mean'"):
        initial_state(network, seed=5, initial="authors")
    with pytest.raises(ModelError, match="initial must be one of"):
        fit_cmn(network, iterations=1, seed=5, initial="zeros")
