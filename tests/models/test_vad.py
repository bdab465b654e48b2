"""The voice-activity model of fgraph.models.vad: its graph against a hand-written numpy VMP, the segments of a
signal simulated from the model, streaming against one causal run, the speech prior's fit, and bad input."""
import numpy as np
import pytest
from scipy.special import logsumexp

import fgraph as fg
from fgraph import jit
from fgraph.models.vad import (SPEECH, StreamingVAD, VADParameters, detect_voice, estimate_observation_var,
                               fit_speech_prior, learn_speech_prior, signal_scale, vad_model)

# the simulation's numbers, in the units of the simulated signal (its mean power is about 0.52)
PARAMETERS = VADParameters(rho=0.95, speech_var=0.09, noise_var=0.01, observation_var=0.05, switch=1e-3)


def in_units(y, parameters=PARAMETERS):
    """The simulation's parameters in the unit detect_voice sees y in: y divided by its root mean square."""
    return parameters.in_units_of(signal_scale(y))


def simulate(parameters, T, rng, segment=400):
    """Speech segments of ``segment`` samples from the AR(1), near-silence between, plus the observation noise."""
    active = (np.arange(T) // segment) % 2 == 0
    speech = np.zeros(T)
    for t in range(1, T):
        speech[t] = parameters.rho * speech[t - 1] + rng.normal(0, np.sqrt(parameters.speech_var))
    clean = np.where(active, speech, rng.normal(0, np.sqrt(parameters.noise_var), T))
    return clean + rng.normal(0, np.sqrt(parameters.observation_var), T), active


def numpy_vmp(y, p, iterations):
    """Structured mean field q(s_1:T) q(z_1:T) Π q(n_t), written out: Kalman smoother for s, forward–backward for
    z, closed form for n, in the engine's sweep order (s, n, z); returns q(z_t = speech) and −ELBO per sweep."""
    T = len(y)
    r = np.full((T, 2), 0.5)
    A = p.transition
    start_var = p.speech_var / (1 - p.rho**2)
    trace = []
    for _ in range(iterations):
        # q(s): Kalman smoother with observations y_t of precision r_t / v_y
        obs_prec = r[:, SPEECH] / p.observation_var
        fm, fv = np.empty(T), np.empty(T)
        m, v = 0.0, start_var
        pm, pv = np.empty(T), np.empty(T)
        for t in range(T):
            pm[t], pv[t] = m, v
            prec = 1 / v + obs_prec[t]
            fm[t] = (m / v + obs_prec[t] * y[t]) / prec
            fv[t] = 1 / prec
            m, v = p.rho * fm[t], p.rho**2 * fv[t] + p.speech_var
        sm, sv = fm.copy(), fv.copy()
        cross = np.zeros(T)  # Cov(s_t, s_{t+1})
        for t in range(T - 2, -1, -1):
            gain = fv[t] * p.rho / pv[t + 1]
            sm[t] = fm[t] + gain * (sm[t + 1] - pm[t + 1])
            sv[t] = fv[t] + gain**2 * (sv[t + 1] - pv[t + 1])
            cross[t] = gain * sv[t + 1]
        # q(n_t)
        n_prec = 1 / p.noise_var + r[:, 1] / p.observation_var
        nv = 1 / n_prec
        nm = nv * r[:, 1] * y / p.observation_var
        # q(z): forward–backward with the expected log-likelihoods
        log_like = np.stack([-0.5 * np.log(2 * np.pi * p.observation_var) - ((y - sm) ** 2 + sv) / (2 * p.observation_var),
                             -0.5 * np.log(2 * np.pi * p.observation_var) - ((y - nm) ** 2 + nv) / (2 * p.observation_var)],
                            axis=1)
        log_alpha = np.empty((T, 2))
        log_alpha[0] = np.log([p.initial, 1 - p.initial]) + log_like[0]
        for t in range(1, T):
            log_alpha[t] = logsumexp(np.log(A) + log_alpha[t - 1][None, :], axis=1) + log_like[t]
        log_beta = np.zeros((T, 2))
        for t in range(T - 2, -1, -1):
            log_beta[t] = logsumexp(np.log(A).T + (log_like[t + 1] + log_beta[t + 1])[None, :], axis=1)
        log_post = log_alpha + log_beta
        r = np.exp(log_post - logsumexp(log_post, axis=1, keepdims=True))
        log_z = logsumexp(log_alpha[-1])  # log Σ_z p(z) exp(Σ_t E log p(y_t | ...)): the z-part of the bound
        # −ELBO = −(log_z + E_q(s)[log p(s)] + H[q(s)] + E_q(n)[log p(n)] + H[q(n)]) with q(z) the exact posterior
        # of its part; the s-chain's prior term and entropy in closed form from the smoothed moments
        second = sv + sm**2
        lag = cross[:-1] + sm[:-1] * sm[1:]
        log_prior_s = (-0.5 * np.log(2 * np.pi * start_var) - second[0] / (2 * start_var)
                       - 0.5 * (T - 1) * np.log(2 * np.pi * p.speech_var)
                       - np.sum(second[1:] - 2 * p.rho * lag + p.rho**2 * second[:-1]) / (2 * p.speech_var))
        joint_var = sv[:-1] * sv[1:] - cross[:-1] ** 2
        # H[q(s_1:T)] = H(s_1) + Σ_t [H(s_t, s_{t+1}) − H(s_t)] for a Markov chain, H of a pair log(2πe) + ½ log det
        entropy_s = (0.5 * np.log(2 * np.pi * np.e * sv[0])
                     + np.sum(np.log(2 * np.pi * np.e) + 0.5 * np.log(joint_var) - 0.5 * np.log(2 * np.pi * np.e * sv[:-1])))
        log_prior_n = np.sum(-0.5 * np.log(2 * np.pi * p.noise_var) - (nm**2 + nv) / (2 * p.noise_var))
        entropy_n = np.sum(0.5 * np.log(2 * np.pi * np.e * nv))
        trace.append(-(log_z + log_prior_s + entropy_s + log_prior_n + entropy_n))
    return r[:, SPEECH], np.array(trace)


def test_the_graph_equals_a_hand_written_structured_vmp():
    y, _ = simulate(PARAMETERS, 300, np.random.default_rng(0))
    found = detect_voice(y, in_units(y), iterations=6, tol=None)
    assert found.scale == pytest.approx(np.sqrt(np.mean(y**2)), rel=1e-12)
    speech, trace = numpy_vmp(y / found.scale, in_units(y), 6)  # the model sees y / its root mean square
    np.testing.assert_allclose(found.speech_probability, speech, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(found.free_energy, trace, rtol=1e-9)


def test_the_switch_recovers_the_simulated_segments(recursion_path):
    y, active = simulate(PARAMETERS, 4000, np.random.default_rng(1))
    found = detect_voice(y, in_units(y))
    assert np.mean((found.speech_probability > 0.5) == active) >= 0.95
    assert found.iterations < 60  # converged, not stopped
    assert np.all(np.diff(found.free_energy) <= 1e-9 * np.abs(found.free_energy[:-1]))


def test_compiled_loops_and_numpy_scans_give_the_same_detection():
    if not jit.AVAILABLE:
        pytest.skip("numba is not installed")
    y, _ = simulate(PARAMETERS, 3000, np.random.default_rng(2))
    with jit.compiled_loops(False):
        scans = detect_voice(y, in_units(y), iterations=10, tol=None)
    with jit.compiled_loops(True):
        loops = detect_voice(y, in_units(y), iterations=10, tol=None)
    np.testing.assert_allclose(loops.speech_probability, scans.speech_probability, rtol=0, atol=1e-9)
    np.testing.assert_allclose(loops.free_energy, scans.free_energy, rtol=1e-11)


def test_one_chunk_streams_as_the_offline_detection():
    y, _ = simulate(PARAMETERS, 1500, np.random.default_rng(3))
    offline = detect_voice(y, in_units(y))
    stream = StreamingVAD(in_units(y))
    np.testing.assert_array_equal(stream.update(y), offline.speech_probability)
    assert stream.free_energy == [offline.free_energy[-1]]


def test_chunks_continue_where_the_last_one_ended():
    """Each chunk's chains start from the previous chunk's end: streamed in chunks of 500 samples (segments of
    400), the detection is the offline one up to the look-ahead a chunk lacks and the unit it has measured so
    far (the root mean square of the samples received, 0.87 of the whole signal's mean power after the first
    chunk): away from the edges of the segments the probabilities agree, at the edges a decision moves by a few
    dozen samples."""
    y, active = simulate(PARAMETERS, 4000, np.random.default_rng(6))
    offline = detect_voice(y, in_units(y)).speech_probability
    stream = StreamingVAD(in_units(y))
    pieces = [stream.update(y[i:i + 500]) for i in range(0, len(y), 500)]
    assert [len(p) for p in pieces] == [500] * 8
    assert stream.scale == pytest.approx(signal_scale(y), rel=1e-12)  # after the last chunk: the whole signal's
    streamed = stream.speech_probability
    edges = np.nonzero(np.diff(active))[0] + 0.5
    distance = np.min(np.abs(np.arange(len(y))[:, None] - edges[None, :]), axis=1)
    agree = (streamed > 0.5) == (offline > 0.5)
    assert agree.mean() > 0.97 and np.all(distance[~agree] < 50)
    assert np.max(np.abs(streamed - offline)[distance >= 50]) < 0.05
    assert np.mean((streamed > 0.5) == active) >= 0.95
    np.testing.assert_allclose(stream._filter.state["z"]["initial"],
                               PARAMETERS.transition @ [streamed[-1], 1 - streamed[-1]], rtol=1e-9)
    fresh = StreamingVAD(in_units(y)).update(y[2000:2500])  # the same chunk without its past: a different start
    assert np.max(np.abs(fresh - streamed[2000:2500])) > 0.05


def test_chunks_at_a_fixed_level_give_the_offline_decisions():
    """With the unit fixed (``scale=``, here the whole signal's, which the offline detection uses), only the
    look-ahead separates the stream from the offline detection: chunks of 500 samples give its decisions."""
    y, _ = simulate(PARAMETERS, 4000, np.random.default_rng(6))
    offline = detect_voice(y, in_units(y)).speech_probability
    stream = StreamingVAD(in_units(y), scale=signal_scale(y))
    for i in range(0, len(y), 500):
        stream.update(y[i:i + 500])
    assert stream.scale == signal_scale(y)
    np.testing.assert_array_equal(stream.speech_probability > 0.5, offline > 0.5)
    assert np.max(np.abs(stream.speech_probability - offline)) < 0.05


def test_streaming_is_causal_at_the_chunk_boundaries():
    """What a chunk reports depends on the samples up to its end only: changing later samples changes nothing
    before them (chunks of one sample are therefore a filter)."""
    y, _ = simulate(PARAMETERS, 600, np.random.default_rng(9))
    changed = y.copy()
    changed[400:] = np.random.default_rng(10).normal(0, 2.0, 200)
    first, second = StreamingVAD(in_units(y)), StreamingVAD(in_units(y))
    for start in range(0, 600, 100):
        first.update(y[start:start + 100])
        second.update(changed[start:start + 100])
    np.testing.assert_array_equal(first.speech_probability[:400], second.speech_probability[:400])
    assert np.max(np.abs(first.speech_probability[400:] - second.speech_probability[400:])) > 0.1


def test_single_samples_stream():
    y, _ = simulate(PARAMETERS, 40, np.random.default_rng(7))
    stream = StreamingVAD(in_units(y))
    for sample in y:
        stream.update([sample])
    assert stream.speech_probability.shape == (40,)
    assert np.all((stream.speech_probability >= 0) & (stream.speech_probability <= 1))


def test_the_speech_prior_is_the_least_squares_ar1_fit():
    rng = np.random.default_rng(4)
    s = np.zeros(50000)
    for t in range(1, len(s)):
        s[t] = 0.9 * s[t - 1] + rng.normal(0, 1.0)
    rho, var = fit_speech_prior(s * 7.0 + 3.0)  # scale and offset do not matter: the fit standardises
    assert rho == pytest.approx(0.9, abs=0.005)
    assert var == pytest.approx(1 - 0.9**2, rel=0.02)  # innovation variance of the unit-variance process


def test_the_speech_prior_learned_by_vmp_agrees_with_least_squares():
    rng = np.random.default_rng(8)
    s = np.zeros(20000)
    for t in range(1, len(s)):
        s[t] = 0.85 * s[t - 1] + rng.normal(0, 1.0)
    learned, fitted = learn_speech_prior(s), fit_speech_prior(s)
    np.testing.assert_allclose(learned, fitted, rtol=2e-3)  # the priors' pull on 20,000 steps
    assert learned[0] == pytest.approx(0.85, abs=0.01)


def test_the_observation_variance_estimate_is_the_noise_floor():
    rng = np.random.default_rng(5)
    rate, noise_var = 16000, 0.3
    y = rng.normal(0, np.sqrt(noise_var), 32000)
    y[:16000] += rng.normal(0, 3.0, 16000)  # speech-like power in the first half
    estimate = estimate_observation_var(y, rate) * signal_scale(y) ** 2  # returned in units of the mean power
    assert estimate == pytest.approx(noise_var, rel=0.1)  # low by about 7 % (the docstring)
    assert estimate < noise_var


def test_the_graph_has_the_papers_nodes():
    model = vad_model(np.zeros(5), VADParameters())
    kinds = sorted(type(node).__name__ for node in model.nodes)
    assert kinds == ["GaussMarkovChainNode", "MarkovChainNode", "NormalMeanVariance", "SwitchingNormalNode"]


@pytest.mark.parametrize("bad, match", [
    (np.array([0.1, np.nan, 0.2]), "NaN or infinite"), (np.zeros((2, 3)), "one-dimensional"), (np.zeros(1), "at least 2"),
])
def test_bad_signals_are_named_errors(bad, match):
    with pytest.raises(fg.ModelError, match=f"detect_voice: .*{match}"):
        detect_voice(bad)


@pytest.mark.parametrize("field, value, match", [
    ("speech_var", 0.0, "speech_var must be a positive"), ("observation_var", np.nan, "observation_var"),
    ("rho", 0.0, "rho must be"), ("switch", 1.0, "switch must be a probability"), ("initial", 0.0, "initial"),
])
def test_bad_parameters_are_named_errors(field, value, match):
    with pytest.raises(fg.ModelError, match=f"VADParameters: {match}"):
        VADParameters(**{field: value})
