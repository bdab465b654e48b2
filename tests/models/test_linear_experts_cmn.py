"""A small conditional mixture network as a graph — a StickBreakingLogistic gate, LinearExperts, a
StickBreakingLogistic output — against the CMN reference's updates and ELBO, iteration by iteration."""
import numpy as np

import fgraph as fg
from fgraph.families.matrix_normal_gamma import MatrixNormalGamma as MatrixNormalGammaFamily
from fgraph.nodes import LinearExperts, MatrixNormalGamma, MvNormal, StickBreakingLogistic
from fgraph.testing.cmn_reference import CMNReference, Priors

N, D_IN, K, L = 30, 2, 3, 3
H = L - 1
PRIORS = Priors(stick_bias=False)  # eq. (4): the network below writes zero means


def network(x, labels):
    D, width = D_IN + 1, H + 1
    with fg.Model() as model:
        gate = [MvNormal(f"beta0_{j}", mean=np.zeros(D), cov=PRIORS.sigma0 ** 2 * np.eye(D)) for j in range(K - 1)]
        z = StickBreakingLogistic("z", coefficients=gate, input=x)
        theta = MatrixNormalGamma("theta", np.zeros((K, 1, H, D)), PRIORS.v0, PRIORS.a0, PRIORS.b0, batch_shape=(K, 1))
        x1 = LinearExperts("x1", switch=z, input=x, parameters=theta)
        output = [MvNormal(f"beta1_{l}", mean=np.zeros(width), cov=PRIORS.sigma1 ** 2 * np.eye(width))
                  for l in range(L - 1)]
        StickBreakingLogistic("y", coefficients=output, input=x1, observed=labels)
    return model


def schedule():
    """The reference's steps in this order: q(A, Λ) (its step 9), c1 (1), the output's message to x1, c0 (4), the
    gate's message to z, q(x1 | z) and q(z) together (2 and 5, at one c1), c1 (6), q(β1) (7), q(β0) (8), and the
    tilts at their optimum for the state the free energy is read at."""
    steps = [("theta", "out"), ("x1", "parameters"), ("y", "xi"), ("y", "input"), ("z", "xi"), ("z", "out"),
             ("x1", "out"), ("x1", "switch"), ("y", "xi")]
    steps += [step for l in range(L - 1) for step in ((f"beta1_{l}", "out"), ("y", f"coefficients{l + 1}"))]
    steps += [step for j in range(K - 1) for step in ((f"beta0_{j}", "out"), ("z", f"coefficients{j + 1}"))]
    return steps + [("y", "xi"), ("z", "xi")]


def reference_iteration(cmn, state):
    """The reference's updates in the order of :func:`schedule` (q(z) at the c1 that q(x1 | z) used)."""
    state = cmn.update_experts(state)
    c1 = cmn.optimal_c1(state)
    state = cmn.update_x1(state, c1)
    state = cmn.update_gamma(state, c1, cmn.optimal_c0(state))
    state = cmn.update_out(state, cmn.optimal_c1(state))
    return cmn.update_gate(state, cmn.optimal_c0(state))


def state_of(result):
    """The reference's state read off the engine's marginals (one restart)."""
    theta = result.marginal("theta")
    x1 = result.marginal("x1")
    gate = [result.marginal(f"beta0_{j}") for j in range(K - 1)]
    output = [result.marginal(f"beta1_{l}") for l in range(L - 1)]
    return {
        "gate_mean": np.stack([q.mean for q in gate])[None], "gate_cov": np.stack([q.cov for q in gate])[None],
        "out_mean": np.stack([q.mean for q in output])[None], "out_cov": np.stack([q.cov for q in output])[None],
        "M": theta.matrix_mean[:, 0][None], "V": theta.column_covariance[:, 0][None],
        "a": theta.shape[:, 0, 0][None], "b": theta.rate[:, 0][None],
        "x1_mean": np.stack([c.mean for c in x1.components], axis=1)[None],
        "x1_cov": np.stack([np.broadcast_to(c.cov, (N, H, H)) for c in x1.components], axis=1)[None],
        "gamma": result.marginal("z").probabilities[None],
    }


def test_network_equals_the_cmn_reference():
    """From the engine's state after one sweep, the reference's updates give the engine's next sweeps: the free
    energy is minus the reference's ELBO at every iteration, and the posteriors agree."""
    rng = np.random.default_rng(11)
    x = rng.normal(size=(N, D_IN))
    labels = rng.integers(L, size=N)
    cmn = CMNReference(x, labels, n_experts=K, n_classes=L, priors=PRIORS)
    start = cmn.initial_state(1, seed=12)
    model = network(x, labels)
    init = {"theta": MatrixNormalGammaFamily(start["M"][0][:, None], start["V"][0][:, None],
                                             start["a"][0][:, None, None], start["b"][0][:, None]),
            "x1": fg.families.MvNormalMeanCovariance(np.zeros((N, H)), np.eye(H)),
            "z": fg.families.Categorical(np.full((N, K), 1.0 / K))}
    for j in range(K - 1):
        init[f"beta0_{j}"] = fg.families.MvNormalMeanCovariance(start["gate_mean"][0, j], start["gate_cov"][0, j])
    for l in range(L - 1):
        init[f"beta1_{l}"] = fg.families.MvNormalMeanCovariance(start["out_mean"][0, l], start["out_cov"][0, l])
    iterations = 6
    first = fg.infer(model, algorithm="vmp", iterations=1, schedule=schedule(), init=init)
    result = fg.infer(model, algorithm="vmp", iterations=iterations, schedule=schedule(), init=init)
    state = state_of(first)
    np.testing.assert_allclose(result.free_energy[0], -cmn.elbo(state)[0], rtol=1e-10)
    elbos = []
    for _ in range(iterations - 1):
        state = reference_iteration(cmn, state)
        elbos.append(cmn.elbo(state)[0])
    np.testing.assert_allclose(result.free_energy[1:], -np.array(elbos), rtol=1e-9)
    assert np.all(np.diff(result.free_energy) <= 1e-9)
    final = state_of(result)
    for key in ("gamma", "x1_mean", "M", "b", "out_mean", "gate_mean"):
        np.testing.assert_allclose(final[key], state[key], rtol=1e-8, atol=1e-10, err_msg=key)
