"""Audio for the voice-activity-detection (VAD) experiment: WAV files, bundled speech, reference
labels per frame and white noise at a chosen signal-to-noise ratio.

* :func:`load_wav` — any PCM or float WAV as a float64 mono signal (T,) at a chosen rate;
  :func:`write_wav` writes one as 16-bit PCM; :func:`resample_signal` is the exact rational
  resampling both :func:`load_wav` and ``make_espeak_speech.py`` use.
* :func:`load_speech` / :func:`speech_path` — the two bundled clips by short name
  (:data:`SPEECH_NAMES`): ``"librispeech"`` (LibriSpeech 19-198-0000, 1.965 s, the signal of the
  VAD experiment of van Erp et al. 2023) and ``"espeak"`` (Harvard sentences of list 1 spoken by
  espeak-ng with pauses between them, made by ``fgraph/datasets/make_espeak_speech.py``).
  Provenance and SHA-256 in ``fgraph/datasets/data/README.md``.
* :func:`frame_labels` — speech / non-speech per 10 ms frame of the CLEAN signal by an energy
  rule (below); :func:`sample_labels` expands them to samples and :func:`frame_scores` averages a
  per-sample speech probability into the same frames, so a per-sample model can be scored against
  per-frame labels.
* :func:`add_white_noise` — white Gaussian noise at an exact expected SNR, one SNR or a batch;
  :func:`standardise` — zero mean, unit variance.

Frames: frame ``k`` holds samples ``k·L … (k+1)·L − 1`` with ``L = frame_length(rate, frame_ms)``
(160 samples for 10 ms at 16 kHz), not overlapping; a signal of ``T`` samples has
``n_frames = ⌈T / L⌉`` frames, the last one possibly shorter (its statistics are means over the
samples it has, so a short last frame is neither louder nor quieter than a full one).

Like the rest of the package this module imports numpy only; scipy (``scipy.io.wavfile``,
``scipy.signal.resample_poly``) is imported inside the functions that need it.
"""
from __future__ import annotations

import math
import numbers
import struct
from pathlib import Path
from typing import NamedTuple

import numpy as np

from fgraph.errors import DatasetError

DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_RATE = 16000  # Hz: the rate of the LibriSpeech clip and of the VAD experiment

# short name -> WAV file in DATA_DIR (16 kHz, mono, 16-bit PCM)
SPEECH_FILES = {
    "librispeech": "speech_librispeech_19-198-0000.wav",
    "espeak": "speech_espeak_harvard1.wav",
}
SPEECH_NAMES = tuple(sorted(SPEECH_FILES))

# Constants of the reference-label rule (see frame_labels for why these values).
THRESHOLD_DB = -25.0  # speech if the frame energy is above (reference − 25 dB)
REFERENCE_PERCENTILE = 95.0  # the reference level: this percentile of the frame energies in dB
MIN_GAP_MS = 100.0  # non-speech runs shorter than this between two speech runs become speech
MIN_SPEECH_MS = 30.0  # speech runs shorter than this become non-speech
HANGOVER_MS = 20.0  # every speech run is extended by this much after its last frame
# Frame energies are floored here (−200 dB) so that digital silence has a finite level.
ENERGY_FLOOR = 1e-20


def _positive_rate(rate, what: str) -> int:
    if isinstance(rate, bool) or not isinstance(rate, numbers.Integral) or rate < 1:
        raise DatasetError(f"{what}: a sampling rate must be a positive whole number of Hz, got {rate!r}")
    return int(rate)


def as_signal(signal, what: str, *, batch: bool = False) -> np.ndarray:
    """``signal`` as float64, (T,) — or (..., T) with ``batch`` — finite and non-empty, or a
    :class:`~fgraph.errors.DatasetError` naming ``what`` (the caller that received it)."""
    try:
        x = np.asarray(signal, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise DatasetError(f"{what}: the signal must be an array of real numbers ({error})") from None
    if x.ndim == 0 or (not batch and x.ndim != 1):
        shape = "(T,) or (..., T)" if batch else "(T,)"
        raise DatasetError(f"{what}: the signal must have shape {shape}, got shape {x.shape}")
    if x.shape[-1] == 0:
        raise DatasetError(f"{what}: the signal is empty (no samples)")
    if not np.all(np.isfinite(x)):
        raise DatasetError(f"{what}: the signal has NaN or infinite samples (first at index {int(np.argmin(np.isfinite(x.ravel())))})")
    return x


# ----------------------------------------------------------------------------- WAV files
def _pcm_to_float(data: np.ndarray, path) -> np.ndarray:
    """WAV samples as float64: signed b-bit PCM divided by 2^(b−1), unsigned 8-bit as (x − 128)/128,
    so full scale maps to [−1, 1); float WAVs unchanged."""
    if data.dtype == np.uint8:
        return (data.astype(np.float64) - 128.0) / 128.0
    if np.issubdtype(data.dtype, np.signedinteger):
        # scipy returns 24-bit PCM left-justified in int32, so 2^31 is its full scale too
        return data.astype(np.float64) / float(2 ** (8 * data.dtype.itemsize - 1))
    if np.issubdtype(data.dtype, np.floating):
        return data.astype(np.float64)
    raise DatasetError(f"load_wav: {path}: samples of type {data.dtype} are not PCM or float; "
                       f"convert the file to 16-bit PCM (e.g. `sox in.wav -b 16 out.wav`)")


def resample_signal(signal, rate_in: int, rate_out: int) -> np.ndarray:
    """``signal`` (..., T) sampled at ``rate_in`` resampled to ``rate_out``: (..., ⌈T·up/down⌉).

    Exact rational resampling: with g = gcd(rate_in, rate_out), up = rate_out/g and
    down = rate_in/g (22050 → 16000 Hz: up 320, down 441), ``scipy.signal.resample_poly``
    upsamples by ``up``, low-pass filters at the lower of the two Nyquist frequencies (its default
    Kaiser-windowed FIR, β = 5) and keeps every ``down``-th sample. Equal rates return a copy.
    """
    x = as_signal(signal, "resample_signal", batch=True)
    rate_in = _positive_rate(rate_in, "resample_signal")
    rate_out = _positive_rate(rate_out, "resample_signal")
    if rate_in == rate_out:
        return x.copy()
    from scipy.signal import resample_poly

    g = math.gcd(rate_in, rate_out)
    return resample_poly(x, rate_out // g, rate_in // g, axis=-1)


def load_wav(path, rate: int | None = DEFAULT_RATE, *, resample: bool = True) -> tuple[np.ndarray, int]:
    """The WAV file at ``path`` as ``(signal, rate)``: float64 (T,) mono samples and their rate in Hz.

    Samples: 8-, 16-, 24- and 32-bit PCM scaled to [−1, 1) (signed b-bit x ↦ x / 2^(b−1),
    unsigned 8-bit x ↦ (x − 128)/128); float WAVs as stored. Several channels are averaged to one.
    Rate: with ``resample=True`` (the default) a file at another rate is resampled to ``rate`` by
    :func:`resample_signal`; with ``resample=False`` a file whose rate is not ``rate`` is an error
    (for data that must already be at the experiment's rate); ``rate=None`` keeps the file's rate.

    Raises :class:`DatasetError`, naming the file, if it does not exist, cannot be read as a WAV
    file, has no samples, has NaN or infinite samples, or (``resample=False``) has the wrong rate.
    """
    path = Path(path)
    if rate is not None:
        rate = _positive_rate(rate, f"load_wav({str(path)!r})")
    if not path.is_file():
        where = "is a directory" if path.is_dir() else "does not exist"
        raise DatasetError(f"load_wav: {path} {where}; give the path of a WAV file")
    from scipy.io import wavfile

    try:
        file_rate, data = wavfile.read(path)
    # scipy raises ValueError for a foreign header, struct.error / EOFError for a truncated one
    except (ValueError, struct.error, EOFError, OSError) as error:
        raise DatasetError(f"load_wav: {path} cannot be read as a WAV file ({error}); convert it to a PCM or float WAV, "
                           f"e.g. `ffmpeg -i {path.name} -ac 1 -c:a pcm_s16le out.wav`") from None
    x = _pcm_to_float(data, path)
    if x.shape[0] == 0 or x.size == 0:
        raise DatasetError(f"load_wav: {path} has no samples (an empty WAV file); record or export it again")
    if not np.all(np.isfinite(x)):
        raise DatasetError(f"load_wav: {path} has NaN or infinite samples; re-export it, or as PCM, which cannot hold them")
    if x.ndim == 2:
        x = x.mean(axis=1)  # (T, channels) → mono
    if rate is None or file_rate == rate:
        return x, int(file_rate)
    if not resample:
        raise DatasetError(f"load_wav: {path} is sampled at {file_rate} Hz, not the {rate} Hz asked for; "
                           f"pass resample=True to resample it, or convert the file to {rate} Hz")
    return resample_signal(x, int(file_rate), rate), rate


def write_wav(path, signal, rate: int) -> Path:
    """Write ``signal`` (T,) with samples in [−1, 1] as a mono 16-bit PCM WAV file at ``rate`` Hz.

    Samples are quantised as round(32768·x), clipped to the 16-bit range (so +1.0 becomes 32767);
    :func:`load_wav` reads the file back to within 2^−16 of ``signal``. A sample outside [−1, 1]
    is an error rather than silently clipped (it means the signal was not scaled as audio).
    """
    x = as_signal(signal, f"write_wav({str(path)!r})")
    rate = _positive_rate(rate, f"write_wav({str(path)!r})")
    if np.max(np.abs(x)) > 1.0:
        raise DatasetError(f"write_wav: {path}: samples must lie in [−1, 1] for 16-bit PCM, the largest is "
                           f"{np.max(np.abs(x)):.4g}; scale the signal down first")
    from scipy.io import wavfile

    pcm = np.clip(np.round(x * 32768.0), -32768, 32767).astype(np.int16)
    wavfile.write(Path(path), rate, pcm)
    return Path(path)


# ----------------------------------------------------------------------------- bundled speech
def speech_path(name: str) -> Path:
    """The path of the bundled clip called ``name`` (one of :data:`SPEECH_NAMES`)."""
    if not isinstance(name, str):
        raise DatasetError(f"speech_path: the name must be a string, got {type(name).__name__}")
    key = name.strip().lower()
    if key not in SPEECH_FILES:
        raise DatasetError(f"speech_path: unknown speech clip {name!r}; choose one of {', '.join(SPEECH_NAMES)}")
    return DATA_DIR / SPEECH_FILES[key]


def load_speech(name: str, rate: int = DEFAULT_RATE) -> tuple[np.ndarray, int]:
    """The bundled clip ``name`` as ``(signal float64 (T,), rate)``, resampled if ``rate`` is not
    16 kHz (both clips are stored at 16 kHz, so the default returns the stored samples / 32768)."""
    return load_wav(speech_path(name), rate)


# ----------------------------------------------------------------------------- frames and labels
def frame_length(rate: int, frame_ms: float = 10.0) -> int:
    """Samples per frame: round(rate · frame_ms / 1000), at least 1 (160 for 10 ms at 16 kHz)."""
    rate = _positive_rate(rate, "frame_length")
    if not np.isfinite(frame_ms) or frame_ms <= 0:
        raise DatasetError(f"frame_length: frame_ms must be a positive number of milliseconds, got {frame_ms!r}")
    length = round(rate * frame_ms / 1000.0)
    if length < 1:
        raise DatasetError(f"frame_length: {frame_ms} ms at {rate} Hz is less than one sample")
    return length


def _frame_means(x: np.ndarray, length: int) -> np.ndarray:
    """Means of (..., T) over consecutive frames of ``length`` samples: (..., ⌈T/length⌉)."""
    T = x.shape[-1]
    n_frames = -(-T // length)
    padded = np.zeros(x.shape[:-1] + (n_frames * length,))
    padded[..., :T] = x
    counts = np.full(n_frames, float(length))
    counts[-1] = T - (n_frames - 1) * length  # the last frame may be short: average over what it has
    return padded.reshape(x.shape[:-1] + (n_frames, length)).sum(axis=-1) / counts


def frame_energy_db(signal, rate: int, frame_ms: float = 10.0) -> np.ndarray:
    """Frame energies in dB, (n_frames,): e_k = 10·log10(max(mean of x_t² over frame k, 10⁻²⁰))."""
    x = as_signal(signal, "frame_energy_db")
    power = _frame_means(x * x, frame_length(rate, frame_ms))
    return 10.0 * np.log10(np.maximum(power, ENERGY_FLOOR))


def _runs(labels: np.ndarray, value: bool) -> list[tuple[int, int]]:
    """(start, stop) of every maximal run of ``value`` in the boolean ``labels``."""
    edges = np.diff(np.concatenate([[False], labels == value, [False]]).astype(np.int8))
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)))


def frame_labels(
    signal,
    rate: int,
    frame_ms: float = 10.0,
    threshold_db: float = THRESHOLD_DB,
    *,
    reference_percentile: float = REFERENCE_PERCENTILE,
    min_gap_ms: float = MIN_GAP_MS,
    min_speech_ms: float = MIN_SPEECH_MS,
    hangover_ms: float = HANGOVER_MS,
) -> np.ndarray:
    """Reference speech labels of a CLEAN ``signal`` (T,): bool (n_frames,), True for speech.

    The rule, on frames of ``frame_ms`` (see :func:`frame_energy_db` for e_k):

    1. Threshold. r = the ``reference_percentile``-th percentile (95) of the e_k; frame k is speech
       if e_k > r + ``threshold_db`` (−25 dB). A percentile, not the loudest frame, so that one
       click or plosive burst does not set the level; 95 keeps the reference inside speech as long
       as speech fills more than 5 % of the frames. −25 dB: the recording noise of the LibriSpeech
       clip (its first 0.58 s, before the speech) lies 30–37 dB below r, so −25 dB stays 5 dB above
       it (−30 dB would already let noise frames through); the espeak clip's pauses are digital
       silence, and lowering the threshold to −40 dB changes only 8 of its 1879 frames (all at
       the start or end of a sentence), so little speech is lost.
    2. Gaps. A non-speech run shorter than ``min_gap_ms`` (100 ms) between two speech runs becomes
       speech: stop closures and the dips between words of one phrase are part of the utterance,
       while a pause between sentences (500–1200 ms in the espeak clip) is not.
    3. Minimum duration. A speech run shorter than ``min_speech_ms`` (30 ms) becomes non-speech:
       a click is shorter than any syllable.
    4. Hangover. Every speech run is extended by ``hangover_ms`` (20 ms, two frames) after its end,
       since a word's decaying end drops below an energy threshold while it is still audible.

    Durations in milliseconds are rounded to whole frames. The steps run in this order, so a tone
    from frame a to frame b − 1 in digital silence is labelled speech on frames a … b − 1 + 2.
    """
    x = as_signal(signal, "frame_labels")
    for label, value in (("threshold_db", threshold_db), ("reference_percentile", reference_percentile)):
        if not np.isfinite(value):
            raise DatasetError(f"frame_labels: {label} must be finite, got {value!r}")
    if not 0.0 <= reference_percentile <= 100.0:
        raise DatasetError(f"frame_labels: reference_percentile must lie in [0, 100], got {reference_percentile!r}")
    frames = {}
    for label, value in (("min_gap_ms", min_gap_ms), ("min_speech_ms", min_speech_ms), ("hangover_ms", hangover_ms)):
        if not np.isfinite(value) or value < 0:
            raise DatasetError(f"frame_labels: {label} must be a finite number of milliseconds ≥ 0, got {value!r}")
        frames[label] = round(value / frame_ms)
    energy = frame_energy_db(x, rate, frame_ms)
    if np.ptp(energy) == 0.0:
        raise DatasetError("frame_labels: every frame has the same energy (silence or a constant level), "
                           "so no frame stands out as speech")
    labels = energy > np.percentile(energy, reference_percentile) + threshold_db
    for start, stop in _runs(labels, False):
        if start > 0 and stop < labels.size and stop - start < frames["min_gap_ms"]:
            labels[start:stop] = True
    for start, stop in _runs(labels, True):
        if stop - start < frames["min_speech_ms"]:
            labels[start:stop] = False
    for _, stop in _runs(labels.copy(), True):
        labels[stop:stop + frames["hangover_ms"]] = True
    return labels


def sample_labels(frame_labels, frame_length: int, T: int) -> np.ndarray:
    """Per-frame labels (n_frames,) repeated over their samples: (T,), the dtype of the input.

    ``frame_length`` is the samples per frame (:func:`frame_length`); n_frames must be ⌈T/frame_length⌉.
    """
    labels = np.asarray(frame_labels)
    if labels.ndim != 1:
        raise DatasetError(f"sample_labels: frame labels must have shape (n_frames,), got {labels.shape}")
    for label, value in (("frame_length", frame_length), ("T", T)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise DatasetError(f"sample_labels: {label} must be a positive whole number, got {value!r}")
    if labels.size != -(-T // frame_length):
        raise DatasetError(f"sample_labels: {labels.size} frames of {frame_length} samples do not cover T = {T} samples "
                           f"(that takes ⌈T/frame_length⌉ = {-(-T // frame_length)} frames)")
    return np.repeat(labels, frame_length)[:T]


def frame_scores(per_sample_probability, rate: int, frame_ms: float = 10.0) -> np.ndarray:
    """Mean of per-sample speech probabilities over each frame: (..., T) → (..., n_frames).

    The frames are those of :func:`frame_labels` (a short last frame averages the samples it has),
    so ``frame_scores(p, rate) > 0.5`` can be compared with ``frame_labels(clean, rate)`` frame by
    frame. Leading axes (e.g. one row per SNR) are kept.
    """
    p = as_signal(per_sample_probability, "frame_scores", batch=True)
    if np.any(p < 0.0) or np.any(p > 1.0):
        raise DatasetError("frame_scores: probabilities must lie in [0, 1]")
    return _frame_means(p, frame_length(rate, frame_ms))


# ----------------------------------------------------------------------------- noise and scaling
class NoisySignal(NamedTuple):
    """What :func:`add_white_noise` returns; unpacks as ``noisy, noise_variance = ...``.

    ``signal``: float64 (T,) for one SNR, (len(snrs), T) for several; ``noise_variance``: a float
    for one SNR, (len(snrs),) for several — the variance σ² the noise was drawn with.
    """

    signal: np.ndarray
    noise_variance: float | np.ndarray


def add_white_noise(signal, snr_db, random_state=None) -> NoisySignal:
    """``signal`` (T,) plus white Gaussian noise n_t ~ N(0, σ²) i.i.d., at ``snr_db`` decibels.

    σ² = P / 10^(snr_db/10) with P = mean_t(x_t²) the signal's mean power, so that
    10·log10(P / E[mean_t(n_t²)]) = snr_db exactly (the measured SNR of one draw scatters around
    it by about 10·log10(e)·√(2/T) dB). ``snr_db`` is a number, giving (T,), or a list of numbers,
    giving (len(snrs), T) with independent noise in every row — a batch axis for running one model
    at several SNRs. ``random_state``: None, a seed or a ``numpy.random.Generator``.
    """
    x = as_signal(signal, "add_white_noise")
    snrs = np.asarray(snr_db, dtype=np.float64)
    if snrs.ndim > 1 or snrs.size == 0:
        raise DatasetError(f"add_white_noise: snr_db must be a number or a non-empty list of numbers, got shape {snrs.shape}")
    if not np.all(np.isfinite(snrs)):
        raise DatasetError(f"add_white_noise: every SNR must be a finite number of dB, got {snr_db!r}")
    power = float(np.mean(x * x))
    if power == 0.0:
        raise DatasetError("add_white_noise: the signal is all zeros, so no noise level gives the asked-for SNR")
    variance = power / 10.0 ** (snrs / 10.0)
    rng = np.random.default_rng(random_state)
    noise = rng.standard_normal(snrs.shape + x.shape) * np.sqrt(variance)[..., None]
    if snrs.ndim == 0:
        return NoisySignal(x + noise, float(variance))
    return NoisySignal(x[None, :] + noise, variance)


def standardise(signal) -> np.ndarray:
    """``(x − mean(x)) / std(x)`` along the last axis: (..., T) → (..., T), zero mean, unit variance.

    The standard deviation is the population one (divisor T). A constant signal (row) is an error:
    it has no scale to divide by.
    """
    x = as_signal(signal, "standardise", batch=True)
    centred = x - x.mean(axis=-1, keepdims=True)
    scale = np.sqrt(np.mean(centred * centred, axis=-1, keepdims=True))
    if np.any(scale == 0.0):
        raise DatasetError("standardise: the signal is constant (zero variance), so it cannot be scaled to unit variance")
    return centred / scale
