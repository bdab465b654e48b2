"""Speech segments of a recording as it is: :func:`read_wav` reads a WAV file, :func:`detect_speech` runs the
switching model of :mod:`fgraph.models.vad.model` on it and returns a :class:`SpeechDetection` (the segments, a
frame table, the per-sample speech probability and a figure).

**What the model is told about a recording it knows nothing about.** The model of :func:`~fgraph.models.vad.model.detect_voice`
is per sample, and its numbers are in units of the signal's mean power (its **Units**):

* the speech prior keeps the defaults of :class:`~fgraph.models.vad.model.VADParameters`, ρ = 0.9 and σ² = 0.2:
  the AR(1) fitted to clean speech at 16 kHz gives 0.907 / 0.177 (LibriSpeech) and 0.894 / 0.200 (espeak-ng), and
  on those clips with white noise at 30, 20 and 10 dB the defaults detect the reference frames as well as or better
  than an AR(1) fitted to the noisy recording itself (at 10 dB, 0.944 against 0.924 and 0.881 against 0.847
  frame accuracy), whose ρ the noise pulls down;
* the observation variance v_y is the recording's noise floor, :func:`~fgraph.models.vad.model.estimate_observation_var`
  (the mean power of its quietest tenth of 50 ms frames), since nothing else tells the noise level; it needs
  that a tenth of the recording is pause;
* the mean of the recording is removed first (the model has zero mean: a DC offset would read as speech).

**Working rate.** ρ is a correlation between neighbouring samples, so it belongs to one sampling rate: every
recording is resampled to :data:`WORKING_RATE` (16 kHz, the rate ρ and σ² were fitted at) by
``scipy.signal.resample_poly`` (:func:`fgraph.datasets.audio.resample_signal`). The per-sample probability is at
that rate; times are in seconds of the recording.

**Frames and segments.** Frame k holds the working-rate samples k·L … (k+1)·L − 1, L = round(16000 · frame_ms /
1000), the last frame possibly shorter; its speech probability is the mean of its samples' q(z_t = speech). A
frame is speech when that mean exceeds ``threshold``; then pauses shorter than ``min_silence_ms`` between two
speech runs become speech, and speech runs shorter than ``min_speech_ms`` become silence (in that order). A
segment is a maximal run of speech frames: (start s, end s, mean of its frames' probabilities). The frame table's
``speech`` column is this final decision, so the segments are exactly its runs.

**Long recordings.** The model's chains are single nodes whose messages are whole forward–backward passes, so a
recording is one graph; its memory grows with the length (about 0.75 GB for 60 s at 16 kHz). A recording longer
than ``block_seconds`` (default 30 s) is therefore smoothed block by block by
:class:`~fgraph.models.vad.model.StreamingVAD` with the whole recording's level as its unit (``scale=``): each
block starts from the chains' states at the end of the previous one, so memory stays that of one block and time
grows linearly; a sample's probability then uses the samples up to the end of its block (not the following
ones), which changes decisions only at block edges.
"""
from __future__ import annotations

import math
import numbers
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

import numpy as np

from fgraph.errors import DataError
from fgraph.models.vad.model import (StreamingVAD, VADParameters, detect_voice, estimate_observation_var,
                                     signal_scale)
from fgraph.plotting import pyplot
from fgraph.store import write_figure, write_json, write_text

__all__ = ["WORKING_RATE", "MIN_SECONDS", "RecordingError", "read_wav", "Segment", "FrameTable", "SpeechDetection",
           "detect_speech"]

#: Hz: the rate every recording is analysed at (the rate the default speech prior was fitted at)
WORKING_RATE = 16000
#: the shortest recording, in seconds: two of the 50 ms frames the noise floor is measured on
MIN_SECONDS = 0.1
#: the figure draws a waveform of more samples than this as its envelope (min and max per bin)
ENVELOPE_BINS = 4000


class RecordingError(DataError):
    """A recording that cannot be used: a missing or unreadable file, not a WAV or an encoding it cannot hold,
    no samples, too short, digital silence, NaN or infinite samples; or an option of :func:`detect_speech` out of
    its range. The message names the file (or option) and what to do."""


# ----------------------------------------------------------------------------- reading
def read_wav(path, *, min_seconds: float = MIN_SECONDS) -> tuple[np.ndarray, int]:
    """The WAV file at ``path`` as ``(samples, rate)``: float64 (T,) mono samples and the file's rate in Hz.

    Samples: signed b-bit PCM (8-bit as stored by some writers, 16, 24, 32 and 64-bit) divided by 2^(b−1) and
    unsigned 8-bit as (x − 128) / 128, so full scale maps to [−1, 1); float32 / float64 WAVs as stored (24-bit PCM
    arrives from scipy left-justified in int32, so 2^31 is its full scale too). Several channels are averaged.

    :class:`RecordingError`, naming the file, if it does not exist or cannot be opened, is not a WAV file, is
    truncated or holds an encoding scipy cannot decode (compressed WAVs: convert them to PCM), has no samples,
    lasts less than ``min_seconds``, holds NaN or infinite samples, or is digital silence (every sample zero).
    """
    path = Path(path)
    if not path.is_file():
        where = "is a directory" if path.is_dir() else "does not exist"
        raise RecordingError(f"{path} {where}; give the path of a WAV file")
    from scipy.io import wavfile

    convert = f"convert it to PCM WAV, e.g. `ffmpeg -i {path.name} -c:a pcm_s16le out.wav` or `sox {path.name} -b 16 out.wav`"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", wavfile.WavFileWarning)  # chunks it skips (LIST, cue, ...): not samples
            rate, data = wavfile.read(path)
    except OSError as error:
        raise RecordingError(f"{path} cannot be read ({error.strerror or error}); check the file and its "
                             "permissions") from None
    except Exception as error:  # noqa: BLE001 — whatever the parser meets in the file's bytes, it is not a WAV we read
        reason = str(error) or type(error).__name__
        raise RecordingError(f"{path} cannot be read as a WAV file ({reason}); {convert}") from None
    if data.dtype.kind not in "iuf":
        raise RecordingError(f"{path}: samples of type {data.dtype} are neither PCM nor float; {convert}")
    if data.dtype.kind == "u":  # 8-bit PCM is unsigned, centred at 128
        samples = (data.astype(np.float64) - 128.0) / 128.0
    elif data.dtype.kind == "i":
        samples = data.astype(np.float64) / float(2 ** (8 * data.dtype.itemsize - 1))
    else:
        samples = data.astype(np.float64)
    if samples.ndim == 2:
        samples = samples.mean(axis=1) if samples.shape[1] else np.zeros(0)  # (T, channels) → mono
    return _checked(samples, int(rate), str(path), min_seconds), int(rate)


def _checked(samples: np.ndarray, rate: int, name: str, min_seconds: float) -> np.ndarray:
    """``samples`` (T,) of the recording ``name`` if the model can use them, else a :class:`RecordingError`."""
    if samples.size == 0:
        raise RecordingError(f"{name} has no samples (an empty recording); record or export it again")
    if not np.all(np.isfinite(samples)):
        first = int(np.argmin(np.isfinite(samples)))
        raise RecordingError(f"{name} holds NaN or infinite samples (the first at {first / rate:.3f} s); re-export it, "
                             "or as PCM, which cannot hold them")
    if samples.size < min_seconds * rate:
        raise RecordingError(f"{name} lasts {samples.size / rate:.3g} s ({samples.size} samples at {rate} Hz); give "
                             f"at least {min_seconds:g} s: the noise floor is measured on 50 ms frames")
    if not np.any(samples):
        raise RecordingError(f"{name} is digital silence (every sample is zero): there is no sound to detect speech "
                             "in; check the recording's input and gain")
    return samples


# ----------------------------------------------------------------------------- the result
class Segment(NamedTuple):
    """One stretch of speech: ``start`` and ``end`` in seconds of the recording, ``probability`` the mean speech
    probability of its frames."""

    start: float
    end: float
    probability: float


@dataclass(frozen=True)
class FrameTable:
    """Per frame k (n,): ``start`` and ``end`` in seconds, ``probability`` the mean q(z_t = speech) of its
    samples, ``speech`` the final decision (threshold, then the minimum pause and speech lengths): the segments
    are the runs of ``speech``."""

    start: np.ndarray
    end: np.ndarray
    probability: np.ndarray
    speech: np.ndarray

    def __len__(self) -> int:
        return int(self.start.size)

    def rows(self) -> list[dict]:
        """One dict per frame: ``start_s``, ``end_s``, ``speech_probability``, ``speech`` (plain Python values)."""
        return [{"start_s": float(a), "end_s": float(b), "speech_probability": float(p), "speech": bool(s)}
                for a, b, p, s in zip(self.start, self.end, self.probability, self.speech)]

    def csv(self) -> str:
        """The table as CSV text: a header ``start_s,end_s,speech_probability,speech`` and one line per frame
        (times to 10 µs, probabilities to 10⁻⁶, speech 1 or 0)."""
        lines = ["start_s,end_s,speech_probability,speech"]
        lines += [f"{a:.5f},{b:.5f},{p:.6f},{int(s)}"
                  for a, b, p, s in zip(self.start, self.end, self.probability, self.speech)]
        return "\n".join(lines) + "\n"

    def write_csv(self, path) -> Path:
        """Write :meth:`csv` to ``path`` (atomically, :func:`fgraph.store.write_text`); returns the path."""
        write_text(path, self.csv())
        return Path(path)

    def write_json(self, path) -> Path:
        """Write :meth:`rows` as a JSON list to ``path`` (atomically, :func:`fgraph.store.write_json`)."""
        write_json(path, self.rows())
        return Path(path)


@dataclass(frozen=True)
class SpeechDetection:
    """What :func:`detect_speech` found in a recording.

    ``segments``: the speech, a tuple of :class:`Segment` (start s, end s, mean probability) in time order;
    ``frames``: the :class:`FrameTable` they come from; ``speech_probability`` (T,) q(z_t = speech) per sample of
    ``signal`` (T,), the recording as analysed (mono, resampled to ``rate`` = :data:`WORKING_RATE`, mean
    removed); ``source_rate`` the recording's own rate; ``duration`` in seconds; ``parameters`` the
    :class:`~fgraph.models.vad.model.VADParameters` used (in units of the recording's mean power);
    ``settings`` the frame and decision options; ``blocks`` the number of blocks smoothed (1: the whole recording
    at once); ``seconds`` of inference.
    """

    segments: tuple
    frames: FrameTable
    speech_probability: np.ndarray = field(repr=False)
    signal: np.ndarray = field(repr=False)
    rate: int
    source_rate: int
    duration: float
    parameters: VADParameters
    settings: dict
    blocks: int = 1
    seconds: float = 0.0
    name: str = "recording"

    @property
    def speech_seconds(self) -> float:
        """The total length of the segments, in seconds."""
        return float(sum(segment.end - segment.start for segment in self.segments))

    def summary(self) -> str:
        """One line: the recording, its length, the segments and the share of speech."""
        share = self.speech_seconds / self.duration if self.duration else 0.0
        count = len(self.segments)
        return (f"{self.name}: {self.duration:.2f} s at {self.source_rate} Hz, {count} speech segment"
                f"{'' if count == 1 else 's'}, {self.speech_seconds:.2f} s of speech ({share:.0%}), "
                f"threshold {self.settings['threshold']:g}")

    def table(self) -> str:
        """The segments as a small text table: start and end in seconds, mean probability."""
        lines = [f"{'start (s)':>10}  {'end (s)':>10}  {'probability':>11}"]
        lines += [f"{s.start:>10.3f}  {s.end:>10.3f}  {s.probability:>11.3f}" for s in self.segments]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """The detection as plain JSON values: the recording, settings, parameters, segments and frame table (not
        the per-sample probability)."""
        return {"recording": self.name, "duration_s": self.duration, "source_rate": self.source_rate,
                "working_rate": self.rate, "settings": dict(self.settings),
                "parameters": {name: getattr(self.parameters, name) for name in
                               ("rho", "speech_var", "noise_var", "observation_var", "switch", "initial")},
                "blocks": self.blocks, "speech_s": self.speech_seconds,
                "segments": [{"start_s": s.start, "end_s": s.end, "probability": s.probability}
                             for s in self.segments],
                "frames": self.frames.rows()}

    def write_json(self, path) -> Path:
        """Write :meth:`to_dict` to ``path`` (atomically, :func:`fgraph.store.write_json`); returns the path."""
        write_json(path, self.to_dict())
        return Path(path)

    def plot(self, path=None):
        """A figure: the waveform with the segments shaded (top), the speech probability per frame with the
        threshold and the segments (bottom). Written to ``path`` (format from its suffix, atomically by
        :func:`fgraph.store.write_figure`) if given; returns the matplotlib figure. Needs matplotlib (the
        ``plot`` extra); a waveform of many samples is drawn as its envelope."""
        plt = pyplot()
        figure, (wave, probability) = plt.subplots(2, 1, figsize=(10, 4.5), sharex=True,
                                                   gridspec_kw={"height_ratios": [3, 2]})
        t = np.arange(self.signal.size) / self.rate
        if self.signal.size > 2 * ENVELOPE_BINS:  # min and max per bin: the same picture, far fewer points
            edges = np.linspace(0, self.signal.size, ENVELOPE_BINS + 1).astype(int)
            low = np.minimum.reduceat(self.signal, edges[:-1])
            high = np.maximum.reduceat(self.signal, edges[:-1])
            wave.fill_between(t[edges[:-1]], low, high, color="0.3", linewidth=0.5, step="post")
        else:
            wave.plot(t, self.signal, color="0.3", linewidth=0.5)
        for segment in self.segments:
            for axis in (wave, probability):
                axis.axvspan(segment.start, segment.end, color="tab:orange", alpha=0.25, linewidth=0)
        wave.set_ylabel("signal")
        wave.set_title(f"{self.name}: {len(self.segments)} speech segments (shaded)")
        probability.step(self.frames.start, self.frames.probability, where="post", color="tab:blue",
                         label="speech probability per frame")
        probability.axhline(self.settings["threshold"], color="tab:red", linestyle="--", linewidth=1,
                            label=f"threshold {self.settings['threshold']:g}")
        probability.set_ylim(-0.03, 1.03)
        probability.set_xlim(0.0, self.duration)
        probability.set_xlabel("time (s)")
        probability.set_ylabel("P(speech)")
        probability.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=2, frameon=False, fontsize="small")
        figure.tight_layout()
        if path is not None:
            write_figure(path, figure, dpi=100)
            plt.close(figure)
        return figure


# ----------------------------------------------------------------------------- detection
def detect_speech(recording, rate: int | None = None, *, frame_ms: float = 10.0, threshold: float = 0.5,
                  min_speech_ms: float = 50.0, min_silence_ms: float = 100.0, parameters=None,
                  block_seconds: float = 30.0, iterations: int = 200, tol: float | None = 1e-6) -> SpeechDetection:
    """The speech segments of ``recording`` as it is (no noise added, no reference).

    ``recording``: the path of a WAV file (:func:`read_wav`; ``rate`` must then be None), or an array of samples
    (T,), or (T, channels) averaged to mono, at ``rate`` Hz (required). It is resampled to :data:`WORKING_RATE`,
    its mean removed, and smoothed by :func:`~fgraph.models.vad.model.detect_voice` (in blocks of
    ``block_seconds`` by :class:`~fgraph.models.vad.model.StreamingVAD` if longer: module docstring), with
    ``iterations`` and ``tol`` as there.

    ``parameters``: None for the defaults of the module docstring (ρ = 0.9, σ² = 0.2, v_y the recording's noise
    floor); a mapping of :class:`~fgraph.models.vad.model.VADParameters` fields to change some of them (v_y stays
    the noise floor unless ``observation_var`` is given); or a ``VADParameters`` used as it is. Variances are in
    units of the recording's mean power.

    ``frame_ms`` (> 0), ``threshold`` (in (0, 1)), ``min_speech_ms`` and ``min_silence_ms`` (≥ 0): frames and
    segments as in the module docstring. Returns a :class:`SpeechDetection`; a bad recording or option is a
    :class:`RecordingError` naming it.
    """
    frame_ms = _number(frame_ms, "frame_ms", lambda v: v > 0, "a positive number of milliseconds")
    threshold = _number(threshold, "threshold", lambda v: 0 < v < 1, "a probability strictly between 0 and 1")
    min_speech_ms = _number(min_speech_ms, "min_speech_ms", lambda v: v >= 0, "a number of milliseconds >= 0")
    min_silence_ms = _number(min_silence_ms, "min_silence_ms", lambda v: v >= 0, "a number of milliseconds >= 0")
    block_seconds = _number(block_seconds, "block_seconds", lambda v: v >= 1, "a number of seconds >= 1")
    samples, source_rate, name = _recording(recording, rate)
    length = max(1, round(WORKING_RATE * frame_ms / 1000.0))
    if frame_ms > 1000.0 * samples.size / source_rate:
        raise RecordingError(f"detect_speech: frame_ms = {frame_ms:g} is longer than {name} "
                             f"({samples.size / source_rate:.3g} s); give shorter frames, e.g. 10 ms")

    from fgraph.datasets.audio import resample_signal

    y = resample_signal(samples, source_rate, WORKING_RATE) if source_rate != WORKING_RATE else samples
    y = y - y.mean()  # the model has zero mean
    parameters = _parameters(parameters, y)
    started = time.perf_counter()
    block = int(round(block_seconds * WORKING_RATE))
    if y.size <= block:
        probability, blocks = detect_voice(y, parameters, iterations=iterations, tol=tol).speech_probability, 1
    else:  # block by block, in the unit of the whole recording (module docstring, Long recordings)
        stream = StreamingVAD(parameters, iterations=iterations, tol=tol, scale=signal_scale(y))
        for start in range(0, y.size, block):
            stream.update(y[start:start + block])
        probability, blocks = stream.speech_probability, -(-y.size // block)
    seconds = time.perf_counter() - started

    frames = _frames(probability, length, threshold, min_speech_ms, min_silence_ms, y.size)
    segments = tuple(Segment(float(frames.start[a]), float(frames.end[b - 1]), float(np.mean(frames.probability[a:b])))
                     for a, b in _runs(frames.speech))
    settings = {"frame_ms": frame_ms, "threshold": threshold, "min_speech_ms": min_speech_ms,
                "min_silence_ms": min_silence_ms, "block_seconds": block_seconds}
    for array in (probability, y):
        array.flags.writeable = False
    return SpeechDetection(segments, frames, probability, y, WORKING_RATE, source_rate, samples.size / source_rate,
                           parameters, settings, blocks, seconds, name)


def _number(value, name: str, accept, meaning: str) -> float:
    """An option of :func:`detect_speech` as a float, or a :class:`RecordingError` saying what it must be."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not math.isfinite(value) \
            or not accept(float(value)):
        raise RecordingError(f"detect_speech: {name} must be {meaning}, got {value!r}")
    return float(value)


def _recording(recording, rate) -> tuple[np.ndarray, int, str]:
    """(mono float64 samples, their rate, a name for messages) of a path or an array with its rate."""
    if isinstance(recording, (str, Path)):
        if rate is not None:
            raise RecordingError(f"detect_speech: a WAV file carries its own rate; give rate only with an array of "
                                 f"samples, not with {recording}")
        samples, file_rate = read_wav(recording)
        return samples, file_rate, Path(recording).name
    if isinstance(rate, (bool, np.bool_)) or not isinstance(rate, numbers.Integral) or rate < 1:
        raise RecordingError(f"detect_speech: an array of samples needs its rate as a positive whole number of Hz, "
                             f"e.g. detect_speech(samples, 16000), got rate={rate!r}")
    array = np.asarray(recording)
    if array.dtype.kind not in "iuf" or array.ndim not in (1, 2):
        raise RecordingError(f"detect_speech: the recording must be a path, or real samples of shape (T,) or "
                             f"(T, channels), got {type(recording).__name__} of dtype {array.dtype} and shape "
                             f"{array.shape}")
    samples = array.astype(np.float64)
    if samples.ndim == 2:
        samples = samples.mean(axis=1) if samples.shape[1] else np.zeros(0)
    return _checked(samples, int(rate), "the recording", MIN_SECONDS), int(rate), "recording"


def _parameters(parameters, y: np.ndarray) -> VADParameters:
    """The :class:`VADParameters` of :func:`detect_speech`: given as they are, or the defaults (with the fields of
    a mapping) and v_y the noise floor of ``y`` unless the mapping sets it."""
    if isinstance(parameters, VADParameters):
        return parameters
    if parameters is not None and not isinstance(parameters, Mapping):
        raise RecordingError(f"detect_speech: parameters must be None, VADParameters(...) or a mapping of its "
                             f"fields, got {type(parameters).__name__}")
    given = dict(parameters or {})
    if "observation_var" not in given:
        given["observation_var"] = estimate_observation_var(y, WORKING_RATE)
    known = {"rho", "speech_var", "noise_var", "observation_var", "switch", "initial"}
    unknown = sorted(set(given) - known)
    if unknown:
        raise RecordingError(f"detect_speech: parameters: unknown field {unknown[0]!r}; VADParameters has the fields "
                             f"{', '.join(sorted(known))}")
    return replace(VADParameters(), **given)


def _runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) of every maximal run of True in ``flags``."""
    edges = np.diff(np.concatenate([[False], flags, [False]]).astype(np.int8))
    return list(zip(np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist()))


def _frames(probability: np.ndarray, length: int, threshold: float, min_speech_ms: float, min_silence_ms: float,
            T: int) -> FrameTable:
    """The :class:`FrameTable` of the per-sample ``probability`` (T,): frame means, then the decisions of the
    module docstring (threshold; pauses shorter than ``min_silence_ms`` between speech filled; speech shorter than
    ``min_speech_ms`` dropped)."""
    starts = np.arange(0, T, length)
    stops = np.minimum(starts + length, T)
    means = np.add.reduceat(probability, starts) / (stops - starts)
    speech = means > threshold
    frame_s = length / WORKING_RATE
    for a, b in _runs(~speech):
        if a > 0 and b < speech.size and (b - a) * frame_s * 1000.0 < min_silence_ms:
            speech[a:b] = True
    for a, b in _runs(speech):
        if (stops[b - 1] - starts[a]) / WORKING_RATE * 1000.0 < min_speech_ms:
            speech[a:b] = False
    table = FrameTable(starts / WORKING_RATE, stops / WORKING_RATE, np.clip(means, 0.0, 1.0), speech)
    for array in (table.start, table.end, table.probability, table.speech):
        array.flags.writeable = False
    return table

