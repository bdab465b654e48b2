"""Baseline voice-activity detectors (VAD) and their frame metrics, for the VAD experiment.

The frames are those of :mod:`fgraph.datasets.audio`: frame ``k`` holds samples ``k·L … (k+1)·L − 1``
with ``L = frame_length(rate, frame_ms)``, so a signal of ``T`` samples gives ``n_frames = ⌈T / L⌉``
labels, one per frame of :func:`fgraph.datasets.audio.frame_labels` (the reference labels, from the
CLEAN signal). Every detector here sees only the signal it is given (the noisy one in the
experiment), never the clean signal or the reference labels.

* :func:`webrtc_vad` — Google's WebRTC VAD (the ``webrtcvad`` module of the ``webrtcvad-wheels``
  package) at one aggressiveness ``mode`` 0…3: bool (n_frames,). :func:`webrtc_vad_modes` runs all
  four modes on one signal; :func:`pcm16_bytes` is the conversion to the 16-bit PCM it reads.
* :func:`energy_vad_scores` — frame energy in dB, float (n_frames,): a score for ROC AUC;
  :func:`energy_vad_threshold` — the threshold chosen from the signal alone (noise floor + 3 dB,
  below); :func:`energy_vad` — bool (n_frames,), frame energy above that threshold.
* :func:`vad_metrics` — frame accuracy, precision, recall and F1 (speech is the positive class)
  of bool labels, and ROC AUC of real-valued scores, against the reference labels.

Errors: a signal, labels or scores that are not what they should be raise
:class:`fgraph.errors.DatasetError`; a detector option (WebRTC's rate, frame length or mode, a
percentile or margin) that cannot be used raises :class:`fgraph.errors.ModelError`; a missing
optional library raises ``ImportError`` naming the extra that installs it.

Like the rest of the package this module imports numpy only; ``webrtcvad``
(``pip install -e examples``) and scikit-learn (``sklearn.metrics``, ``pip install "fgraph-mp[models]"``)
are imported inside the functions that need them.
"""
from __future__ import annotations

import numbers

import numpy as np

from fgraph.datasets.audio import DEFAULT_RATE, as_signal, frame_energy_db, frame_length
from fgraph.errors import DatasetError, ModelError

__all__ = [
    "ENERGY_MARGIN_DB",
    "NOISE_PERCENTILE",
    "PCM_TOLERANCE",
    "WEBRTC_FRAME_MS",
    "WEBRTC_MODES",
    "WEBRTC_RATES",
    "energy_vad",
    "energy_vad_scores",
    "energy_vad_threshold",
    "pcm16_bytes",
    "vad_metrics",
    "webrtc_vad",
    "webrtc_vad_modes",
]

WEBRTC_RATES = (8000, 16000, 32000, 48000)  # Hz: the rates WebRTC's VAD accepts
WEBRTC_FRAME_MS = (10, 20, 30)  # ms: the frame lengths it accepts
WEBRTC_MODES = (0, 1, 2, 3)  # aggressiveness: 0 flags the most frames as speech, 3 the fewest
# Samples may exceed [−1, 1] by this much before it is an error (they are then clipped): 1/1000 of
# full scale, about 33 steps of 16-bit PCM — rounding of a peak-normalised or resampled signal,
# not a signal in other units (a standardised signal or int16 counts are off by a factor ≥ 3).
PCM_TOLERANCE = 1e-3

# The energy VAD's threshold rule (see energy_vad_threshold for why these values).
NOISE_PERCENTILE = 10.0  # the noise floor: this percentile of the frame energies in dB
ENERGY_MARGIN_DB = 3.0  # speech if the frame energy is more than this above the noise floor


# ----------------------------------------------------------------------------- WebRTC VAD
def _webrtcvad():
    try:
        import webrtcvad
    except ImportError as error:
        raise ImportError(
            f"the WebRTC VAD needs the webrtcvad module, which is not installed ({error}); "
            f'install the experiments, which depend on it: pip install -e examples (the webrtcvad-wheels package)'
        ) from None
    return webrtcvad


def _webrtc_options(rate, frame_ms, what: str) -> int:
    """Check WebRTC's rate and frame length; return the samples per frame."""
    if isinstance(rate, bool) or not isinstance(rate, numbers.Integral) or int(rate) not in WEBRTC_RATES:
        raise ModelError(f"{what}: WebRTC's VAD takes signals at {', '.join(map(str, WEBRTC_RATES))} Hz, got rate={rate!r}; "
                         f"resample the signal first (fgraph.datasets.audio.resample_signal(signal, rate, 16000))")
    if isinstance(frame_ms, bool) or not isinstance(frame_ms, numbers.Real) or frame_ms not in WEBRTC_FRAME_MS:
        raise ModelError(f"{what}: WebRTC's VAD takes frames of {', '.join(map(str, WEBRTC_FRAME_MS))} ms, got frame_ms={frame_ms!r}")
    return frame_length(int(rate), float(frame_ms))


def _webrtc_mode(mode, what: str) -> int:
    if isinstance(mode, bool) or not isinstance(mode, numbers.Integral) or int(mode) not in WEBRTC_MODES:
        raise ModelError(f"{what}: the WebRTC mode (aggressiveness) must be one of 0, 1, 2, 3, got mode={mode!r}")
    return int(mode)


def _pcm16(signal, what: str) -> np.ndarray:
    """``signal`` (T,) in [−1, 1] as little-endian int16 (T,): round(32768·x) clipped to [−32768, 32767]."""
    x = as_signal(signal, what)
    peak = float(np.max(np.abs(x)))
    if peak > 1.0 + PCM_TOLERANCE:
        raise DatasetError(f"{what}: samples must lie in [−1, 1] (16-bit PCM full scale), the largest magnitude is {peak:.4g}; "
                           f"scale the signal down first (e.g. signal / {np.ceil(peak * 100) / 100:g}), "
                           f"and scale every signal compared with it alike")
    return np.clip(np.round(x * 32768.0), -32768, 32767).astype("<i2")


def pcm16_bytes(signal) -> bytes:
    """``signal`` float (T,) in [−1, 1] as 16-bit little-endian PCM: 2·T bytes.

    Sample x becomes round(32768·x) clipped to [−32768, 32767] — the quantisation of
    :func:`fgraph.datasets.audio.write_wav` — so −1.0 → −32768, +1.0 → 32767 (clipped: [−1, 1) is the
    16-bit range), and samples read by :func:`fgraph.datasets.audio.load_wav` (k / 32768) come back as
    exactly k. Samples outside [−1, 1] by up to :data:`PCM_TOLERANCE` are clipped; beyond it they
    raise :class:`DatasetError` (the signal is not scaled as audio).
    """
    return _pcm16(signal, "pcm16_bytes").tobytes()


def _webrtc_run(module, pcm: np.ndarray, rate: int, length: int, mode: int) -> np.ndarray:
    """One fresh detector at ``mode`` over the frames of ``pcm`` (n_frames·length,): bool (n_frames,)."""
    vad = module.Vad(mode)
    buffer = pcm.tobytes()
    step = 2 * length  # bytes per frame
    n_frames = pcm.size // length
    return np.fromiter((vad.is_speech(buffer[k * step:(k + 1) * step], rate) for k in range(n_frames)),
                       dtype=bool, count=n_frames)


def _webrtc_prepare(signal, rate, frame_ms, what: str):
    length = _webrtc_options(rate, frame_ms, what)
    pcm = _pcm16(signal, what)
    module = _webrtcvad()
    if not module.valid_rate_and_frame_length(int(rate), length):  # the module's own check, as a safeguard
        raise ModelError(f"{what}: webrtcvad rejects frames of {length} samples at {rate} Hz")
    n_frames = -(-pcm.size // length)
    padded = np.zeros(n_frames * length, dtype="<i2")  # the last partial frame is padded with zeros
    padded[:pcm.size] = pcm
    return module, padded, int(rate), length


def webrtc_vad(signal, rate: int = DEFAULT_RATE, mode: int = 0, frame_ms: int = 10) -> np.ndarray:
    """Speech / non-speech per frame by Google's WebRTC VAD: bool (n_frames,), True for speech.

    ``signal``: float (T,) with samples in [−1, 1] (as :func:`fgraph.datasets.audio.load_speech`
    returns them), converted by :func:`pcm16_bytes`. ``rate``: one of :data:`WEBRTC_RATES`
    (8, 16, 32 or 48 kHz). ``frame_ms``: 10, 20 or 30. ``mode``: WebRTC's aggressiveness 0…3; a
    higher mode needs more evidence before it calls a frame speech, so it flags fewer frames
    (fewer false alarms in noise, more missed speech).

    Frames are those of :mod:`fgraph.datasets.audio` (frame k = samples k·L … (k+1)·L − 1,
    L = frame_length(rate, frame_ms), n_frames = ⌈T/L⌉). WebRTC reads whole frames only, so the last
    partial frame is padded with zeros to L samples; its decision is that of the padded frame (the
    zeros lower its energy, so a short speech tail may be called silence).

    WebRTC's VAD has state (an adaptive noise model and a hangover): each call uses a fresh detector
    and feeds it the frames in order, so the label of frame k depends on frames 0…k, and a
    detector starts with no knowledge of the noise level.

    Raises :class:`ModelError` for an unsupported rate, frame length or mode,
    :class:`DatasetError` for a signal that is not (T,), finite, non-empty and within [−1, 1]
    (up to :data:`PCM_TOLERANCE`), and ``ImportError`` if webrtcvad is not installed
    (``pip install -e examples``).
    """
    mode = _webrtc_mode(mode, "webrtc_vad")
    module, pcm, rate, length = _webrtc_prepare(signal, rate, frame_ms, "webrtc_vad")
    return _webrtc_run(module, pcm, rate, length, mode)


def webrtc_vad_modes(signal, rate: int = DEFAULT_RATE, frame_ms: int = 10) -> dict[int, np.ndarray]:
    """:func:`webrtc_vad` at every mode: {0: bool (n_frames,), 1: …, 2: …, 3: …}.

    The signal is converted once; each mode runs its own fresh detector. Errors as :func:`webrtc_vad`.
    """
    module, pcm, rate, length = _webrtc_prepare(signal, rate, frame_ms, "webrtc_vad_modes")
    return {mode: _webrtc_run(module, pcm, rate, length, mode) for mode in WEBRTC_MODES}


# ----------------------------------------------------------------------------- energy VAD
def energy_vad_scores(signal, rate: int = DEFAULT_RATE, frame_ms: float = 10.0) -> np.ndarray:
    """Frame energies in dB, float (n_frames,): the energy detector's score (higher: more speech-like).

    e_k = 10·log10(max(mean of x_t² over frame k, 10⁻²⁰)), exactly
    :func:`fgraph.datasets.audio.frame_energy_db` (a short last frame averages the samples it has).
    Any rate and frame length :func:`fgraph.datasets.audio.frame_length` accepts. Use it as
    ``scores`` in :func:`vad_metrics` for the ROC AUC of the energy detector (threshold-free).
    """
    x = as_signal(signal, "energy_vad_scores")
    return frame_energy_db(x, rate, frame_ms)


def energy_vad_threshold(signal, rate: int = DEFAULT_RATE, frame_ms: float = 10.0, *,
                         noise_percentile: float = NOISE_PERCENTILE, margin_db: float = ENERGY_MARGIN_DB) -> float:
    """The energy detector's threshold in dB for ``signal`` (T,), from that signal alone.

    The rule: noise floor + margin, threshold = P_q(e) + ``margin_db``, where P_q(e) is the
    ``noise_percentile``-th percentile (10) of the frame energies e_k in dB
    (:func:`energy_vad_scores`) and ``margin_db`` is 3 dB.

    Why this rule. It is quantile-based noise estimation (Stahl, Fischer & Bippus, ICASSP 2000;
    a relative of Martin's minimum statistics, 2001): in speech with pauses the quietest frames are
    noise, so a low quantile of the frame energies estimates the noise level without knowing where
    the speech is. The 10th percentile rather than the minimum, because the minimum sits in the
    lower tail of the noise's own fluctuation (and on a single dropout); it assumes at least 10 %
    of the frames are pauses (41 % of the LibriSpeech clip's reference frames are, 27 % of the
    espeak clip's). A margin of 3 dB is a doubling of power: a frame is called speech when its
    power exceeds twice the noise floor, i.e. when the speech in it is about as strong as the noise
    (a local SNR of about 0 dB, the point below which an energy detector cannot tell the two
    apart). Under white Gaussian noise a 10 ms frame at 16 kHz (160 samples) has an energy that
    scatters by about 10·log10(e)·√(2/160) ≈ 0.49 dB, so the threshold lies about 2.4 dB, five of
    those standard deviations, above the noise's mean level: noise frames almost never cross it.
    Otsu's threshold on the dB histogram was considered and rejected: it treats the two classes
    symmetrically, while in white noise the noise frames form a narrow peak and the speech frames
    a broad spread, so it cuts into the speech. On the bundled clips with white noise (mean frame
    accuracy over 5 noise draws) this rule was better at 20, 10, 5 and 0 dB (LibriSpeech at 10 dB:
    0.89 against 0.79; espeak: 0.84 against 0.67), worse at −5 dB, where both are poor
    (LibriSpeech 0.55 against 0.64), and on the clean LibriSpeech clip (0.85 against 0.92), whose
    recording noise is not white and fluctuates by more than 3 dB. With digital silence in the
    pauses (a clean synthetic clip) the floor is the energy floor, −200 dB, and every frame that is
    not silent is speech.

    Raises :class:`ModelError` for a percentile outside [0, 100] or a margin that is not finite.
    """
    for label, value in (("noise_percentile", noise_percentile), ("margin_db", margin_db)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
            raise ModelError(f"energy_vad_threshold: {label} must be a finite number, got {value!r}")
    if not 0.0 <= noise_percentile <= 100.0:
        raise ModelError(f"energy_vad_threshold: noise_percentile must lie in [0, 100], got {noise_percentile!r}")
    energy = energy_vad_scores(signal, rate, frame_ms)
    return float(np.percentile(energy, noise_percentile) + margin_db)


def energy_vad(signal, rate: int = DEFAULT_RATE, frame_ms: float = 10.0, threshold_db: float | None = None, *,
               noise_percentile: float = NOISE_PERCENTILE, margin_db: float = ENERGY_MARGIN_DB) -> np.ndarray:
    """Speech / non-speech per frame by frame energy: bool (n_frames,), True where e_k > threshold.

    e_k from :func:`energy_vad_scores`. ``threshold_db``: None (the default) chooses it from the
    signal alone by :func:`energy_vad_threshold` (10th percentile of the e_k + 3 dB); a number is
    used as it is, in the same dB scale (10·log10 of the mean square of samples in [−1, 1]: a
    full-scale sine is −3 dB). No smoothing, gap filling or hangover: each frame is decided alone.
    """
    x = as_signal(signal, "energy_vad")
    energy = energy_vad_scores(x, rate, frame_ms)
    if threshold_db is None:
        threshold = energy_vad_threshold(x, rate, frame_ms, noise_percentile=noise_percentile, margin_db=margin_db)
    elif isinstance(threshold_db, bool) or not isinstance(threshold_db, numbers.Real) or not np.isfinite(threshold_db):
        raise ModelError(f"energy_vad: threshold_db must be None or a finite number of dB, got {threshold_db!r}")
    else:
        threshold = float(threshold_db)
    return energy > threshold


# ----------------------------------------------------------------------------- metrics
def _as_labels(labels, what: str, name: str) -> np.ndarray:
    y = np.asarray(labels)
    if y.ndim != 1 or y.size == 0:
        raise DatasetError(f"{what}: {name} must have shape (n_frames,) with n_frames ≥ 1, got shape {y.shape}")
    if y.dtype == bool:
        return y
    if not (np.issubdtype(y.dtype, np.integer) or np.issubdtype(y.dtype, np.floating)) or not np.all(np.isin(y, (0, 1))):
        raise DatasetError(f"{what}: {name} must be speech / non-speech labels (bool, or 0 and 1 only); "
                           f"pass a real-valued detector output as scores instead")
    return y.astype(bool)


def vad_metrics(labels_true, labels_pred=None, scores=None) -> dict:
    """Frame metrics of a detector against reference labels; speech (True) is the positive class.

    ``labels_true``: bool (n,), e.g. :func:`fgraph.datasets.audio.frame_labels` of the clean signal;
    ``labels_pred``: bool (n,) or None, the detector's decisions; ``scores``: float (n,) or None,
    a real-valued speech score (higher: more speech-like), e.g. :func:`energy_vad_scores` or
    :func:`fgraph.datasets.audio.frame_scores`. Labels may also be given as 0 / 1 numbers.
    At least one of ``labels_pred`` and ``scores`` is needed.

    Returns a dict:

    * ``"n_frames"`` — n; ``"speech_fraction"`` — the fraction of reference frames that are speech;
    * ``"accuracy"`` — the fraction of frames where labels_pred equals labels_true;
    * ``"precision"`` — TP / (TP + FP), None if nothing is predicted speech;
    * ``"recall"`` — TP / (TP + FN), None if no reference frame is speech;
    * ``"f1"`` — 2·TP / (2·TP + FP + FN), None if neither has any speech frame;
    * ``"auc"`` — ROC AUC of ``scores`` (ties count one half), None if ``scores`` is None or
      labels_true has one class only (no pairs of a speech and a non-speech frame to rank).

    The four label metrics are None when ``labels_pred`` is None. An AUC is never computed from
    ``labels_pred`` (bool decisions as a degenerate score give one point of the ROC curve, not a
    ranking); give ``scores`` for it. Values are floats; None marks a metric that is undefined
    (0/0) rather than a made-up 0 or 1. Computed with scikit-learn's ``sklearn.metrics``
    (accuracy_score, precision_score, recall_score, f1_score, roc_auc_score).

    Raises :class:`DatasetError` if labels are not (n,) bool or 0/1, scores are not (n,) finite
    real numbers, the lengths differ, or both ``labels_pred`` and ``scores`` are None.
    """
    what = "vad_metrics"
    truth = _as_labels(labels_true, what, "labels_true")
    if labels_pred is None and scores is None:
        raise DatasetError(f"{what}: give labels_pred (bool decisions), scores (real-valued), or both")
    pred = None if labels_pred is None else _as_labels(labels_pred, what, "labels_pred")
    if pred is not None and pred.shape != truth.shape:
        raise DatasetError(f"{what}: labels_pred has {pred.size} frames but labels_true has {truth.size}; "
                           f"frame both with the same rate and frame_ms")
    score = None
    if scores is not None:
        try:
            score = np.asarray(scores, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise DatasetError(f"{what}: scores must be real numbers ({error})") from None
        if score.shape != truth.shape:
            raise DatasetError(f"{what}: scores must have shape {truth.shape} like labels_true, got {score.shape}; "
                               f"frame both with the same rate and frame_ms")
        if not np.all(np.isfinite(score)):
            raise DatasetError(f"{what}: scores have NaN or infinite values")
    try:
        from sklearn import metrics
    except ImportError as error:
        raise ImportError(f"vad_metrics needs scikit-learn ({error}); pip install \"fgraph-mp[models]\"") from None

    result = {"n_frames": int(truth.size), "speech_fraction": float(truth.mean()),
              "accuracy": None, "precision": None, "recall": None, "f1": None, "auc": None}
    if pred is not None:
        tp = int(np.sum(truth & pred))
        fp = int(np.sum(~truth & pred))
        fn = int(np.sum(truth & ~pred))
        result["accuracy"] = float(metrics.accuracy_score(truth, pred))
        if tp + fp > 0:
            result["precision"] = float(metrics.precision_score(truth, pred, zero_division=0.0))
        if tp + fn > 0:
            result["recall"] = float(metrics.recall_score(truth, pred, zero_division=0.0))
        if tp + fp + fn > 0:
            result["f1"] = float(metrics.f1_score(truth, pred, zero_division=0.0))
    if score is not None and 0 < truth.sum() < truth.size:
        result["auc"] = float(metrics.roc_auc_score(truth, score))
    return result
