"""A hand-written numpy CAVI for the conditional mixture network (CAVI-CMN), the tests' oracle.

The model (Heins et al., "Gradient-free variational learning with conditional mixture networks",
§3.2–3.4, Appendices A and B), for N points x0 (d inputs, x̃0 = [x0; 1], D = d + 1), labels
y ∈ {0..L−1}, K experts, latent dimension h = L − 1 (x̃1 = [x1; 1], H = h + 1):

    z  | x0      ~ stick-breaking logistic with K − 1 sticks ψ0_j = β0_jᵀ x̃0          (the gate)
    x1 | z = k   ~ N(A_k x̃0, Λ_k⁻¹),  Λ_k = diag(λ_k1..λ_kh)                         (the experts)
    y  | x1      ~ stick-breaking logistic with L − 1 sticks ψ1_l = β1_lᵀ x̃1          (the output)
    β0_j ~ N(0, σ0² I_D),  β1_l ~ N(0, σ1² I_H),
    A_k | Λ_k ~ MN(M0 = 0, Λ_k⁻¹, v0 I_D) (row i: N(0, v0 I / λ_ki)),  λ_ki ~ Gamma(a0, rate b0)

with eq. (4)'s v0 = 10, a0 = 2, b0 = 1, σ0 = σ1 = 5. Stick-breaking, 0-based: class c, stick j:
b_j(c) = [j ≤ c], κ_j(c) = [j = c] − b_j(c)/2, p(c | ψ) = σ(ψ_c) Π_{j<c} σ(−ψ_j) (the last class
uses all sticks with κ = −1/2).

Posterior family (eq. 5–6), every array with a leading restart axis R:
    q(β0_j) = N(gate_mean, gate_cov)      (R, K−1, D), (R, K−1, D, D)
    q(β1_l) = N(out_mean, out_cov)        (R, L−1, H), (R, L−1, H, H)
    q(A_k, Λ_k) = Π_i N(A_ki | M_ki, V_k / λ_ki) Gamma(λ_ki | a_k, b_ki)
                                          M (R, K, h, D), V (R, K, D, D), a (R, K), b (R, K, h)
    q(x1 | z = k) = N(x1_mean, x1_cov)    (R, N, K, h), (R, N, K, h, h)
    q(z) = Cat(gamma)                     (R, N, K)
    q(ω1_nl) = PG(b_l(y_n), c1_nl)        — not conditioned on z: the output node sees x1 through
                                            its marginal q(x1) = Σ_k γ_k q(x1 | k) (its moments)
    q(ω0_nj | z) = PG(b_j(z), c0_nj)      — conditioned on z, since b depends on z (its prior
                                            PG(b_j(z), 0) does); c0 itself cannot depend on z,
                                            because ψ0 = β0ᵀ x̃0 does not.

The Pólya-Gamma factors are never stored: every update that reads q(ω) reads it at its optimum
for the marginals at that moment, c = sqrt(E[ψ²]) (E[ψ1²] = tr(E[β1β1ᵀ] E[x̃1x̃1ᵀ]) under the
mixture marginal of x1; E[ψ0²] = x̃0ᵀ E[β0β0ᵀ] x̃0), so each update is "ω update, then the
factor's update" and the bound with ω at its optimum (the Jaakkola–Jordan form) never decreases.

One iteration (:meth:`CMNReference.iterate`), each step reading the newest value of everything:
    1. c1 ← optimum at q(β1), q(x1 | z), q(z)
    2. q(x1 | z = k) for every k ← q(β1), c1, q(A, Λ), x0, y
    3. c1 ← optimum at q(β1), the new q(x1 | z), q(z)
    4. c0 ← optimum at q(β0)
    5. q(z) ← q(x1 | z), c1, c0, q(β0), q(β1), q(A, Λ), x0, y
    6. c1 ← optimum at q(β1), q(x1 | z), the new q(z)
    7. q(β1) ← q(x1 | z), q(z) (the mixture moments of x̃1), c1, y
    8. q(β0) ← q(z), c0 (still the optimum: q(β0) has not changed since step 4), x0
    9. q(A, Λ) ← q(x1 | z), q(z), x0                                 (Appendix B, eq. 28)
and the ELBO after the iteration is evaluated with c1, c0 at their optimum for the final state.
Steps 2–5 are the paper's E-step (eq. 10) and 7–9 its M-step; steps 1 and 6 are the ω-refresh
that "ω at its optimum whenever read" implies. (Step 8's c0 is recomputed from q(β0), which equals
step 4's: nothing between them changes q(β0).) ``e_step_passes`` > 1 repeats steps 1–5 before
the M-step (Appendix A's local iterations); the default is one pass.

Initial state: every factor above except q(ω) (which is derived), either drawn from a seed
(:meth:`CMNReference.initial_state`) or given explicitly as a dict of those arrays, so another
implementation can start from the identical state; :meth:`CMNReference.with_initial_locals`
completes given parameter posteriors with the default local factors (q(x1 | k) the expert's
prediction at the mean of A, q(z) uniform). The first iteration's step 1 reads the initial
q(x1 | z) and q(z), which is why they belong to the state.

ELBO (:meth:`CMNReference.elbo`), per restart:
    Σ_n Σ_k γ_nk [ E log N(x1 | A_k x̃0, Λ_k⁻¹) + H[q(x1 | k)] + gate_n(k) − log γ_nk ]
    + Σ_n Σ_l [ κ_l E[ψ1_l] − b_l log 2 − ½ E[ω1] E[ψ1_l²] − KL(PG(b_l, c1) ‖ PG(b_l, 0)) ]
    − Σ_j KL(q(β0_j) ‖ p) − Σ_l KL(q(β1_l) ‖ p) − Σ_k KL(q(A_k, Λ_k) ‖ p(A_k, Λ_k))
with gate_n(k) = Σ_j [ κ_j(k) E[ψ0_j] − b_j(k) log 2 − ½ E[ω0 | b_j(k)] E[ψ0_j²]
                        − KL(PG(b_j(k), c0) ‖ PG(b_j(k), 0)) ],
E[ω | b, c] = b tanh(c/2)/(2c), KL(PG(b, c) ‖ PG(b, 0)) = b log cosh(c/2) − E[ω] c²/2. At the
optimum c² = E[ψ²] the PG parts reduce to κ E[ψ] − b log 2 − b log cosh(c/2). Passing other c
gives the augmented bound for a fixed q(ω) (the function each update maximises).

Readings of the paper where it is loose (each checked by the tests below, not taken on trust):
* eq. (24): the sums run over the K−1 sticks (not K); [M_k]_{D+1,1:D} is the bias–weight block
  of E[β_k β_kᵀ], entering the linear term with a minus sign (κ E[w] − E[ω] E[w β_bias]);
  N(x; 0, −2λ_{2,0}) means precision −2λ_{2,0}. Eq. (26) sums over n (written Σ_i).
* eq. (28) is written with x0; the bias column of A_k needs x̃0 = [x0; 1]. The Gamma is in
  shape/rate form; a_k is shared by the h output dimensions of expert k; M0 = 0 drops M0 terms.
* eq. (4)'s MN(A_k; M0, Σ_k, v0 I): row i of A_k has covariance σ_ki² v0 I.
* eq. (10)'s q(ω1 | y) is read as one PG per point and stick (not per expert), from the mixture
  moments of x1; q(ω0 | z) depends on z through b_j(z) only.
* eq. (10) lets the E-step read q_{t−1}(ω); here q(ω) is refreshed whenever read (steps 1, 3, 6),
  which keeps every step a coordinate ascent of the bound with ω at its optimum.

Predictive class probabilities (:meth:`CMNReference.predict_proba`): Monte Carlo over q of the
parameters — draws of β0, (A, Λ), β1 from q — with, per draw, the gate's class probabilities
exact, x1 | z = k drawn from N(A_k x̃0, Λ_k⁻¹) and the output's class probabilities exact, averaged
over draws and summed over experts: p(y | x0) ≈ (1/S) Σ_s Σ_k p(z = k | x0, β0ˢ) p(y | x1ˢ_k, β1ˢ).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import digamma, gammaln, log_expit

LOG2 = np.log(2.0)
LOG2PI = np.log(2.0 * np.pi)
STATE_KEYS = (
    "gate_mean", "gate_cov", "out_mean", "out_cov", "M", "V", "a", "b", "x1_mean", "x1_cov", "gamma",
)


@dataclass(frozen=True)
class Priors:
    """Eq. (4): p(A|Λ) = MN(0, Λ⁻¹, v0 I), λ ~ Gamma(a0, rate b0), β0 ~ N(b, σ0² I), β1 ~ N(b, σ1² I) with the
    sticks' means b of the authors' code (``stick_bias``, the library's default): the intercept of stick j of J
    (the last entry of its vector) −log(J − j), the rest zero; ``stick_bias=False``: eq. (4)'s zero means."""

    v0: float = 10.0
    a0: float = 2.0
    b0: float = 1.0
    sigma0: float = 5.0
    sigma1: float = 5.0
    stick_bias: bool = True

    def means(self, sticks: int, size: int) -> np.ndarray:
        """The prior means of ``sticks`` coefficient vectors of length ``size``, (sticks, size)."""
        means = np.zeros((sticks, size))
        if self.stick_bias:
            for j in range(sticks):
                means[j, size - 1] = -np.log(sticks - j)
        return means


# ----------------------------------------------------------------------------- small pieces
def stick_weights(probabilities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Expected stick counts under class probabilities (…, C): (E[b_j], E[κ_j]), each (…, C−1).

    E[b_j] = P(class ≥ j), E[κ_j] = P(class = j) − E[b_j]/2; one-hot rows give b_j(c), κ_j(c).
    """
    at_least = np.flip(np.cumsum(np.flip(probabilities, -1), -1), -1)[..., :-1]
    return at_least, probabilities[..., :-1] - 0.5 * at_least


def stick_matrices(n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """b[c, j] = [j ≤ c] and κ[c, j] = [j = c] − b[c, j]/2, shapes (C, C−1)."""
    return stick_weights(np.eye(n_classes))


def pg_mean(b, c):
    """E[ω] of PG(b, c) = b tanh(c/2)/(2c), by its series b/4 (1 − c²/12 + c⁴/120) for |c| < 1e-4."""
    c = np.abs(np.asarray(c, dtype=np.float64))
    small = c < 1e-4
    safe = np.where(small, 1.0, c)
    return b * np.where(small, 0.25 * (1.0 - c * c / 12.0 + c ** 4 / 120.0), np.tanh(safe / 2.0) / (2.0 * safe))


def log_cosh_half(c):
    """log cosh(c/2), stable for large |c|."""
    c = np.abs(np.asarray(c, dtype=np.float64))
    return c / 2.0 + np.log1p(np.exp(-c)) - LOG2


def pg_kl(b, c):
    """KL(PG(b, c) ‖ PG(b, 0)) = b log cosh(c/2) − E[ω] c²/2 (zero when b = 0)."""
    return b * log_cosh_half(c) - pg_mean(b, c) * np.square(c) / 2.0


def cholesky_logdet(matrices: np.ndarray) -> np.ndarray:
    return 2.0 * np.sum(np.log(np.diagonal(np.linalg.cholesky(matrices), axis1=-2, axis2=-1)), -1)


def spd_inverse(matrices: np.ndarray) -> np.ndarray:
    inverse = np.linalg.inv(matrices)
    return 0.5 * (inverse + np.swapaxes(inverse, -1, -2))


def gaussian_kl_isotropic(mean: np.ndarray, cov: np.ndarray, variance: float, prior_mean=0.0) -> np.ndarray:
    """KL(N(mean, cov) ‖ N(prior_mean, variance I)) over the last axes: (…, D), (…, D, D) → (…)."""
    D = mean.shape[-1]
    trace = np.trace(cov, axis1=-2, axis2=-1)
    offset = mean - prior_mean
    return 0.5 * ((trace + np.sum(offset * offset, -1)) / variance - D + D * np.log(variance) - cholesky_logdet(cov))


def stick_log_probabilities(psi: np.ndarray) -> np.ndarray:
    """log p(class | ψ) for stick logits ψ (…, C−1) → (…, C)."""
    log_on, log_off = log_expit(psi), log_expit(-psi)
    before = np.concatenate([np.zeros(psi.shape[:-1] + (1,)), np.cumsum(log_off, -1)], -1)
    return before + np.concatenate([log_on, np.zeros(psi.shape[:-1] + (1,))], -1)


# ----------------------------------------------------------------------------- the reference
class CMNReference:
    """CAVI for the CMN on fixed data, vectorised over a leading restart axis R.

    ``x0`` (N, d) floats, ``y`` (N,) labels 0..L−1 (L ≥ 2), ``n_experts`` K ≥ 1; ``n_classes``
    defaults to max(y) + 1. A state is a dict with the arrays named in :data:`STATE_KEYS` (shapes
    in the module docstring); every method returns new arrays and leaves its input untouched.
    """

    def __init__(self, x0, y, n_experts: int, n_classes: int | None = None, priors: Priors = Priors()):
        x0 = np.asarray(x0, dtype=np.float64)
        y = np.asarray(y, dtype=np.int64)
        self.N, self.d = x0.shape
        self.D = self.d + 1
        self.K = int(n_experts)
        self.L = int(n_classes if n_classes is not None else y.max() + 1)
        self.h = self.L - 1
        self.n_out = self.L - 1  # output coefficient vectors: the sticks (L under an approximated output)
        self.H = self.h + 1
        self.priors = priors
        self.x0t = np.concatenate([x0, np.ones((self.N, 1))], axis=1)  # (N, D)
        # x̃0 x̃0ᵀ flattened, (N, D²): quadratic forms x̃0ᵀ B x̃0 and weighted sums Σ_n w_n x̃0x̃0ᵀ
        # for many B / w at once become one matrix product each
        self.x0_outer = (self.x0t[:, :, None] * self.x0t[:, None, :]).reshape(self.N, -1)
        self.y = y
        self.b1, self.kappa1 = stick_weights(np.eye(self.L)[y])  # (N, L−1) each
        self.gate_b, self.gate_kappa = stick_matrices(self.K)  # (K, K−1) each
        # the coefficients' prior means (K − 1, D) and (n_out, H); an approximated output's are zero (no sticks)
        self.gate_prior_mean = priors.means(self.K - 1, self.D)
        self.out_prior_mean = priors.means(self.n_out, self.H)

    # ------------------------------------------------------------------ initial states
    def initial_state(self, n_restarts: int, seed, initial: str = "prior-mean") -> dict:
        """A random initial state and the local factors of :meth:`with_initial_locals`; V = I, a = a0, b = b0 (so
        E[λ] = a0/b0). ``"prior-mean"`` (the authors'): gate and output means at the priors' means, covariances
        I/100, M uniform in ±3/√D, the only draw. ``"draws"``: gate means and M ~ N(0, 1/D), output means
        ~ N(0, 1/H), covariances I, drawn in that order."""
        rng = np.random.default_rng(seed)
        R, K, D, H, h, p = n_restarts, self.K, self.D, self.H, self.h, self.priors
        if initial == "prior-mean":
            gate_mean = np.stack([self.gate_prior_mean] * R)
            out_mean = np.stack([self.out_prior_mean] * R)
            M = rng.uniform(-3.0 / np.sqrt(D), 3.0 / np.sqrt(D), size=(R, K, h, D))
            variance = 0.01
        elif initial == "draws":
            gate_mean = rng.standard_normal((R, K - 1, D)) / np.sqrt(D)
            out_mean = rng.standard_normal((R, self.n_out, H)) / np.sqrt(H)
            M = rng.standard_normal((R, K, h, D)) / np.sqrt(D)
            variance = 1.0
        else:
            raise ValueError(f"initial must be 'prior-mean' or 'draws', got {initial!r}")
        return self.with_initial_locals({
            "gate_mean": gate_mean,
            "gate_cov": variance * np.broadcast_to(np.eye(D), (R, K - 1, D, D)).copy(),
            "out_mean": out_mean,
            "out_cov": variance * np.broadcast_to(np.eye(H), (R, self.n_out, H, H)).copy(),
            "M": M,
            "V": np.broadcast_to(np.eye(D), (R, K, D, D)).copy(),
            "a": np.full((R, K), p.a0),
            "b": np.full((R, K, h), p.b0),
        })

    def with_initial_locals(self, parameters: dict) -> dict:
        """A full state from the parameter posteriors alone (gate_mean … b): q(x1 | z = k) =
        N(M_k x̃0, diag(b_k / a_k)) — the expert's prediction at the mean of A with its expected
        noise — and q(z) uniform. Another implementation given the same parameter posteriors and
        these local factors starts from the identical state."""
        R, K, h = np.shape(parameters["M"])[:3]
        noise = np.asarray(parameters["b"]) / np.asarray(parameters["a"])[..., None]  # (R, K, h) = 1 / E[λ]
        return {
            **parameters,
            "x1_mean": np.einsum("rkid,nd->rnki", parameters["M"], self.x0t),
            "x1_cov": np.broadcast_to(noise[:, None, :, :, None] * np.eye(h), (R, self.N, K, h, h)).copy(),
            "gamma": np.full((R, self.N, K), 1.0 / K),
        }

    def check_state(self, state: dict) -> int:
        """The restart count R of ``state``, after checking every array's shape."""
        R = np.shape(state["gamma"])[0]
        K, D, H, h, N = self.K, self.D, self.H, self.h, self.N
        expected = {
            "gate_mean": (R, K - 1, D), "gate_cov": (R, K - 1, D, D), "out_mean": (R, self.n_out, H),
            "out_cov": (R, self.n_out, H, H), "M": (R, K, h, D), "V": (R, K, D, D), "a": (R, K), "b": (R, K, h),
            "x1_mean": (R, N, K, h), "x1_cov": (R, N, K, h, h), "gamma": (R, N, K),
        }
        for key, shape in expected.items():
            if np.shape(state[key]) != shape:
                raise ValueError(f"state[{key!r}] has shape {np.shape(state[key])}, expected {shape}")
        return R

    # ------------------------------------------------------------------ moments
    def gate_moments(self, state) -> tuple[np.ndarray, np.ndarray]:
        """E[ψ0] and E[ψ0²], each (R, N, K−1)."""
        mean = np.einsum("rjd,nd->rnj", state["gate_mean"], self.x0t)
        spread = self._quadratic_forms(state["gate_cov"])  # x̃0ᵀ Σ_j x̃0
        return mean, spread + mean * mean

    def _quadratic_forms(self, matrices) -> np.ndarray:
        """x̃0_nᵀ B_rj x̃0_n for matrices (R, J, D, D) → (R, N, J)."""
        R, J = matrices.shape[:2]
        return (self.x0_outer @ matrices.reshape(R * J, self.D * self.D).T).reshape(self.N, R, J).transpose(1, 0, 2)

    def _weighted_outer_sums(self, weights) -> np.ndarray:
        """Σ_n w_rnj x̃0_n x̃0_nᵀ for weights (R, N, J) → (R, J, D, D)."""
        R, _, J = weights.shape
        flat = np.swapaxes(weights, 1, 2).reshape(R * J, self.N) @ self.x0_outer
        return flat.reshape(R, J, self.D, self.D)

    def x1_mixture_moments(self, state) -> tuple[np.ndarray, np.ndarray]:
        """E[x̃1] (R, N, H) and E[x̃1x̃1ᵀ] (R, N, H, H) under q(x1) = Σ_k γ_k N(x1_mean_k, x1_cov_k)."""
        gamma, mu = state["gamma"], state["x1_mean"]
        mean = np.einsum("rnk,rnki->rni", gamma, mu)
        second = np.einsum("rnk,rnkij->rnij", gamma, state["x1_cov"] + mu[..., :, None] * mu[..., None, :])
        R, N, h = mean.shape
        ext_mean = np.concatenate([mean, np.ones((R, N, 1))], -1)
        ext_second = np.empty((R, N, h + 1, h + 1))
        ext_second[..., :h, :h] = second
        ext_second[..., :h, h] = mean
        ext_second[..., h, :h] = mean
        ext_second[..., h, h] = 1.0
        return ext_mean, ext_second

    def out_moments(self, state) -> tuple[np.ndarray, np.ndarray]:
        """E[ψ1] and E[ψ1²] under q(β1) q(x1) (the mixture marginal), each (R, N, L−1)."""
        ext_mean, ext_second = self.x1_mixture_moments(state)
        beta_second = state["out_cov"] + state["out_mean"][..., :, None] * state["out_mean"][..., None, :]
        mean = np.einsum("rli,rni->rnl", state["out_mean"], ext_mean)
        square = np.einsum("rlij,rnij->rnl", beta_second, ext_second)
        return mean, square

    def optimal_c1(self, state) -> np.ndarray:
        """c of q(ω1) at its optimum: sqrt(E[ψ1²]), (R, N, L−1)."""
        return np.sqrt(self.out_moments(state)[1])

    def optimal_c0(self, state) -> np.ndarray:
        """c of q(ω0 | z) at its optimum: sqrt(E[ψ0²]), (R, N, K−1) (the same for every z)."""
        return np.sqrt(self.gate_moments(state)[1])

    # ------------------------------------------------------------------ per-expert terms
    def _expert_terms(self, state) -> dict:
        """Per (r, n, k): E log N(x1 | A_k x̃0, Λ_k⁻¹) under q(x1|k) q(A,Λ), and H[q(x1 | k)]."""
        a, b, M, V = state["a"], state["b"], state["M"], state["V"]
        mu, cov = state["x1_mean"], state["x1_cov"]
        lam = a[..., None] / b  # E[λ] (R, K, h)
        log_lam = digamma(a)[..., None] - np.log(b)  # E[log λ]
        predicted = np.einsum("rkid,nd->rnki", M, self.x0t)  # M_k x̃0 (R, N, K, h)
        quad_v = self._quadratic_forms(V)  # x̃0ᵀ V_k x̃0 (R, N, K)
        diag_cov = np.diagonal(cov, axis1=-2, axis2=-1)
        expected_loglik = np.sum(
            0.5 * log_lam[:, None] - 0.5 * LOG2PI
            - 0.5 * lam[:, None] * (np.square(mu - predicted) + diag_cov), -1) - 0.5 * self.h * quad_v
        entropy = 0.5 * (self.h * (LOG2PI + 1.0) + cholesky_logdet(cov))
        return {"loglik": expected_loglik, "entropy": entropy, "lam": lam, "predicted": predicted}

    def output_omega(self, c1) -> np.ndarray:
        """The weight of ψ1²/2 in the output's messages, E[ω1] = b tanh(c1/2)/(2 c1), (R, N, L−1)."""
        return pg_mean(self.b1, c1)

    def output_term(self, psi_mean, psi_square, c1) -> np.ndarray:
        """The output's term of the ELBO per restart (R,): Σ κ E[ψ1] − b log 2 − ½ E[ω1] E[ψ1²] − KL(q(ω1))."""
        return np.sum(self.kappa1 * psi_mean - self.b1 * LOG2 - 0.5 * self.output_omega(c1) * psi_square
                      - pg_kl(self.b1, c1), (1, 2))

    def _out_term_given_expert(self, state, c1) -> np.ndarray:
        """Σ_l [κ_l E[ψ1_l | k] − ½ E[ω1_l] E[ψ1_l² | k]] per (r, n, k) (without −b log 2 and the
        ω KL, which do not depend on k)."""
        mu, cov = state["x1_mean"], state["x1_cov"]
        w_mean, bias_mean = state["out_mean"][..., :-1], state["out_mean"][..., -1]
        B = state["out_cov"] + state["out_mean"][..., :, None] * state["out_mean"][..., None, :]
        Bww, Bwb, Bbb = B[..., :-1, :-1], B[..., :-1, -1], B[..., -1, -1]
        omega = self.output_omega(c1)  # (R, N, L−1)
        psi_mean = np.einsum("rli,rnki->rnkl", w_mean, mu) + bias_mean[:, None, None, :]
        second = cov + mu[..., :, None] * mu[..., None, :]
        psi_square = (np.einsum("rlij,rnkij->rnkl", Bww, second)
                      + 2.0 * np.einsum("rli,rnki->rnkl", Bwb, mu) + Bbb[:, None, None, :])
        return np.sum(self.kappa1[None, :, None, :] * psi_mean - 0.5 * omega[:, :, None, :] * psi_square, -1)

    def _gate_term(self, state, c0, gate_moments=None) -> np.ndarray:
        """gate_n(k) (R, N, K): the gate's augmented log-likelihood of z = k with q(ω0 | z) = PG(b(z), c0).

        ``gate_moments``: :meth:`gate_moments` of ``state`` if already at hand."""
        psi_mean, psi_square = self.gate_moments(state) if gate_moments is None else gate_moments
        per_stick_b1 = LOG2 + 0.5 * pg_mean(1.0, c0) * psi_square + pg_kl(1.0, c0)  # cost of a reached stick
        return (np.einsum("kj,rnj->rnk", self.gate_kappa, psi_mean)
                - np.einsum("kj,rnj->rnk", self.gate_b, per_stick_b1))

    # ------------------------------------------------------------------ coordinate updates
    def update_x1(self, state, c1) -> dict:
        """q(x1 | z = k) for every k (step 2): precision diag(E[λ_k]) + Σ_l E[ω1_l] E[w_l w_lᵀ],
        linear term E[λ_k] ∘ M_k x̃0 + Σ_l (κ_l E[w_l] − E[ω1_l] E[w_l β1_l,bias])."""
        lam = state["a"][..., None] / state["b"]  # (R, K, h)
        B = state["out_cov"] + state["out_mean"][..., :, None] * state["out_mean"][..., None, :]
        omega = self.output_omega(c1)  # (R, N, L−1)
        out_precision = np.einsum("rnl,rlij->rnij", omega, B[..., :-1, :-1])  # (R, N, h, h)
        out_linear = (np.einsum("nl,rli->rni", self.kappa1, state["out_mean"][..., :-1])
                      - np.einsum("rnl,rli->rni", omega, B[..., :-1, -1]))
        precision = out_precision[:, :, None] + lam[:, None, :, :, None] * np.eye(self.h)
        linear = lam[:, None] * np.einsum("rkid,nd->rnki", state["M"], self.x0t) + out_linear[:, :, None]
        cov = spd_inverse(precision)
        return {**state, "x1_cov": cov, "x1_mean": np.einsum("rnkij,rnkj->rnki", cov, linear)}

    def update_gamma(self, state, c1, c0, gate_moments=None) -> dict:
        """q(z) (step 5): log γ_nk = gate_n(k) + E log N(x1|k) + H[q(x1|k)] + output term given k."""
        expert = self._expert_terms(state)
        logits = (self._gate_term(state, c0, gate_moments) + expert["loglik"] + expert["entropy"]
                  + self._out_term_given_expert(state, c1))
        logits = logits - logits.max(-1, keepdims=True)
        gamma = np.exp(logits)
        return {**state, "gamma": gamma / gamma.sum(-1, keepdims=True)}

    def update_out(self, state, c1) -> dict:
        """q(β1_l) (step 7): precision I/σ1² + Σ_n E[ω1_nl] E[x̃1x̃1ᵀ]_n, linear Σ_n κ_nl E[x̃1]_n."""
        ext_mean, ext_second = self.x1_mixture_moments(state)
        omega = self.output_omega(c1)
        precision = np.einsum("rnl,rnij->rlij", omega, ext_second) + np.eye(self.H) / self.priors.sigma1 ** 2
        linear = (np.einsum("nl,rni->rli", self.kappa1, ext_mean)
                  + self.out_prior_mean / self.priors.sigma1 ** 2)
        cov = spd_inverse(precision)
        return {**state, "out_cov": cov, "out_mean": np.einsum("rlij,rlj->rli", cov, linear)}

    def update_gate(self, state, c0) -> dict:
        """q(β0_j) (step 8): precision I/σ0² + Σ_n P(z_n ≥ j) E[ω0 | b=1, c0] x̃0x̃0ᵀ,
        linear Σ_n (γ_nj − P(z_n ≥ j)/2) x̃0."""
        reached, kappa = stick_weights(state["gamma"])  # (R, N, K−1) each
        weight = reached * pg_mean(1.0, c0)
        precision = self._weighted_outer_sums(weight) + np.eye(self.D) / self.priors.sigma0 ** 2
        linear = (np.einsum("rnj,nd->rjd", kappa, self.x0t)
                  + self.gate_prior_mean / self.priors.sigma0 ** 2)
        cov = spd_inverse(precision)
        return {**state, "gate_cov": cov, "gate_mean": np.einsum("rjde,rje->rjd", cov, linear)}

    def update_experts(self, state) -> dict:
        """q(A_k, Λ_k) (step 9, eq. 28 with M0 = 0, x̃0 in place of x0):
        V_k⁻¹ = I/v0 + Σ_n γ_nk x̃0x̃0ᵀ,  M_k = (Σ_n γ_nk μ_nk x̃0ᵀ) V_k,  a_k = a0 + Σ_n γ_nk / 2,
        b_ki = b0 + ½ (Σ_n γ_nk E[x1_i² | k] − [M_k V_k⁻¹ M_kᵀ]_ii)."""
        gamma, mu, cov, p = state["gamma"], state["x1_mean"], state["x1_cov"], self.priors
        V_inverse = self._weighted_outer_sums(gamma) + np.eye(self.D) / p.v0
        V = spd_inverse(V_inverse)
        cross = np.einsum("rnk,rnki,nd->rkid", gamma, mu, self.x0t)
        M = cross @ V
        second_diag = np.einsum("rnk,rnki->rki", gamma, np.diagonal(cov, axis1=-2, axis2=-1) + mu * mu)
        fitted = np.einsum("rkid,rkde,rkie->rki", M, V_inverse, M)
        return {**state, "V": V, "M": M, "a": p.a0 + 0.5 * gamma.sum(1), "b": p.b0 + 0.5 * (second_diag - fitted)}

    def e_step(self, state) -> dict:
        """Steps 1–5: q(x1 | z) and q(z), each after refreshing the q(ω) it reads."""
        c1 = self.optimal_c1(state)
        state = self.update_x1(state, c1)
        c1 = self.optimal_c1(state)
        gate_moments = self.gate_moments(state)
        c0 = np.sqrt(gate_moments[1])  # = optimal_c0(state)
        return self.update_gamma(state, c1, c0, gate_moments)

    def m_step(self, state) -> dict:
        """Steps 6–9: q(β1) after refreshing c1, q(β0) (c0 at q(β0), unchanged by the E-step), q(A, Λ)."""
        state = self.update_out(state, self.optimal_c1(state))
        state = self.update_gate(state, self.optimal_c0(state))
        return self.update_experts(state)

    def iterate(self, state, e_step_passes: int = 1) -> dict:
        """One CAVI iteration in the documented order (module docstring, steps 1–9); with
        ``e_step_passes`` > 1 the E-step (steps 1–5) is repeated that many times before the M-step
        (the local iterations of Appendix A, eq. 23; the default is one pass)."""
        for _ in range(e_step_passes):
            state = self.e_step(state)
        return self.m_step(state)

    def iterate_joint_e_step(self, state, e_step_passes: int = 1) -> dict:
        """One iteration with q(x1 | z) and q(z) updated at the same c1 (one coordinate step on q(x1, z)),
        ``e_step_passes`` times, then q(β1), q(β0), q(A, Λ): the order of ``fgraph.models.cmn.graph.cmn_schedule``."""
        for _ in range(e_step_passes):
            c1 = self.optimal_c1(state)
            state = self.update_x1(state, c1)
            state = self.update_gamma(state, c1, self.optimal_c0(state))
        return self.m_step(state)

    def fit(self, state, iterations: int, e_step_passes: int = 1) -> tuple[dict, np.ndarray]:
        """Run ``iterations`` iterations; return the final state and the ELBO after each, (iterations, R)."""
        self.check_state(state)
        trajectory = []
        for _ in range(iterations):
            state = self.iterate(state, e_step_passes)
            trajectory.append(self.elbo(state))
        return state, np.array(trajectory).reshape(iterations, -1)

    # ------------------------------------------------------------------ the bound
    def elbo_terms(self, state, c1=None, c0=None) -> dict:
        """Every term of the ELBO per restart (R,); c1, c0 default to their optimum."""
        gate_moments = self.gate_moments(state)
        c1 = self.optimal_c1(state) if c1 is None else c1
        c0 = np.sqrt(gate_moments[1]) if c0 is None else c0
        p, gamma = self.priors, state["gamma"]
        expert = self._expert_terms(state)
        psi_mean, psi_square = self.out_moments(state)
        with np.errstate(divide="ignore", invalid="ignore"):
            gamma_log_gamma = np.where(gamma > 0, gamma * np.log(gamma), 0.0)
        a, b = state["a"], state["b"]
        gamma_kl = (a - p.a0) * digamma(a) - gammaln(a) + gammaln(p.a0)
        gamma_kl = gamma_kl[..., None] + p.a0 * (np.log(b) - np.log(p.b0)) + a[..., None] * (p.b0 - b) / b
        rows_kl = 0.5 * (
            np.trace(state["V"], axis1=-2, axis2=-1)[..., None] / p.v0
            + (a[..., None] / b) * np.sum(state["M"] ** 2, -1) / p.v0
            - self.D + self.D * np.log(p.v0) - cholesky_logdet(state["V"])[..., None])
        return {
            "experts_loglik": np.einsum("rnk,rnk->r", gamma, expert["loglik"]),
            "x1_entropy": np.einsum("rnk,rnk->r", gamma, expert["entropy"]),
            "gate": np.einsum("rnk,rnk->r", gamma, self._gate_term(state, c0, gate_moments)),
            "z_entropy": -gamma_log_gamma.sum((1, 2)),
            "output": self.output_term(psi_mean, psi_square, c1),
            "kl_gate": -gaussian_kl_isotropic(state["gate_mean"], state["gate_cov"], p.sigma0 ** 2,
                                              self.gate_prior_mean).sum(-1),
            "kl_out": -gaussian_kl_isotropic(state["out_mean"], state["out_cov"], p.sigma1 ** 2,
                                             self.out_prior_mean).sum(-1),
            "kl_experts": -(gamma_kl + rows_kl).sum((1, 2)),
        }

    def elbo(self, state, c1=None, c0=None) -> np.ndarray:
        """The ELBO per restart (R,): the sum of :meth:`elbo_terms` (KL terms enter negated)."""
        return sum(self.elbo_terms(state, c1, c0).values())

    # ------------------------------------------------------------------ prediction
    def predict_proba(self, state, x_new, n_samples: int = 256, seed=0, chunk: int = 32) -> np.ndarray:
        """p(y | x_new) per restart, (R, N*, L), by Monte Carlo over q(β0) q(A, Λ) q(β1) (module doc)."""
        x_new = np.asarray(x_new, dtype=np.float64)
        xt = np.concatenate([x_new, np.ones((x_new.shape[0], 1))], axis=1)
        rng = np.random.default_rng(seed)
        R = self.check_state(state)
        gate_chol = np.linalg.cholesky(state["gate_cov"])
        out_chol = np.linalg.cholesky(state["out_cov"])
        V_chol = np.linalg.cholesky(state["V"])
        total = np.zeros((R, xt.shape[0], self.L))
        done = 0
        while done < n_samples:
            S = min(chunk, n_samples - done)
            beta0 = state["gate_mean"] + np.einsum(
                "rjde,srje->srjd", gate_chol, rng.standard_normal((S, R, self.K - 1, self.D)))
            log_gate = stick_log_probabilities(np.einsum("srjd,nd->srnj", beta0, xt))  # (S, R, N*, K)
            lam = rng.gamma(state["a"][..., None], 1.0 / state["b"], size=(S, R, self.K, self.h))
            A = state["M"] + np.einsum("rkde,srkie->srkid", V_chol,
                                       rng.standard_normal((S, R, self.K, self.h, self.D))) / np.sqrt(lam)[..., None]
            x1 = (np.einsum("srkid,nd->srnki", A, xt)
                  + rng.standard_normal((S, R, xt.shape[0], self.K, self.h)) / np.sqrt(lam)[:, :, None])
            beta1 = state["out_mean"] + np.einsum(
                "rlij,srlj->srli", out_chol, rng.standard_normal((S, R, self.L - 1, self.H)))
            psi1 = np.einsum("srli,srnki->srnkl", beta1[..., :-1], x1) + beta1[:, :, None, None, :, -1]
            log_out = stick_log_probabilities(psi1)  # (S, R, N*, K, L)
            total += np.exp(log_gate[..., None] + log_out).sum((0, 3))
            done += S
        return total / n_samples
