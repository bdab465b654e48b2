"""Voice activity detection on 10 s of 16 kHz speech: the switching model by VMP, against a numpy loop.

Audio: the first 10 s (160,000 samples) of the bundled espeak-ng recording, standardised, plus white
noise of variance 0.5 (the paper's setting); quick: the 2 s LibriSpeech clip. Model:
:mod:`fgraph.models.vad` with ρ, σ² fitted to the clean signal and v_y = 0.5.

Ours (what a user pays): ``detect_voice`` — building the graph, compiling, VMP sweeps until the free
energy changes by less than 1e-6 nats per sample, reading q(z_t = speech). ``ratio`` (the figure the
project tracks) is that time over the audio's duration, the real-time factor of offline smoothing;
``ratio_vs_peer`` is ours over the peer's time. Online: :class:`~fgraph.models.vad.model.StreamingVAD` in
100 ms chunks, its real-time factor ``online_real_time_factor``.

Peer: the same structured VMP as a good numpy user writes it — per sweep a Kalman filter and RTS
smoother for q(s) and a scaled forward–backward pass for q(z), each a Python loop over time on floats,
and q(n) and the expected log-likelihoods vectorised — run for as many sweeps as ours needed.

Agreement (exit status 1 if it fails): the speech probabilities within 1e-6 of the peer's at every sample.
For context the line also reports Google's WebRTC VAD on the same audio (``webrtc_s``, mode 3, 10 ms
frames; frame decisions from a fixed-point C detector, not a posterior), when ``webrtcvad`` is installed.

Run from the repository root::

    python -m benchmarks.vad            # 10 s of audio
    python -m benchmarks.vad --quick    # 2 s

Timing: ``time.perf_counter``; ours, online and the peer alternate within each repeat (5 repeats, quick 3;
the peer 2), medians, after an untimed warm-up of ours (it loads the compiled loops). The last line is one
JSON object.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import math
import sys
import time

import numpy as np

from benchmarks.timing import alternating_medians
from fgraph import jit
from fgraph.datasets.audio import load_speech, standardise
from fgraph.models.vad import StreamingVAD, VADParameters, detect_voice, fit_speech_prior, signal_scale

SECONDS, QUICK_SECONDS = 10.0, None  # quick: the whole LibriSpeech clip
NOISE_VAR = 0.5
CHUNK_SECONDS = 0.1
AGREEMENT = 1e-6
LOG_2PI = math.log(2.0 * math.pi)


def audio(quick: bool):
    """(clean standardised speech, noisy signal, rate)."""
    name = "librispeech" if quick else "espeak"
    signal, rate = load_speech(name)
    if not quick:
        signal = signal[: int(SECONDS * rate)]
    clean = standardise(signal)
    noisy = clean + np.random.default_rng(0).normal(0.0, math.sqrt(NOISE_VAR), clean.size)
    return clean, noisy, rate


def numpy_vmp(y, p: VADParameters, sweeps: int) -> np.ndarray:
    """q(z_t = speech) after ``sweeps`` sweeps of structured mean field q(s_1:T) q(z_1:T) Π q(n_t), in the
    engine's order (s, n, z) from z undecided: Kalman/RTS and forward–backward loops on Python floats."""
    T = y.size
    y_list = y.tolist()
    r = np.full(T, 0.5)  # q(z_t = speech)
    a, q, v = p.rho, p.speech_var, p.observation_var
    start_var = q / (1.0 - a * a) if abs(a) < 1 else q
    e = p.switch
    log_stay, log_move = math.log(1 - e), math.log(e)
    for _ in range(sweeps):
        # q(s): Kalman filter and RTS smoother, observations y_t of precision r_t / v
        precision_obs = (r / v).tolist()
        fm, fv, pm, pv = [0.0] * T, [0.0] * T, [0.0] * T, [0.0] * T
        m, var = 0.0, start_var
        for t in range(T):
            pm[t], pv[t] = m, var
            precision = 1.0 / var + precision_obs[t]
            m = (m / var + precision_obs[t] * y_list[t]) / precision
            var = 1.0 / precision
            fm[t], fv[t] = m, var
            m, var = a * m, a * a * var + q
        sm, sv = fm[:], fv[:]
        for t in range(T - 2, -1, -1):
            gain = fv[t] * a / pv[t + 1]
            sm[t] = fm[t] + gain * (sm[t + 1] - pm[t + 1])
            sv[t] = fv[t] + gain * gain * (sv[t + 1] - pv[t + 1])
        s_mean, s_var = np.array(sm), np.array(sv)
        # q(n_t)
        n_var = 1.0 / (1.0 / p.noise_var + (1.0 - r) / v)
        n_mean = n_var * (1.0 - r) * y / v
        # q(z): scaled forward–backward over the expected log-likelihoods
        speech = -0.5 * (LOG_2PI + math.log(v)) - ((y - s_mean) ** 2 + s_var) / (2 * v)
        silence = -0.5 * (LOG_2PI + math.log(v)) - ((y - n_mean) ** 2 + n_var) / (2 * v)
        shift = np.maximum(speech, silence)
        like1, like0 = np.exp(speech - shift).tolist(), np.exp(silence - shift).tolist()
        stay, move = math.exp(log_stay), math.exp(log_move)
        alpha1, alpha0 = [0.0] * T, [0.0] * T
        f1, f0 = p.initial, 1.0 - p.initial
        for t in range(T):
            alpha1[t], alpha0[t] = f1, f0
            g1, g0 = f1 * like1[t], f0 * like0[t]
            total = g1 + g0
            g1, g0 = g1 / total, g0 / total
            f1, f0 = stay * g1 + move * g0, move * g1 + stay * g0
        b1, b0 = 1.0, 1.0
        posterior = [0.0] * T
        for t in range(T - 1, -1, -1):
            joint1, joint0 = alpha1[t] * b1, alpha0[t] * b0
            # q(z_t) ∝ α_t (prediction) β_t D_t
            w1, w0 = joint1 * like1[t], joint0 * like0[t]
            posterior[t] = w1 / (w1 + w0)
            h1, h0 = like1[t] * b1, like0[t] * b0
            b1, b0 = stay * h1 + move * h0, move * h1 + stay * h0
            total = b1 + b0
            b1, b0 = b1 / total, b0 / total
        r = np.array(posterior)
    return r


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the 2 s LibriSpeech clip, 3 repeats")
    arguments = parser.parse_args(argv)
    quick = arguments.quick
    clean, y, rate = audio(quick)
    rho, speech_var = fit_speech_prior(clean)
    # the paper's numbers are in units of the clean, standardised signal; the model reads them in units of the
    # noisy signal's mean power (as fgraph run vad converts them), and the stream is given that unit
    level = signal_scale(y)
    parameters = VADParameters(rho=rho, speech_var=speech_var, observation_var=NOISE_VAR).in_units_of(level)
    duration = y.size / rate
    chunk = int(round(CHUNK_SECONDS * rate))
    repeats = 3 if quick else 5

    def ours():
        return detect_voice(y, parameters)

    def online():
        stream = StreamingVAD(parameters, scale=level)
        for start in range(0, y.size, chunk):
            stream.update(y[start:start + chunk])
        return stream.speech_probability

    warm = ours()  # loads the compiled loops (compiled on the first run after installation)
    sweeps = warm.iterations
    online()
    times, results = alternating_medians({"ours": ours, "online": online}, repeats)
    # the peer runs the same model on the signal as detect_voice scales it (in units of its root mean square)
    peer_times, peer_results = alternating_medians({"peer": lambda: numpy_vmp(y / level, parameters, sweeps)},
                                                   1 if quick else 2)
    difference = float(np.max(np.abs(results["ours"].speech_probability - peer_results["peer"])))
    agree = difference <= AGREEMENT
    webrtc_s = None
    if importlib.util.find_spec("webrtcvad") is not None:
        from fgraph_experiments.vad_baselines import webrtc_vad

        pcm = y / (1.01 * np.max(np.abs(y)))
        started = time.perf_counter()
        webrtc_vad(pcm, rate, mode=3)
        webrtc_s = time.perf_counter() - started
    line = {
        "benchmark": "vad", "ours_s": times["ours"], "peer": "numpy structured VMP (float loops)",
        "peer_s": peer_times["peer"], "ratio": times["ours"] / duration,
        "ratio_vs_peer": times["ours"] / peer_times["peer"], "agree": agree,
        "max_probability_difference": difference, "seconds_of_audio": duration, "samples": int(y.size),
        "iterations": sweeps, "online_s": times["online"], "online_real_time_factor": times["online"] / duration,
        "webrtc_s": webrtc_s, "compiled_loops": jit.enabled(),
        "params": {"quick": quick, "noise_var": NOISE_VAR, "rho": rho, "speech_var": speech_var,
                   "chunk_seconds": CHUNK_SECONDS, "repeats": repeats},
    }
    print(json.dumps(line))
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
