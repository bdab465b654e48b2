"""Voice activity detection on real speech by the hidden-Markov switching model (van Erp et al. 2023, §6.2.2).

The model of :mod:`fgraph.models.vad` (AR(1) speech, noise near zero, a sticky two-state switch, observation
noise v_y) on recorded speech: the bundled LibriSpeech clip (2 s) and a longer espeak-ng recording (18.8 s)
of :mod:`fgraph.datasets.audio`, or any WAV with ``--wav``. Every recording is standardised (zero mean,
unit variance); the speech prior (ρ, σ²) is the AR(1) fitted to that clean signal
(:func:`~fgraph.models.vad.model.fit_speech_prior`), and the reference labels per 10 ms frame come from the
clean signal by the energy rule of :func:`~fgraph.datasets.audio.frame_labels`.

1. **The paper's figure**: clean speech, the speech corrupted by white noise of variance 0.5, and the
   speech probability per sample, offline (smoothed) and online (:class:`~fgraph.models.vad.model.StreamingVAD`,
   100 ms chunks), with v_y = 0.5 as in the paper (``<recording>_figure.png``).
2. **Detection against the reference labels** at SNR ∈ {20, 10, 5, 0, −5} dB (white Gaussian noise,
   ``seeds`` draws each): frame accuracy, F1 and ROC AUC of

   * ours offline and online, with v_y = 0.5 (the paper's setting), and with v_y estimated from the noisy
     signal's noise floor (:func:`~fgraph.models.vad.model.estimate_observation_var`; online from the samples
     seen so far);
   * Google's WebRTC VAD (``webrtcvad-wheels``) in its four aggressiveness modes, fed the noisy signal at
     the recording's own level as 16-bit PCM (all SNRs of a recording scaled alike if any would clip);
   * an energy-threshold VAD (noise floor + 3 dB, :func:`~fgraph_experiments.vad_baselines.energy_vad`).

   The frame score of our model is the mean speech probability over the frame (decision: > 0.5); the
   energy VAD's is the frame energy; WebRTC gives decisions only (no AUC).

Outputs in ``out``: ``results.md`` (the tables), ``results.json``, ``<recording>_figure.png``,
``<recording>_snr.png`` (the metrics against SNR) and ``summary.json``. ``--quick`` runs the LibriSpeech
clip at 10 dB with one seed.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import numpy as np

from fgraph.datasets.audio import (
    DEFAULT_RATE, add_white_noise, frame_labels, frame_scores, load_speech, load_wav, standardise,
)
from fgraph.errors import DatasetError
from fgraph.examples import Distinct, OptionError, to_json, progress_bar, pyplot, whole_number, write_summary
from fgraph.models.vad import (StreamingVAD, VADParameters, detect_voice, estimate_observation_var, fit_speech_prior,
                               signal_scale)
from fgraph_experiments.vad_baselines import energy_vad, energy_vad_scores, vad_metrics, webrtc_vad_modes
from fgraph.store import write_figure, write_text

DESCRIPTION = ("voice activity detection on real speech by a hidden-Markov switching model (mixture paper "
               "§6.2.2): the paper's figure, and accuracy/F1/AUC vs WebRTC VAD and an energy VAD at 20..-5 dB")

SNRS = (20.0, 10.0, 5.0, 0.0, -5.0)
RECORDINGS = ("librispeech", "espeak")
SEEDS = 5
PAPER_NOISE_VAR = 0.5  # the corrupting noise of the paper's figure, and its v_y
CHUNK_SECONDS = 0.1  # online: the samples of one update
METRICS = ("accuracy", "f1", "auc")
OURS = ("ours offline, v_y = 0.5", "ours online, v_y = 0.5", "ours offline, v_y estimated",
        "ours online, v_y estimated")


#: the SNRs --snr takes, in dB: 16-bit PCM, what the WebRTC VAD reads, spans 20·log10(2^16) ≈ 96 dB, and past it
#: the speech or the noise is below one step of it (and far past it, the noise variance overflows or is zero)
SNR_RANGE = (-96.0, 96.0)


def add_arguments(parser) -> None:
    """The options of ``fgraph run vad``, each refused before the run if the run could not use it."""
    parser.add_argument("--wav", type=wav_file, default=None, metavar="FILE",
                        help="a WAV of clean speech to use instead of the bundled recordings (resampled to 16 kHz; noise "
                             "is added to it; for the speech segments of a recording as it is: fgraph vad FILE.wav)")
    parser.add_argument("--snr", type=snr_db, action=Distinct, default=None, metavar="DB",
                        help=f"an SNR in dB within [{SNR_RANGE[0]:g}, {SNR_RANGE[1]:g}] (repeat for several; "
                             "default: 20 10 5 0 -5, --quick: 10)")
    parser.add_argument("--seeds", type=whole_number(1), default=None,
                        help=f"noise draws per SNR (default {SEEDS}, --quick 1)")


def snr_db(text: str) -> float:
    """``type`` of --snr: a finite number of dB within :data:`SNR_RANGE`."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not SNR_RANGE[0] <= value <= SNR_RANGE[1]:  # NaN too
        raise argparse.ArgumentTypeError(
            f"must be a number of dB in [{SNR_RANGE[0]:g}, {SNR_RANGE[1]:g}], got {text!r} (16-bit PCM, what the "
            "WebRTC VAD reads, spans 96 dB: past that the speech or the noise vanishes from it)")
    return value


def wav_file(text: str) -> Path:
    """``type`` of --wav: a WAV file the run can use — readable, not silent, with frames that stand out as speech
    (what :func:`run` does with it first), so that a bad file is refused before the run, not minutes into it."""
    path = Path(text)
    try:
        signal, rate = load_wav(path)
        standardise(signal)
        frame_labels(signal, rate)
    except DatasetError as error:
        message = str(error)
        raise argparse.ArgumentTypeError(message if str(path) in message else f"{path}: {message}") from None
    return path


def run(quick: bool = False, out: Path = Path("out/vad"), progress: bool = False, wav: Path | None = None,
        snr: list | None = None, seeds: int | None = None) -> dict:
    """Run the experiment (module docstring) and write its files into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    snrs = tuple(float(s) for s in snr) if snr else ((10.0,) if quick else SNRS)
    seeds = int(seeds) if seeds is not None else (1 if quick else SEEDS)
    if seeds < 1:
        raise OptionError(f"vad: --seeds must be at least 1, got {seeds}")
    if len(set(snrs)) < len(snrs):
        raise OptionError(f"vad: every SNR must be given once, got {list(snrs)}")
    if wav is not None:
        signal, rate = load_wav(wav)
        recordings = {Path(wav).stem: signal}
    else:
        names = RECORDINGS[:1] if quick else RECORDINGS
        recordings = {name: load_speech(name)[0] for name in names}
        rate = DEFAULT_RATE
    started = time.perf_counter()
    results, files = {}, []
    for name, signal in recordings.items():
        result = run_recording(name, signal, rate, snrs, seeds, progress)
        results[name] = result
        files += plot_figure(result, out / f"{name}_figure.png") + plot_snr(result, out / f"{name}_snr.png")
        print_recording(result)
    table = results_table(results)
    write_text(out / "results.md", table)
    write_text(out / "results.json", json.dumps(results, indent=1, default=to_json) + "\n")
    summary = {"example": "vad", "quick": bool(quick), "seconds": time.perf_counter() - started, "snrs": snrs,
               "seeds": seeds, "recordings": {name: {key: value for key, value in result.items() if key != "figure"}
                                              for name, result in results.items()},
               "files": ["summary.json", "results.md", "results.json"] + files}
    write_summary(out, summary)
    return summary


def _ours(y, rate: int, parameters: VADParameters, estimated: bool) -> dict:
    """Offline and online speech probabilities (T,) of ``y`` with v_y fixed or estimated; their seconds.

    The experiment states every variance in units of the clean, standardised recording (``y`` is that recording
    plus noise, in the same units), as the paper does; the model reads them in units of the signal's mean power
    c² (:func:`~fgraph.models.vad.model.signal_scale`), so they are converted (``in_units_of(c)``), and the stream is
    given the same unit (``scale=c``) rather than measuring it on the samples received so far."""
    level = signal_scale(y)
    if estimated:  # the noise floor in the experiment's units
        parameters = dataclasses.replace(parameters, observation_var=estimate_observation_var(y, rate, scale=1.0))
    offline = detect_voice(y, parameters.in_units_of(level))
    stream = StreamingVAD(parameters.in_units_of(level), scale=level)
    chunk = int(round(CHUNK_SECONDS * rate))
    online_started = time.perf_counter()
    for start in range(0, y.size, chunk):
        if estimated:  # the noise floor of the samples seen so far (the first chunk: itself)
            seen = y[: start + chunk]
            floor = estimate_observation_var(seen, rate, scale=1.0)
            stream.parameters = dataclasses.replace(parameters, observation_var=floor).in_units_of(level)
        stream.update(y[start:start + chunk])
    online_seconds = time.perf_counter() - online_started
    return {"offline": offline.speech_probability, "online": stream.speech_probability,
            "offline_seconds": offline.seconds, "online_seconds": online_seconds,
            "iterations": offline.iterations, "free_energy": offline.free_energy}


def _pcm_scale(clean_raw, noisy_standardised) -> tuple:
    """(mean, scale) mapping standardised signals back to the recording's level, scaled down alike if any clips."""
    mean, std = float(np.mean(clean_raw)), float(np.std(clean_raw))
    peak = max(float(np.max(np.abs(y * std + mean))) for y in noisy_standardised)
    shrink = min(1.0, 0.99 / peak)
    return mean * shrink, std * shrink


def run_recording(name: str, signal, rate: int, snrs: tuple, seeds: int, progress: bool) -> dict:
    """All methods on one recording at every SNR and seed: metrics per method and SNR (mean, std, values)."""
    clean = standardise(signal)
    labels = frame_labels(signal, rate)
    rho, speech_var = fit_speech_prior(clean)
    paper = VADParameters(rho=rho, speech_var=speech_var, observation_var=PAPER_NOISE_VAR)
    # the paper's figure: noise of variance 0.5 on the standardised signal
    corrupted = clean + np.random.default_rng(0).normal(0.0, np.sqrt(PAPER_NOISE_VAR), clean.size)
    figure_run = _ours(corrupted, rate, paper, estimated=False)
    figure = {"clean": clean, "corrupted": corrupted, "offline": figure_run["offline"],
              "online": figure_run["online"], "labels": labels}
    noisy = {(snr, seed): add_white_noise(clean, snr, random_state=seed).signal for snr in snrs for seed in range(seeds)}
    offset, scale = _pcm_scale(signal, noisy.values())
    table = {}
    timings = {"offline_seconds": [], "online_seconds": [], "iterations": []}
    with progress_bar(len(noisy), f"{name}: SNR x seed", progress) as bar:
        for (snr, seed), y in noisy.items():
            found = {}
            for estimated in (False, True):
                ours = _ours(y, rate, paper, estimated)
                tag = "estimated" if estimated else "0.5"
                for mode in ("offline", "online"):
                    scores = frame_scores(ours[mode], rate)
                    found[f"ours {mode}, v_y = {tag}" if not estimated else f"ours {mode}, v_y estimated"] = \
                        vad_metrics(labels, scores > 0.5, scores)
                timings["offline_seconds"].append(ours["offline_seconds"])
                timings["online_seconds"].append(ours["online_seconds"])
                timings["iterations"].append(ours["iterations"])
            pcm = y * scale + offset
            for mode, decisions in webrtc_vad_modes(pcm, rate).items():
                found[f"WebRTC mode {mode}"] = vad_metrics(labels, decisions)
            found["energy VAD"] = vad_metrics(labels, energy_vad(pcm, rate), energy_vad_scores(pcm, rate))
            for method, metrics in found.items():
                cell = table.setdefault(method, {}).setdefault(f"{snr:g}", {m: [] for m in METRICS})
                for metric in METRICS:
                    cell[metric].append(metrics[metric])
            bar.update()
    for method in table.values():
        for cell in method.values():
            for metric in METRICS:
                values = [v for v in cell[metric] if v is not None]
                cell[metric] = {"mean": float(np.mean(values)) if values else None,
                                "std": float(np.std(values)) if values else None, "values": cell[metric]}
    duration = signal.size / rate
    return {"recording": name, "seconds_of_audio": duration, "rate": rate, "n_frames": int(labels.size),
            "speech_fraction": float(labels.mean()), "rho": rho, "speech_var": speech_var, "snrs": list(snrs),
            "seeds": seeds, "methods": table,
            "runtime": {"offline_seconds": float(np.median(timings["offline_seconds"])),
                        "online_seconds": float(np.median(timings["online_seconds"])),
                        "offline_real_time_factor": float(np.median(timings["offline_seconds"])) / duration,
                        "online_real_time_factor": float(np.median(timings["online_seconds"])) / duration,
                        "iterations": float(np.median(timings["iterations"]))},
            "figure": figure}


def results_table(results: dict) -> str:
    """Markdown: per recording, one row per method, accuracy / F1 / AUC (mean over seeds) at each SNR."""
    lines = []
    for name, result in results.items():
        snrs = [f"{s:g}" for s in result["snrs"]]
        lines += [f"## {name} ({result['seconds_of_audio']:.1f} s, {result['n_frames']} frames, "
                  f"{100 * result['speech_fraction']:.0f} % speech; ρ = {result['rho']:.3f}, "
                  f"σ² = {result['speech_var']:.3f}; {result['seeds']} noise draws per SNR)", "",
                  "Frame accuracy / F1 / AUC, mean over the noise draws.", "",
                  "| method | " + " | ".join(f"{s} dB" for s in snrs) + " |",
                  "|---|" + "---|" * len(snrs)]
        for method, cells in result["methods"].items():
            row = []
            for snr in snrs:
                parts = [cells[snr][m]["mean"] for m in METRICS]
                row.append(" / ".join("—" if v is None else f"{v:.3f}" for v in parts))
            lines.append(f"| {method} | " + " | ".join(row) + " |")
        runtime = result["runtime"]
        lines += ["", f"Ours: {runtime['iterations']:.0f} VMP sweeps to convergence (median); offline "
                      f"{runtime['offline_seconds']:.3f} s (real-time factor {runtime['offline_real_time_factor']:.4f}), "
                      f"online {runtime['online_seconds']:.3f} s (real-time factor "
                      f"{runtime['online_real_time_factor']:.4f}), medians over the runs.", ""]
    return "\n".join(lines)


def print_recording(result: dict) -> None:
    print(f"{result['recording']}: {result['seconds_of_audio']:.1f} s, speech {100 * result['speech_fraction']:.0f} % "
          f"of frames, rho {result['rho']:.3f}, sigma2 {result['speech_var']:.3f}")
    for method, cells in result["methods"].items():
        accuracy = "  ".join(f"{snr:>4}: {cell['accuracy']['mean']:.3f}" for snr, cell in cells.items())
        print(f"  {method:<30} accuracy  {accuracy}")


def plot_figure(result: dict, path: Path) -> list:
    """The paper's figure: clean, corrupted, speech probability (offline and online) with the reference labels."""
    plt = pyplot()
    if plt is None:
        return []
    figure = result["figure"]
    rate = result["rate"]
    time_axis = np.arange(figure["clean"].size) / rate
    reference = np.repeat(figure["labels"], int(round(0.01 * rate)))[: time_axis.size]
    fig, axes = plt.subplots(3, 1, figsize=(9, 6.5), sharex=True)
    axes[0].plot(time_axis, figure["clean"], lw=0.4, color="k")
    axes[0].set_ylabel("clean")
    axes[1].plot(time_axis, figure["corrupted"], lw=0.4, color="0.3")
    axes[1].set_ylabel("corrupted\n(noise var 0.5)")
    axes[2].fill_between(time_axis, 0, reference, color="0.85", step="mid", label="reference speech frames")
    axes[2].plot(time_axis, figure["offline"], lw=1.0, label="offline (smoothed)")
    axes[2].plot(time_axis, figure["online"], lw=1.0, ls="--", label=f"online ({1000 * CHUNK_SECONDS:.0f} ms chunks)")
    axes[2].set_ylabel("p(speech)")
    axes[2].set_xlabel("time (s)")
    axes[2].set_ylim(-0.05, 1.05)
    axes[2].legend(loc="lower right", fontsize=8)
    fig.suptitle(f"{result['recording']}: voice activity by the switching model")
    fig.tight_layout()
    write_figure(path, fig, dpi=110)
    plt.close(fig)
    return [path.name]


def plot_snr(result: dict, path: Path) -> list:
    """Accuracy, F1 and AUC against SNR for every method."""
    plt = pyplot()
    if plt is None:
        return []
    snrs = [f"{s:g}" for s in result["snrs"]]
    values = [float(s) for s in snrs]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8))
    for method, cells in result["methods"].items():
        style = "-" if method.startswith("ours") else (":" if method.startswith("WebRTC") else "-.")
        for ax, metric in zip(axes, METRICS):
            means = [cells[s][metric]["mean"] for s in snrs]
            if all(m is None for m in means):
                continue
            ax.plot(values, [np.nan if m is None else m for m in means], style, marker="o", ms=3, label=method)
    for ax, metric in zip(axes, METRICS):
        ax.set_xlabel("SNR (dB)")
        ax.set_title(metric)
        ax.invert_xaxis()
    axes[0].legend(fontsize=7)
    fig.suptitle(f"{result['recording']}: frame metrics against SNR")
    fig.tight_layout()
    write_figure(path, fig, dpi=110)
    plt.close(fig)
    return [path.name]
