"""fgraph_experiments.vad_baselines: WebRTC's VAD on the bundled LibriSpeech clip (clean and at 0 dB) and
on digital silence, the 16-bit conversion and the framing it shares with fgraph.datasets.audio, the
energy detector on a tone whose frames are known, the metrics against hand-computed values, and
every named error. The WebRTC tests are skipped when webrtcvad (a dependency of the experiments) is not installed."""
import sys

import numpy as np
import pytest

from fgraph.datasets.audio import add_white_noise, frame_labels, load_speech
from fgraph.errors import DatasetError, ModelError
from fgraph_experiments.vad_baselines import (
    ENERGY_MARGIN_DB,
    NOISE_PERCENTILE,
    energy_vad,
    energy_vad_scores,
    energy_vad_threshold,
    pcm16_bytes,
    vad_metrics,
    webrtc_vad,
    webrtc_vad_modes,
)

RATE = 16000


@pytest.fixture
def webrtcvad():
    return pytest.importorskip("webrtcvad")


@pytest.fixture(scope="module")
def librispeech():
    signal, rate = load_speech("librispeech")
    return signal, frame_labels(signal, rate)


def tone_in_silence(noise_snr_db=None, seed=0):
    """0.5 s silence, 1 s of a 440 Hz tone at amplitude 0.5, 0.5 s silence (16 kHz); tone frames 50…149."""
    t = np.arange(RATE) / RATE
    signal = np.concatenate([np.zeros(RATE // 2), 0.5 * np.sin(2 * np.pi * 440.0 * t), np.zeros(RATE // 2)])
    truth = np.zeros(200, dtype=bool)
    truth[50:150] = True
    if noise_snr_db is not None:
        signal = add_white_noise(signal, noise_snr_db, random_state=seed).signal
    return signal, truth


# ----------------------------------------------------------------------------- WebRTC VAD
@pytest.mark.parametrize("mode", [0, 1, 2, 3])
def test_webrtc_finds_the_speech_of_clean_librispeech(webrtcvad, librispeech, mode):
    signal, reference = librispeech
    labels = webrtc_vad(signal, RATE, mode=mode)
    assert labels.dtype == bool and labels.shape == reference.shape
    recall = labels[reference].mean()
    assert recall >= 0.9, f"mode {mode}: only {recall:.2f} of the reference speech frames flagged"
    assert labels.mean() < 0.9  # and not by calling everything speech


def test_the_most_aggressive_mode_flags_fewer_frames_in_noise(webrtcvad, librispeech):
    signal, reference = librispeech
    noisy = add_white_noise(signal, 0.0, random_state=0).signal
    labels = webrtc_vad_modes(noisy, RATE)
    assert sorted(labels) == [0, 1, 2, 3]
    assert all(labels[m].shape == reference.shape for m in labels)
    np.testing.assert_array_equal(labels[3], webrtc_vad(noisy, RATE, mode=3))  # a fresh detector per mode
    assert labels[3].sum() < labels[0].sum() - 0.1 * reference.size


def test_webrtc_flags_nothing_in_digital_silence(webrtcvad):
    silence = np.zeros(RATE)
    for mode, labels in webrtc_vad_modes(silence, RATE).items():
        assert labels.shape == (100,) and labels.sum() <= 1, f"mode {mode} flags {labels.sum()} silent frames"


@pytest.mark.parametrize("rate, frame_ms", [(16000, 10), (16000, 20), (8000, 30), (48000, 10)])
def test_frames_match_the_reference_labels(webrtcvad, rate, frame_ms):
    length = rate * frame_ms // 1000
    T = 37 * length + length // 3  # not a whole number of frames
    signal, _ = tone_in_silence(20.0)
    signal = signal[:T]
    labels = webrtc_vad(signal, rate, mode=0, frame_ms=frame_ms)
    reference = frame_labels(signal, rate, frame_ms)
    assert labels.shape == reference.shape == (38,)
    assert energy_vad(signal, rate, frame_ms).shape == (38,)
    # the last partial frame is zero-padded: the same decisions as on the signal padded by hand
    padded = np.concatenate([signal, np.zeros(38 * length - T)])
    np.testing.assert_array_equal(labels, webrtc_vad(padded, rate, mode=0, frame_ms=frame_ms))


def test_pcm16_bytes_exact_values():
    samples = [0.0, 0.5, -0.5, 258 / 32768, -1.0, 1.0, 1.0 - 2.0 ** -15, 1.0005, -1.0005, 3.4 / 32768, 3.6 / 32768]
    expected = [0, 16384, -16384, 258, -32768, 32767, 32767, 32767, -32768, 3, 4]
    data = pcm16_bytes(samples)
    assert isinstance(data, bytes) and len(data) == 2 * len(samples)
    np.testing.assert_array_equal(np.frombuffer(data, dtype="<i2"), expected)
    assert data[6:8] == b"\x02\x01"  # 258 = 0x0102, little-endian


def test_pcm16_bytes_round_trip_of_a_wav_clip():
    signal, _ = load_speech("librispeech")  # stored as int16 / 32768
    back = np.frombuffer(pcm16_bytes(signal), dtype="<i2") / 32768.0
    np.testing.assert_array_equal(back, signal)


# ----------------------------------------------------------------------------- energy VAD
def test_energy_vad_recovers_a_tone_in_white_noise():
    signal, truth = tone_in_silence(10.0)
    labels = energy_vad(signal, RATE)
    scores = energy_vad_scores(signal, RATE)
    assert labels.dtype == bool and labels.shape == scores.shape == truth.shape
    result = vad_metrics(truth, labels, scores)
    assert result["accuracy"] >= 0.95 and result["auc"] >= 0.99
    threshold = energy_vad_threshold(signal, RATE)
    assert threshold == pytest.approx(np.percentile(scores, NOISE_PERCENTILE) + ENERGY_MARGIN_DB)
    np.testing.assert_array_equal(labels, scores > threshold)


def test_energy_vad_explicit_threshold_and_clean_tone():
    signal, truth = tone_in_silence()
    # with digital silence the floor is −200 dB: exactly the tone's frames are above it
    np.testing.assert_array_equal(energy_vad(signal, RATE), truth)
    np.testing.assert_array_equal(energy_vad(signal, RATE, threshold_db=0.0), np.zeros(200, bool))  # tone: −12 dB
    np.testing.assert_array_equal(energy_vad(signal, RATE, threshold_db=-20.0), truth)


# ----------------------------------------------------------------------------- metrics
def test_metrics_against_hand_computed_values():
    truth = np.array([1, 1, 1, 1, 0, 0, 0, 0], dtype=bool)
    pred = np.array([1, 1, 1, 0, 1, 1, 0, 0], dtype=bool)  # TP 3, FN 1, FP 2, TN 2
    perfect = np.array([0.9, 0.8, 0.7, 0.6, 0.4, 0.3, 0.2, 0.1])
    result = vad_metrics(truth, pred, perfect)
    assert result["n_frames"] == 8 and result["speech_fraction"] == 0.5
    assert result["accuracy"] == pytest.approx(5 / 8)
    assert result["precision"] == pytest.approx(3 / 5)
    assert result["recall"] == pytest.approx(3 / 4)
    assert result["f1"] == pytest.approx(2 * 3 / (2 * 3 + 2 + 1))  # 2/3
    assert result["auc"] == pytest.approx(1.0)
    assert vad_metrics(truth, scores=-perfect)["auc"] == pytest.approx(0.0)
    one_swap = perfect.copy()
    one_swap[3] = 0.35  # below one non-speech frame: 15 of 16 pairs ranked right
    assert vad_metrics(truth, scores=one_swap)["auc"] == pytest.approx(15 / 16)
    one_tie = perfect.copy()
    one_tie[3] = 0.4  # a tie counts one half
    assert vad_metrics(truth, scores=one_tie)["auc"] == pytest.approx(15.5 / 16)
    # 0/1 numbers work as labels
    assert vad_metrics(truth.astype(int), pred.astype(float))["f1"] == pytest.approx(2 / 3)


def test_metrics_report_none_where_undefined():
    truth = np.array([1, 1, 0, 0], dtype=bool)
    pred = np.array([1, 0, 1, 0], dtype=bool)
    only_labels = vad_metrics(truth, pred)
    assert only_labels["auc"] is None and only_labels["accuracy"] == 0.5  # no AUC from bool decisions
    only_scores = vad_metrics(truth, scores=[0.9, 0.1, 0.8, 0.2])
    assert only_scores["accuracy"] is None and only_scores["f1"] is None and only_scores["auc"] == pytest.approx(0.5)
    silent = np.zeros(4, dtype=bool)
    one_class = vad_metrics(silent, silent, [0.1, 0.2, 0.3, 0.4])
    assert one_class["auc"] is None and one_class["accuracy"] == 1.0
    assert one_class["precision"] is None and one_class["recall"] is None and one_class["f1"] is None
    nothing_flagged = vad_metrics(truth, silent)
    assert nothing_flagged["precision"] is None and nothing_flagged["recall"] == 0.0 and nothing_flagged["f1"] == 0.0


# ----------------------------------------------------------------------------- named errors
@pytest.mark.parametrize("kwargs, match", [
    ({"rate": 22050}, "8000, 16000, 32000, 48000 Hz"),
    ({"rate": 16000.0}, "rate=16000.0"),
    ({"rate": True}, "rate=True"),
    ({"frame_ms": 15}, "10, 20, 30 ms"),
    ({"frame_ms": 10.5}, "10, 20, 30 ms"),
    ({"mode": 4}, "0, 1, 2, 3"),
    ({"mode": -1}, "0, 1, 2, 3"),
    ({"mode": 1.0}, "0, 1, 2, 3"),
    ({"mode": True}, "0, 1, 2, 3"),
])
def test_webrtc_option_errors(kwargs, match):
    signal = np.zeros(1600)
    with pytest.raises(ModelError, match=match):
        webrtc_vad(signal, **{"rate": RATE, **kwargs})
    if "mode" not in kwargs:
        with pytest.raises(ModelError, match=match):
            webrtc_vad_modes(signal, **{"rate": RATE, **kwargs})


@pytest.mark.parametrize("signal, match", [
    (np.full(1600, 1.01), r"\[−1, 1\].*1\.01.*scale the signal down"),
    (np.linspace(-3.0, 3.0, 1600), r"largest magnitude is 3.*scale"),
    (np.zeros((2, 1600)), "shape"),
    (np.array([]), "empty"),
    (np.array([0.0, np.nan]), "NaN"),
])
def test_webrtc_signal_errors(signal, match):
    with pytest.raises(DatasetError, match=match):
        webrtc_vad(signal, RATE)
    with pytest.raises(DatasetError, match=match):
        pcm16_bytes(signal)


def test_webrtc_missing_module_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "webrtcvad", None)  # `import webrtcvad` now fails
    with pytest.raises(ImportError, match=r"webrtcvad module, which is not installed.*pip install -e examples"):
        webrtc_vad(np.zeros(1600), RATE)
    with pytest.raises(ImportError, match=r"webrtcvad module, which is not installed.*pip install -e examples"):
        webrtc_vad_modes(np.zeros(1600), RATE)


def test_energy_vad_errors():
    signal, _ = tone_in_silence(10.0)
    with pytest.raises(ModelError, match="noise_percentile"):
        energy_vad(signal, RATE, noise_percentile=101)
    with pytest.raises(ModelError, match="margin_db"):
        energy_vad_threshold(signal, RATE, margin_db=float("nan"))
    with pytest.raises(ModelError, match="threshold_db"):
        energy_vad(signal, RATE, threshold_db="-30")
    with pytest.raises(DatasetError, match="energy_vad_scores.*shape"):
        energy_vad_scores(np.zeros((2, 100)), RATE)
    with pytest.raises(DatasetError, match="energy_vad.*NaN"):
        energy_vad(np.array([0.0, np.inf]), RATE)


@pytest.mark.parametrize("args, match", [
    (([1, 0, 1], [1, 0]), "labels_pred has 2 frames but labels_true has 3"),
    (([1, 0, 1], None, [0.1, 0.2]), r"scores must have shape \(3,\)"),
    (([[1, 0], [0, 1]], [1, 0]), r"labels_true must have shape \(n_frames,\)"),
    (([], []), r"n_frames ≥ 1"),
    (([1, 0, 1], [0.9, 0.2, 0.7]), "labels_pred must be speech / non-speech labels.*scores"),
    ((["a", "b"], [1, 0]), "labels_true must be speech / non-speech labels"),
    (([1, 0], None, [0.5, np.nan]), "NaN"),
    (([1, 0], None, ["x", "y"]), "scores must be real numbers"),
    (([1, 0],), "give labels_pred"),
])
def test_metrics_errors(args, match):
    with pytest.raises(DatasetError, match=match):
        vad_metrics(*args)


def test_metrics_missing_sklearn(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    with pytest.raises(ImportError, match="scikit-learn"):
        vad_metrics([1, 0], [1, 1])
