"""The evidence an online filter reports under a non-conjugate VMP model, against each chunk run by hand.

Under a conjugate model one VMP sweep is already at the fixed point, so every sweep's free energy is the same and
a filter that read the first sweep's instead of the last would pass. The Pólya-Gamma ``Logistic`` node is not
conjugate: its free energy falls over the sweeps (the tilt ξ and q(β) are refined in turn), and only the last
sweep's value is the bound of the converged chunk. ``log_evidence`` must be

    Σ_k −F_k[last],   F_k the free energy per sweep of chunk k's model from the prior carried out of chunk k − 1,

and ``StreamingVAD.free_energy`` must list each chunk's F_k[last] of its own (switching) model, also VMP and
not conjugate.
"""
import numpy as np
import pytest

import fgraph as fg
from fgraph.models.streaming import OnlineFilter
from fgraph.models.vad.model import StreamingVAD, VADParameters, initial_beliefs, vad_model
from fgraph.nodes.logistic import Logistic
from fgraph.nodes.mvnormal import MvNormal

SWEEPS = 8
CHUNKS = ((0, 15), (15, 40), (40, 80))


def classification(seed=11, N=80):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, 2))
    y = (rng.random(N) < 1 / (1 + np.exp(-(X @ [1.5, -2.0] + 0.3)))).astype(float)
    return X, y


def build(chunk, start):
    """A Bayesian logistic regression on one chunk (features, labels); β's prior is the carried posterior."""
    features, labels = chunk
    prior = start.get("beta")
    with fg.Model() as model:
        beta = MvNormal("beta", *((prior.mean, prior.cov) if prior is not None else (np.zeros(3), 4 * np.eye(3))))
        Logistic("y", beta, features, observed=labels)  # Pólya-Gamma: VMP, not conjugate
    return model


def by_hand(X, y):
    """Each chunk's free energy per sweep, each chunk run by fg.infer from the previous chunk's posterior of β."""
    traces, start = [], {}
    for first, stop in CHUNKS:
        result = fg.infer(build((X[first:stop], y[first:stop]), start), algorithm="vmp", iterations=SWEEPS,
                          tol=None, free_energy=True)
        traces.append(np.asarray(result.free_energy, dtype=float))
        start = {"beta": result.marginal("beta")}
    return traces


def test_the_streamed_evidence_of_a_non_conjugate_model_is_the_sum_of_each_chunks_last_free_energy():
    X, y = classification()
    stream = OnlineFilter(build, carry=("beta",), algorithm="vmp", iterations=SWEEPS, tol=None, free_energy=True)
    for first, stop in CHUNKS:
        stream.update((X[first:stop], y[first:stop]))
    traces = by_hand(X, y)
    # the test can tell the sweeps apart: every chunk's bound moves by well over the tolerance below
    assert all(len(trace) == SWEEPS for trace in traces)
    assert min(trace[0] - trace[-1] for trace in traces) > 1e-3
    expected = -sum(trace[-1] for trace in traces)
    assert stream.log_evidence == pytest.approx(expected, rel=1e-10, abs=1e-10)
    assert stream.log_evidence != pytest.approx(-sum(trace[0] for trace in traces), rel=1e-6)
    assert stream.chunks == len(CHUNKS)


def test_the_streamed_evidence_after_each_chunk_is_the_running_sum():
    """After every chunk, not only at the end: −Σ of the last free energies of the chunks so far."""
    X, y = classification(seed=12)
    stream = OnlineFilter(build, carry=("beta",), algorithm="vmp", iterations=SWEEPS, tol=None, free_energy=True)
    traces = by_hand(X, y)
    for k, (first, stop) in enumerate(CHUNKS):
        stream.update((X[first:stop], y[first:stop]))
        assert stream.log_evidence == pytest.approx(-sum(t[-1] for t in traces[:k + 1]), rel=1e-10, abs=1e-10)


def test_streaming_vad_reports_each_chunks_last_free_energy():
    """``StreamingVAD.free_energy[k]`` is the last sweep's free energy of chunk k's model, run here by hand: the
    chunk scaled by the root mean square of all samples so far, the chains started from the previous chunk's
    prediction (N(ρ m, ρ² v + σ²) of the speech state, A p of the switch), the speech state's start carried
    into the new chunk's units when the scale changes."""
    parameters = VADParameters(rho=0.95, speech_var=0.09, noise_var=0.01, observation_var=0.05, switch=1e-3)
    rng = np.random.default_rng(5)
    T = 900
    speech = np.zeros(T)
    for t in range(1, T):
        speech[t] = 0.95 * speech[t - 1] + rng.normal(0, 0.3)
    active = (np.arange(T) // 300) % 2 == 0
    y = 40.0 * (np.where(active, speech, rng.normal(0, 0.1, T)) + rng.normal(0, np.sqrt(0.05), T))
    sweeps = 12
    stream = StreamingVAD(parameters, iterations=sweeps, tol=None)
    bounds, firsts, start, seen, previous = [], [], {}, np.zeros(0), None
    p = parameters
    for first in range(0, T, 300):
        chunk = y[first:first + 300]
        stream.update(chunk)
        seen = np.concatenate([seen, chunk])
        scale = np.sqrt(np.mean(seen**2))
        if start:
            ratio = previous / scale
            start = {"s": {"initial_mean": start["s"]["initial_mean"] * ratio,
                           "initial_var": start["s"]["initial_var"] * ratio**2}, "z": start["z"]}
        result = fg.infer(vad_model(chunk / scale, p, start=start or None), algorithm="vmp", iterations=sweeps,
                          tol=None, init=initial_beliefs(chunk.size, p))
        trace = np.asarray(result.free_energy, dtype=float)
        bounds.append(trace[-1])
        firsts.append(trace[0])
        q_s, q_z = result.marginal("s"), result.marginal("z").probabilities
        start = {"s": {"initial_mean": p.rho * q_s.mean[-1], "initial_var": p.rho**2 * q_s.var[-1] + p.speech_var},
                 "z": {"initial": p.transition @ q_z[-1]}}
        previous = scale
    assert min(f - b for f, b in zip(firsts, bounds)) > 1e-3  # the sweeps differ: first ≠ last
    np.testing.assert_allclose(stream.free_energy, bounds, rtol=1e-9)
