"""The switching normal likelihood in graphs: a hand-written numpy CAVI, a bound on the exact evidence, and a
voice-activity model of chains (the switch recovers the segments it was simulated with)."""
import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import norm

import fgraph as fg
from fgraph.families import Categorical, NormalMeanVariance
from fgraph.nodes import Categorical as CategoricalPrior
from fgraph.nodes import GaussMarkovChain, MarkovChain, Normal
from fgraph.nodes.switching_normal import SwitchingNormal

PRIOR_MEANS, PRIOR_VARS, NOISE_VARS, PI = np.array([0.0, 0.0]), np.array([1.0, 0.01]), np.array([0.5, 0.5]), 0.5


def iid_model(y):
    T = len(y)
    with fg.Model() as model:
        s = Normal("s", mean=PRIOR_MEANS[0], var=PRIOR_VARS[0], batch_shape=(T,))
        n = Normal("n", mean=PRIOR_MEANS[1], var=PRIOR_VARS[1], batch_shape=(T,))
        z = CategoricalPrior("z", p=[PI, 1 - PI], batch_shape=(T,))
        SwitchingNormal("y", z, [s, n], var=NOISE_VARS, observed=y)
    return model


def initial_state(T):
    return {"z": Categorical(np.full((T, 2), 0.5)), "s": NormalMeanVariance(np.zeros(T), np.ones(T)),
            "n": NormalMeanVariance(np.zeros(T), np.full(T, 0.01))}


def numpy_cavi(y, iterations):
    """Coordinate ascent on q(m_1) q(m_2) q(z) per point, in the engine's order (m_1, m_2, z); −ELBO per sweep."""
    T = len(y)
    r = np.full((T, 2), 0.5)
    mean, var = np.zeros((T, 2)), np.tile(PRIOR_VARS, (T, 1))
    mean[:, 1], var[:, 0] = 0.0, 1.0
    trajectory = []
    for _ in range(iterations):
        for k in range(2):
            precision = 1.0 / PRIOR_VARS[k] + r[:, k] / NOISE_VARS[k]
            var[:, k] = 1.0 / precision
            mean[:, k] = var[:, k] * (PRIOR_MEANS[k] / PRIOR_VARS[k] + r[:, k] * y / NOISE_VARS[k])
        expected_log = -0.5 * np.log(2 * np.pi * NOISE_VARS) - 0.5 * ((y[:, None] - mean) ** 2 + var) / NOISE_VARS
        logits = np.log([PI, 1 - PI]) + expected_log
        r = np.exp(logits - logsumexp(logits, axis=1, keepdims=True))
        prior_term = -0.5 * np.log(2 * np.pi * PRIOR_VARS) - 0.5 * ((mean - PRIOR_MEANS) ** 2 + var) / PRIOR_VARS
        entropy_m = 0.5 * np.log(2 * np.pi * np.e * var)
        entropy_z = -np.sum(r * np.log(r))
        elbo = np.sum(r * expected_log) + np.sum(r * np.log([PI, 1 - PI])) + prior_term.sum() + entropy_m.sum() + entropy_z
        trajectory.append(-elbo)
    return np.array(trajectory), r, mean, var


def test_equals_a_hand_written_cavi_and_bounds_the_exact_evidence():
    y = np.random.default_rng(0).normal(0, 1, 25)
    result = fg.infer(iid_model(y), algorithm="vmp", iterations=12, init=initial_state(25))
    trajectory, r, mean, var = numpy_cavi(y, 12)
    np.testing.assert_allclose(result.free_energy, trajectory, rtol=1e-10)
    np.testing.assert_allclose(result.marginal("z").probabilities, r, rtol=1e-9)
    np.testing.assert_allclose(result.marginal("s").mean, mean[:, 0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(result.marginal("n").var, var[:, 1], rtol=1e-9)
    exact = np.sum(logsumexp(np.log([PI, 1 - PI]) + norm.logpdf(y[:, None], 0, np.sqrt(PRIOR_VARS + NOISE_VARS)),
                             axis=1))
    assert result.free_energy[-1] >= -exact
    assert np.all(np.diff(result.free_energy) <= 1e-12)


def simulate_voice(T, snr_db, rng):
    """Speech as an AR(1) in segments of 500 samples, silence between; white noise at the SNR of the speech parts."""
    speech = np.zeros(T)
    for t in range(1, T):
        speech[t] = 0.95 * speech[t - 1] + rng.normal(0, 0.3)
    active = (np.arange(T) // 500) % 2 == 0
    clean = np.where(active, speech, rng.normal(0, 0.1, T))
    power = np.mean(clean[active] ** 2)
    return clean + rng.normal(0, np.sqrt(power / 10 ** (snr_db / 10)), T), active, power / 10 ** (snr_db / 10)


def test_a_voice_activity_model_recovers_the_segments_it_was_simulated_with():
    """s an AR(1) chain, n i.i.d. near zero, z a sticky Markov chain (the model of §6.2.2), at 10 dB."""
    T = 3000
    y, active, noise_var = simulate_voice(T, 10.0, np.random.default_rng(1))
    stay = 1 - 1e-3
    with fg.Model() as model:
        s = GaussMarkovChain("s", 0.95, 0.09, 0.0, 1.0, T)
        n = Normal("n", mean=0.0, var=0.01, batch_shape=(T,))
        z = MarkovChain("z", [0.5, 0.5], [[stay, 1 - stay], [1 - stay, stay]], T)
        SwitchingNormal("y", z, [s, n], var=noise_var, observed=y)
    result = fg.infer(model, algorithm="vmp", iterations=30, init=initial_state(T))
    speech = result.marginal("z").probabilities[:, 0]
    assert np.mean((speech > 0.5) == active) >= 0.95
    assert np.all(np.diff(result.free_energy) <= 1e-9 * np.abs(result.free_energy[:-1]))


@pytest.mark.parametrize("var, match", [(-1.0, "var must be one positive"), ([1.0, 2.0, 3.0], "var must be one")])
def test_bad_variances_are_named_errors(var, match):
    with fg.Model():
        z = CategoricalPrior("z", p=[0.5, 0.5])
        with pytest.raises(fg.ModelError, match=f"node 'y'.*{match}"):
            SwitchingNormal("y", z, [0.0, 1.0], var=var, observed=0.3)


def test_too_few_means_is_a_named_error():
    with fg.Model():
        z = CategoricalPrior("z", p=[1.0])
        with pytest.raises(fg.ModelError, match="at least two means"):
            SwitchingNormal("y", z, [0.0], var=1.0, observed=0.3)


def test_a_mixture_switching_along_a_chain_is_refused_and_points_here():
    """The mixture node compares its inputs' evidences; a chain's message to step t carries every other step's."""
    from fgraph.nodes import Mixture

    T = 50
    with fg.Model() as model:
        s = GaussMarkovChain("s", 0.95, 0.09, 0.0, 1.0, T)
        n = Normal("n", mean=0.0, var=0.01, batch_shape=(T,))
        z = MarkovChain("z", [0.5, 0.5], [[0.99, 0.01], [0.01, 0.99]], T)
        x = Mixture("x", z, [s, n])
        Normal("y", mean=x, var=0.5, observed=np.zeros(T))
    for algorithm in ("bp", "vmp"):
        with pytest.raises(fg.ModelError, match=r"node 'x' \(MixtureNode\) switches between its inputs at every "
                                                r"step of the sequence of 's'.*SwitchingNormal"):
            fg.infer(model, algorithm=algorithm, init=initial_state(T))
