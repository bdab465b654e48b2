"""The numpy CAVI-CMN reference (fgraph/testing/cmn_reference.py) proven on its own.

The reference is the oracle for the engine's CMN, so it is checked here without it:
* the ELBO never decreases, per restart (pinwheels, breast cancer);
* the ELBO formula equals a Monte Carlo estimate of E_q[log p(y, x1, z, Θ, ω-collapsed) − log q]
  from draws of z, x1, A, Λ, β0, β1 under q, scored with scipy's densities (the PG parts in
  their closed collapsed form), at the optimal and at a non-optimal q(ω); the optimal c of q(ω)
  equals sqrt of the Monte Carlo second moment of ψ; E[ω] of PG(1, c) matches polyagamma draws;
* each coordinate update maximises the ELBO in its factor (random perturbations only lower it,
  with the first-order change zero), and the ω-optima maximise it in c;
* batched restarts equal separate single-restart runs;
* one expert (no sticks in the gate) gives a trivial gate: γ ≡ 1 and a zero gate term; with one
  expert, known noise and q(β1), q(ω1) held fixed, the x1 ↔ A coordinate ascent reaches the exact
  mean of the then jointly Gaussian (A, x1), solved as one linear system;
* the predictive equals the deterministic network for near point-mass posteriors, and a
  quadrature over the expert noise for one expert;
* an iteration is the documented sequence of updates (the order the engine follows);
* a sanity run on breast cancer (400 training points, K = 20, 100 iterations, 4 restarts).
"""
import numpy as np
import pytest
from polyagamma import random_polyagamma
from scipy import stats

from fgraph import metrics
from fgraph.datasets import load_dataset, make_pinwheels, train_test_splits
from fgraph.testing.cmn_reference import STATE_KEYS, CMNReference, Priors, pg_mean


def tiny_problem(n=5, d=2, n_classes=3, n_experts=3, seed=0):
    rng = np.random.default_rng(seed)
    x0 = rng.standard_normal((n, d))
    y = np.arange(n) % n_classes
    return CMNReference(x0, y, n_experts=n_experts, n_classes=n_classes)


def run(reference, state, iterations):
    for _ in range(iterations):
        state = reference.iterate(state)
    return state


def is_non_decreasing(trajectory):
    steps = np.diff(trajectory, axis=0)
    scale = np.abs(trajectory[1:])
    return np.all(steps >= -1e-10 * scale), steps.min()


# ----------------------------------------------------------------------------- (a) monotone ELBO
def test_elbo_never_decreases_on_pinwheels():
    x, y = make_pinwheels(n=150, random_state=3)
    x = (x - x.mean(0)) / x.std(0)
    reference = CMNReference(x, y, n_experts=10)
    for passes in (1, 3):
        _, trajectory = reference.fit(reference.initial_state(3, seed=0), 40, e_step_passes=passes)
        ok, worst = is_non_decreasing(trajectory)
        assert ok, f"ELBO decreased by {worst} with {passes} E-step passes"
        assert np.all(trajectory[-1] - trajectory[0] > 1.0)  # it actually moves


def test_elbo_never_decreases_on_breast_cancer():
    data = load_dataset("breast_cancer")
    split = train_test_splits(data.X, data.y, [100], 169, random_state=0)[0]
    reference = CMNReference(split.X_train, split.y_train, n_experts=20)
    _, trajectory = reference.fit(reference.initial_state(3, seed=1), 30)
    ok, worst = is_non_decreasing(trajectory)
    assert ok, f"ELBO decreased by {worst}"


# ----------------------------------------------------------------------------- (b) ELBO vs Monte Carlo
def _mvn_logpdf(x, mean, cov):
    """scipy's multivariate normal log density of x (S, D) at one mean (D,) and covariance."""
    return stats.multivariate_normal(mean, cov).logpdf(x)


def _omega(c):
    return np.tanh(c / 2.0) / (2.0 * c)


def _pg_kl_one(c):
    return np.log(np.cosh(c / 2.0)) - _omega(c) * c * c / 2.0


def monte_carlo_elbo(reference, state, c1, c0, samples, seed):
    """(mean, standard error) per restart of the ELBO integrand over draws from q; written from
    the model's definition with scipy densities, sharing no code with the reference but the state."""
    rng = np.random.default_rng(seed)
    R = state["gamma"].shape[0]
    N, K, L, h, D, H = reference.N, reference.K, reference.L, reference.h, reference.D, reference.H
    x0t, y, p = reference.x0t, reference.y, reference.priors
    means, errors = [], []
    for r in range(R):
        total = np.zeros(samples)
        # β0, β1: log p − log q at draws from q
        beta0 = np.empty((samples, K - 1, D))
        for j in range(K - 1):
            beta0[:, j] = rng.multivariate_normal(state["gate_mean"][r, j], state["gate_cov"][r, j], samples)
            total += (_mvn_logpdf(beta0[:, j], np.zeros(D), p.sigma0 ** 2 * np.eye(D))
                      - _mvn_logpdf(beta0[:, j], state["gate_mean"][r, j], state["gate_cov"][r, j]))
        beta1 = np.empty((samples, L - 1, H))
        for l in range(L - 1):
            beta1[:, l] = rng.multivariate_normal(state["out_mean"][r, l], state["out_cov"][r, l], samples)
            total += (_mvn_logpdf(beta1[:, l], np.zeros(H), p.sigma1 ** 2 * np.eye(H))
                      - _mvn_logpdf(beta1[:, l], state["out_mean"][r, l], state["out_cov"][r, l]))
        # (A_k, λ_k): rows A_ki | λ_ki ~ N(M_ki, V_k / λ_ki), λ_ki ~ Gamma(a_k, rate b_ki)
        lam = np.empty((samples, K, h))
        A = np.empty((samples, K, h, D))
        for k in range(K):
            for i in range(h):
                lam[:, k, i] = rng.gamma(state["a"][r, k], 1.0 / state["b"][r, k, i], samples)
                unit = rng.multivariate_normal(np.zeros(D), state["V"][r, k], samples)
                A[:, k, i] = state["M"][r, k, i] + unit / np.sqrt(lam[:, k, i])[:, None]
                # log N(A | m, V/λ) = log N(√λ (A − m) | 0, V) + (D/2) log λ
                prior = (stats.gamma(p.a0, scale=1.0 / p.b0).logpdf(lam[:, k, i])
                         + _mvn_logpdf(np.sqrt(lam[:, k, i])[:, None] * A[:, k, i], np.zeros(D), p.v0 * np.eye(D)))
                posterior = (stats.gamma(state["a"][r, k], scale=1.0 / state["b"][r, k, i]).logpdf(lam[:, k, i])
                             + _mvn_logpdf(np.sqrt(lam[:, k, i])[:, None] * (A[:, k, i] - state["M"][r, k, i]),
                                           np.zeros(D), state["V"][r, k]))
                total += prior - posterior  # the (D/2) log λ of both cancel
        for n in range(N):
            # z ~ q(z), x1 | z ~ q(x1 | z)
            z = rng.choice(K, size=samples, p=state["gamma"][r, n])
            total -= np.log(state["gamma"][r, n, z])
            x1 = np.empty((samples, h))
            for k in range(K):
                chosen = z == k
                x1[chosen] = rng.multivariate_normal(state["x1_mean"][r, n, k], state["x1_cov"][r, n, k], chosen.sum())
                total[chosen] -= _mvn_logpdf(x1[chosen], state["x1_mean"][r, n, k], state["x1_cov"][r, n, k]).reshape(-1)
            # the experts: x1 | z, A, λ ~ N(A_z x̃0, diag(1/λ_z))
            mean = np.einsum("sid,d->si", A[np.arange(samples), z], x0t[n])
            total += stats.norm(mean, 1.0 / np.sqrt(lam[np.arange(samples), z])).logpdf(x1).sum(-1)
            # the gate, PG-collapsed with q(ω0_j | z) = PG(b_j(z), c0): reached sticks j ≤ z
            psi0 = beta0 @ x0t[n]  # (S, K−1)
            for j in range(K - 1):
                reached, hit = (j <= z), (j == z)
                c = c0[r, n, j]
                total += reached * (-np.log(2.0) - 0.5 * _omega(c) * psi0[:, j] ** 2 - _pg_kl_one(c))
                total += (hit - 0.5 * reached) * psi0[:, j]
            # the output, PG-collapsed with q(ω1_l) = PG(b_l(y), c1): sticks l ≤ y
            psi1 = np.einsum("sli,si->sl", beta1[..., :h], x1) + beta1[..., h]
            for l in range(min(y[n] + 1, L - 1)):
                c = c1[r, n, l]
                total += ((l == y[n]) - 0.5) * psi1[:, l] - np.log(2.0) - 0.5 * _omega(c) * psi1[:, l] ** 2 - _pg_kl_one(c)
        means.append(total.mean())
        errors.append(total.std() / np.sqrt(samples))
    return np.array(means), np.array(errors)


@pytest.fixture(scope="module", params=[(3, 3), (1, 2), (2, 4)], ids=lambda p: f"K{p[0]}-L{p[1]}")
def tiny_fitted(request):
    n_experts, n_classes = request.param
    reference = tiny_problem(n_experts=n_experts, n_classes=n_classes)
    # one iteration: the assignments are still soft (a few more and 5 points settle on one expert)
    state = run(reference, reference.initial_state(2, seed=4), 1)
    # and a fresh q(x1 | z), so its covariances differ between experts (through E[λ_k])
    state = reference.update_x1(state, reference.optimal_c1(state))
    if n_experts > 1:
        assert 0.05 < state["gamma"].max(-1).min() < 0.99
    return reference, state


def test_elbo_formula_equals_monte_carlo_at_the_optimal_and_at_other_polya_gamma_factors(tiny_fitted):
    reference, state = tiny_fitted
    c1, c0 = reference.optimal_c1(state), reference.optimal_c0(state)
    for scale in (1.0, 1.7):  # the collapsed (Jaakkola–Jordan) bound, and the augmented bound for a fixed q(ω)
        expected = reference.elbo(state, c1=scale * c1, c0=scale * c0)
        estimate, error = monte_carlo_elbo(reference, state, scale * c1, scale * c0, samples=4000, seed=11)
        assert np.all(error < 0.05 * np.abs(expected)), (error, expected)
        assert np.all(np.abs(estimate - expected) < 4.0 * error), (estimate, expected, error)
    # a non-optimal q(ω) gives a smaller bound
    assert np.all(reference.elbo(state, c1=1.7 * c1, c0=1.7 * c0) < reference.elbo(state))


def test_optimal_polya_gamma_parameters_are_root_mean_square_logits(tiny_fitted):
    reference, state = tiny_fitted
    rng = np.random.default_rng(5)
    S = 200_000
    r, n = 1, 2
    k = rng.choice(reference.K, size=S, p=state["gamma"][r, n])
    x1 = state["x1_mean"][r, n, k] + np.einsum(
        "sij,sj->si", np.linalg.cholesky(state["x1_cov"][r, n, k]), rng.standard_normal((S, reference.h)))
    for l in range(reference.L - 1):
        beta = rng.multivariate_normal(state["out_mean"][r, l], state["out_cov"][r, l], S)
        psi_square = (np.sum(beta[:, :-1] * x1, -1) + beta[:, -1]) ** 2
        error = psi_square.std() / np.sqrt(S)
        assert abs(psi_square.mean() - reference.optimal_c1(state)[r, n, l] ** 2) < 4 * error
    for j in range(reference.K - 1):
        beta = rng.multivariate_normal(state["gate_mean"][r, j], state["gate_cov"][r, j], S)
        psi_square = (beta @ reference.x0t[n]) ** 2
        error = psi_square.std() / np.sqrt(S)
        assert abs(psi_square.mean() - reference.optimal_c0(state)[r, n, j] ** 2) < 4 * error


@pytest.mark.parametrize("c", [1e-6, 0.3, 2.5, 9.0])
def test_polya_gamma_mean_matches_polyagamma_draws(c):
    draws = random_polyagamma(1.0, c, size=200_000, random_state=7)
    assert abs(draws.mean() - pg_mean(1.0, c)) < 4 * draws.std() / np.sqrt(draws.size)


# ----------------------------------------------------------------------------- (c) coordinate maximisers
def _perturbed(state, key, direction, step):
    value = state[key] + step * direction
    return {**state, key: value}


def _random_direction(rng, state, key):
    direction = rng.standard_normal(np.shape(state[key]))
    if key.endswith("cov") or key == "V":
        direction = 0.5 * (direction + np.swapaxes(direction, -1, -2))
    return direction


def _assert_maximum(elbo_of, state, keys, seed, step=1e-4):
    """elbo_of(state) is at a maximum along random directions in the arrays named ``keys``."""
    rng = np.random.default_rng(seed)
    at = elbo_of(state)
    for _ in range(4):
        for key in keys:
            direction = _random_direction(rng, state, key)
            if key == "gamma":  # move the logits, keep the simplex
                logits = np.log(state["gamma"]) + step * direction
                up = {**state, "gamma": np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)}
                logits = np.log(state["gamma"]) - step * direction
                down = {**state, "gamma": np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)}
            else:
                up, down = _perturbed(state, key, direction, step), _perturbed(state, key, direction, -step)
            plus, minus = elbo_of(up), elbo_of(down)
            assert np.all(plus < at) and np.all(minus < at), (key, plus - at, minus - at)
            # stationary: the first-order change is small against the second-order one
            first, second = np.abs(plus - minus) / 2, np.abs(plus + minus - 2 * at) / 2
            assert np.all(first < 1e-2 * second + 1e-11), (key, first, second)


def test_each_coordinate_update_maximises_the_bound_in_its_factor(tiny_fitted):
    reference, state = tiny_fitted
    c1, c0 = reference.optimal_c1(state), reference.optimal_c0(state)
    bound = lambda s: reference.elbo(s, c1=c1, c0=c0)  # q(ω) held fixed, as each update holds it
    updates = [
        (reference.update_x1(state, c1), ["x1_mean", "x1_cov"]),
        (reference.update_gamma(state, c1, c0), ["gamma"]),
        (reference.update_out(state, c1), ["out_mean", "out_cov"]),
        (reference.update_gate(state, c0), ["gate_mean", "gate_cov"]),
        (reference.update_experts(state), ["M", "V", "a", "b"]),
    ]
    if reference.K == 1:  # one expert: q(z) is fixed at 1 and the gate has no coefficients
        updates = [(updated, keys) for updated, keys in updates if keys[0] not in ("gamma", "gate_mean")]
    for seed, (updated, keys) in enumerate(updates):
        assert np.all(bound(updated) >= bound(state) - 1e-12), keys
        _assert_maximum(bound, updated, keys, seed)


def test_polya_gamma_optima_maximise_the_bound_in_c(tiny_fitted):
    reference, state = tiny_fitted
    c1, c0 = reference.optimal_c1(state), reference.optimal_c0(state)
    rng = np.random.default_rng(3)
    at = reference.elbo(state, c1=c1, c0=c0)
    for _ in range(4):
        for which in ("c1", "c0"):
            c = c1 if which == "c1" else c0
            if c.size == 0:  # one expert: no gate sticks
                continue
            direction = rng.standard_normal(c.shape)
            for sign in (1, -1):
                moved = c * (1 + sign * 1e-3 * direction)
                value = reference.elbo(state, **{"c1": c1, "c0": c0, which: moved})
                assert np.all(value < at), (which, value - at)


def test_an_iteration_is_the_documented_sequence_of_updates(tiny_fitted):
    """The order the module docstring states (steps 1–9), which the engine's schedule follows."""
    reference, state = tiny_fitted
    expected = reference.update_x1(state, reference.optimal_c1(state))
    c0 = reference.optimal_c0(expected)
    expected = reference.update_gamma(expected, reference.optimal_c1(expected), c0)
    expected = reference.update_out(expected, reference.optimal_c1(expected))
    expected = reference.update_gate(expected, c0)
    expected = reference.update_experts(expected)
    actual = reference.iterate(state)
    for key in STATE_KEYS:
        np.testing.assert_array_equal(actual[key], expected[key], err_msg=key)
    # two E-step passes: steps 1–5 twice, then the M-step
    twice = reference.update_x1(state, reference.optimal_c1(state))
    twice = reference.update_gamma(twice, reference.optimal_c1(twice), reference.optimal_c0(twice))
    twice = reference.update_x1(twice, reference.optimal_c1(twice))
    twice = reference.update_gamma(twice, reference.optimal_c1(twice), c0)
    twice = reference.update_out(twice, reference.optimal_c1(twice))
    twice = reference.update_experts(reference.update_gate(twice, c0))
    actual = reference.iterate(state, e_step_passes=2)
    for key in STATE_KEYS:
        np.testing.assert_allclose(actual[key], twice[key], rtol=1e-13, atol=1e-15, err_msg=key)


def stick_probabilities_by_hand(psi):
    """p(class c) = σ(ψ_c) Π_{j<c} (1 − σ(ψ_j)), the last class Π_j (1 − σ(ψ_j)), for ψ (C−1,)."""
    sigmoid = 1.0 / (1.0 + np.exp(-psi))
    probabilities, rest = [], 1.0
    for j in range(psi.size):
        probabilities.append(rest * sigmoid[j])
        rest *= 1.0 - sigmoid[j]
    return np.array(probabilities + [rest])


def test_predictive_probabilities_of_a_near_point_mass_posterior():
    """With every parameter posterior nearly a point mass and the expert noise tiny, the
    predictive is the deterministic network's Σ_k p(z = k | x0) p(y | x1 = M_k x̃0)."""
    reference = tiny_problem(n=4, d=2, n_classes=3, n_experts=3, seed=6)
    state = reference.initial_state(2, seed=8)
    R, K, L, D, H, h = 2, reference.K, reference.L, reference.D, reference.H, reference.h
    tiny = 1e-14
    state.update(
        gate_cov=tiny * np.broadcast_to(np.eye(D), (R, K - 1, D, D)),
        out_cov=tiny * np.broadcast_to(np.eye(H), (R, L - 1, H, H)),
        V=tiny * np.broadcast_to(np.eye(D), (R, K, D, D)),
        a=np.full((R, K), 1e12), b=np.full((R, K, h), 1e12 * 1e-12),  # λ ≈ 1e12, Gamma sd 1e6
    )
    rng = np.random.default_rng(0)
    x_new = rng.standard_normal((6, reference.d))
    probabilities = reference.predict_proba(state, x_new, n_samples=64, seed=1)
    for r in range(R):
        for n, x in enumerate(x_new):
            xt = np.append(x, 1.0)
            gate = stick_probabilities_by_hand(state["gate_mean"][r] @ xt)
            expected = sum(
                gate[k] * stick_probabilities_by_hand(state["out_mean"][r] @ np.append(state["M"][r, k] @ xt, 1.0))
                for k in range(K))
            np.testing.assert_allclose(probabilities[r, n], expected, atol=1e-5)
    np.testing.assert_allclose(probabilities.sum(-1), 1.0, atol=1e-12)


def test_predictive_integrates_the_expert_noise():
    """One expert, two classes, point-mass parameters but expert noise variance s²: p(y = 0 | x0)
    = ∫ σ(w x1 + c) N(x1 | m x̃0, s²) dx1, by quadrature."""
    from scipy.integrate import quad
    from scipy.special import expit

    reference = tiny_problem(n=4, d=1, n_classes=2, n_experts=1, seed=2)
    state = reference.initial_state(1, seed=3)
    noise_variance = 0.8
    state.update(
        out_cov=1e-14 * np.eye(2)[None, None], V=1e-14 * np.eye(2)[None, None],
        a=np.full((1, 1), 1e12), b=np.full((1, 1, 1), 1e12 * noise_variance),
        out_mean=np.array([[[1.5, -0.3]]]), M=np.array([[[[0.7, 0.4]]]]),
    )
    x_new = np.array([[-1.0], [0.5]])
    probabilities = reference.predict_proba(state, x_new, n_samples=40_000, seed=4, chunk=4000)
    for n, x in enumerate(x_new[:, 0]):
        mean = 0.7 * x + 0.4
        density = lambda v, mean=mean: np.exp(-0.5 * (v - mean) ** 2 / noise_variance) / np.sqrt(2 * np.pi * noise_variance)
        expected, _ = quad(lambda v, density=density: density(v) * expit(1.5 * v - 0.3), -np.inf, np.inf)
        # Monte Carlo error of a probability from 40,000 draws: at most 0.5 / 200
        assert abs(probabilities[0, n, 0] - expected) < 4 * 0.5 / 200, (probabilities[0, n, 0], expected)
        # and it differs from the plug-in σ(w m + c) by much more than that
        assert abs(expit(1.5 * mean - 0.3) - expected) > 0.02


# ----------------------------------------------------------------------------- (d) batched restarts
def test_batched_restarts_equal_separate_runs():
    x, y = make_pinwheels(n=60, n_classes=3, random_state=0)
    reference = CMNReference(x / 10.0, y, n_experts=4)
    start = reference.initial_state(3, seed=9)
    batched, batched_elbo = reference.fit(start, 8)
    for r in range(3):
        single_start = {key: start[key][r:r + 1] for key in STATE_KEYS}
        single, single_elbo = reference.fit(single_start, 8)
        np.testing.assert_allclose(single_elbo[:, 0], batched_elbo[:, r], rtol=1e-12, atol=1e-9)
        for key in STATE_KEYS:
            np.testing.assert_allclose(single[key][0], batched[key][r], rtol=1e-10, atol=1e-12, err_msg=key)


def test_an_explicit_initial_state_reproduces_a_run():
    reference = tiny_problem(seed=1)
    start = reference.initial_state(2, seed=2)
    copied = {key: np.array(value, copy=True) for key, value in start.items()}
    _, first = reference.fit(start, 5)
    _, second = reference.fit(copied, 5)
    np.testing.assert_array_equal(first, second)
    # the parameter posteriors alone, completed with the default local factors, give the same run
    parameters = {key: copied[key] for key in STATE_KEYS if key not in ("x1_mean", "x1_cov", "gamma")}
    _, third = reference.fit(reference.with_initial_locals(parameters), 5)
    np.testing.assert_array_equal(first, third)
    with pytest.raises(ValueError, match="x1_mean"):
        reference.fit({**copied, "x1_mean": copied["x1_mean"][:, :-1]}, 1)


# ----------------------------------------------------------------------------- (e) one expert
def test_one_expert_makes_the_gate_trivial():
    reference = tiny_problem(n=8, n_classes=2, n_experts=1, seed=3)
    state, trajectory = reference.fit(reference.initial_state(2, seed=0), 10)
    np.testing.assert_array_equal(state["gamma"], 1.0)
    terms = reference.elbo_terms(state)
    np.testing.assert_array_equal(terms["gate"], 0.0)
    np.testing.assert_array_equal(terms["kl_gate"], 0.0)
    np.testing.assert_array_equal(terms["z_entropy"], 0.0)
    assert is_non_decreasing(trajectory)[0]


def test_one_expert_with_known_noise_reaches_the_exact_gaussian_posterior_mean():
    """K = 1, two classes (h = 1), the noise precision pinned at 1/s² by a sharp Gamma prior, and
    q(β1), q(ω1) held fixed: the rest of the model is jointly Gaussian in (A, x1_1..N),

        log p = −(λ/2) [ a (V0⁻¹ + Σ_n x̃_n x̃_nᵀ) aᵀ − 2 Σ_n x1_n a x̃_n + Σ_n x1_n² ]
                + Σ_n [ η_n x1_n − ½ P_n x1_n² ],
        P_n = E[ω1_n] E[w²],  η_n = κ_n E[w] − E[ω1_n] E[w β_bias],

    and coordinate ascent between q(x1) and q(A) converges to its exact mean (mean-field on a
    Gaussian recovers the mean), which is solved here as one linear system."""
    s2, a0 = 0.3, 1e9
    priors = Priors(a0=a0, b0=a0 * s2)  # E[λ] = 1/s² to ~1e-8 whatever the data add
    rng = np.random.default_rng(12)
    x0 = rng.standard_normal((6, 2))
    reference = CMNReference(x0, np.array([0, 1, 1, 0, 1, 0]), n_experts=1, priors=priors)
    state = reference.initial_state(1, seed=5)
    c1 = 0.5 + rng.random((1, 6, 1))  # any fixed q(ω1)
    for _ in range(3000):
        state = reference.update_experts(reference.update_x1(state, c1))
    # the exact mean from the joint precision
    lam, N, D = 1.0 / s2, reference.N, reference.D
    mean_b, cov_b = state["out_mean"][0, 0], state["out_cov"][0, 0]
    second = cov_b + np.outer(mean_b, mean_b)
    omega = pg_mean(reference.b1[:, 0], c1[0, :, 0])
    P = omega * second[0, 0]
    eta = reference.kappa1[:, 0] * mean_b[0] - omega * second[0, 1]
    xt = reference.x0t
    Q = np.zeros((D + N, D + N))
    Q[:D, :D] = lam * (np.eye(D) / priors.v0 + xt.T @ xt)
    Q[:D, D:] = -lam * xt.T
    Q[D:, :D] = -lam * xt
    Q[D:, D:] = np.diag(lam + P)
    exact = np.linalg.solve(Q, np.concatenate([np.zeros(D), eta]))
    np.testing.assert_allclose(state["M"][0, 0, 0], exact[:D], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(state["x1_mean"][0, :, 0, 0], exact[D:], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(state["a"][0, 0] / state["b"][0, 0, 0], lam, rtol=1e-6)


# ----------------------------------------------------------------------------- (f) sanity run
def test_breast_cancer_sanity_run():
    data = load_dataset("breast_cancer")
    split = train_test_splits(data.X, data.y, [400], 169, random_state=0)[0]
    reference = CMNReference(split.X_train, split.y_train, n_experts=20)
    # the ELBO is not recorded per iteration here (the monotonicity tests do that), to keep this quick
    state = run(reference, reference.initial_state(4, seed=1), 100)
    probabilities = reference.predict_proba(state, split.X_test, n_samples=128, seed=0)
    accuracy = np.mean([metrics.accuracy(p, split.y_test) for p in probabilities])
    assert accuracy > 0.93, accuracy
