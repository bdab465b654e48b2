"""fgraph.datasets.audio: WAV reading (scaling, channels, resampling, named errors), the bundled
speech clips against their recorded hashes and durations, the energy labels on signals whose
answer is known, white noise at an exact SNR, and standardising."""
import hashlib
import re
import shutil

import numpy as np
import pytest
from scipy.io import wavfile

from fgraph.datasets.audio import (
    DATA_DIR,
    SPEECH_FILES,
    SPEECH_NAMES,
    DatasetError,
    add_white_noise,
    frame_energy_db,
    frame_labels,
    frame_length,
    frame_scores,
    load_speech,
    load_wav,
    resample_signal,
    sample_labels,
    speech_path,
    standardise,
    write_wav,
)


# ----------------------------------------------------------------------------- reading WAV files
def test_int16_pcm_reads_as_samples_over_32768(tmp_path):
    pcm = np.random.default_rng(0).integers(-32768, 32768, size=1000).astype(np.int16)
    pcm[:2] = [-32768, 32767]
    wavfile.write(tmp_path / "a.wav", 16000, pcm)
    signal, rate = load_wav(tmp_path / "a.wav")
    assert rate == 16000 and signal.dtype == np.float64 and signal.shape == (1000,)
    np.testing.assert_array_equal(signal, pcm / 32768.0)
    assert signal[0] == -1.0 and signal[1] == 1.0 - 2.0 ** -15


@pytest.mark.parametrize("dtype, full_scale, offset", [(np.uint8, 128.0, 128.0), (np.int32, 2.0 ** 31, 0.0)])
def test_other_pcm_widths_scale_to_minus_one_one(tmp_path, dtype, full_scale, offset):
    info = np.iinfo(dtype)
    pcm = np.array([info.min, info.max, int(offset), int(offset) + 1], dtype=dtype)
    wavfile.write(tmp_path / "b.wav", 8000, pcm)
    signal, rate = load_wav(tmp_path / "b.wav", rate=None)
    assert rate == 8000
    np.testing.assert_array_equal(signal, (pcm.astype(np.float64) - offset) / full_scale)
    assert signal.min() == -1.0 and signal.max() < 1.0


def test_float_wavs_read_as_stored(tmp_path):
    samples = np.linspace(-1.5, 1.5, 777).astype(np.float32)  # float WAVs may exceed full scale: kept
    wavfile.write(tmp_path / "f.wav", 16000, samples)
    signal, _ = load_wav(tmp_path / "f.wav")
    np.testing.assert_array_equal(signal, samples.astype(np.float64))


def test_stereo_is_averaged_to_mono(tmp_path):
    left = np.arange(-500, 500, dtype=np.int16) * 20
    right = np.full(1000, 1000, dtype=np.int16)
    wavfile.write(tmp_path / "s.wav", 16000, np.column_stack([left, right]))
    signal, _ = load_wav(tmp_path / "s.wav")
    assert signal.shape == (1000,)
    np.testing.assert_allclose(signal, (left / 32768.0 + right / 32768.0) / 2, rtol=0, atol=1e-15)


def test_resampling_keeps_the_frequency_and_the_length_ratio(tmp_path):
    # 1 s of a 1234 Hz sine at 22050 Hz → 16000 samples at 16 kHz, whose FFT (1 Hz bins) peaks at 1234 Hz
    t = np.arange(22050) / 22050
    wavfile.write(tmp_path / "sine.wav", 22050, (0.5 * np.sin(2 * np.pi * 1234 * t)).astype(np.float32))
    signal, rate = load_wav(tmp_path / "sine.wav", rate=16000)
    assert rate == 16000 and signal.shape == (16000,)
    spectrum = np.abs(np.fft.rfft(signal))
    assert np.fft.rfftfreq(signal.size, 1 / rate)[np.argmax(spectrum)] == 1234.0
    # away from the edges (the filter's start-up) the amplitude is kept and the phase is right
    inner = slice(500, -500)
    expected = 0.5 * np.sin(2 * np.pi * 1234 * np.arange(16000) / 16000)
    np.testing.assert_allclose(signal[inner], expected[inner], atol=5e-3)
    # other ratios: ⌈T·up/down⌉ samples, batches along the last axis
    assert resample_signal(np.ones((3, 441)), 44100, 16000).shape == (3, 160)
    assert resample_signal(np.ones(1000), 8000, 16000).shape == (2000,)
    np.testing.assert_array_equal(resample_signal(signal, 16000, 16000), signal)


# ----------------------------------------------------------------------------- named errors
def test_wrong_rate_without_resampling_is_a_named_error(tmp_path):
    wavfile.write(tmp_path / "at22k.wav", 22050, np.zeros(100, np.int16) + 5)
    with pytest.raises(DatasetError, match=r"at22k\.wav is sampled at 22050 Hz, not the 16000 Hz"):
        load_wav(tmp_path / "at22k.wav", 16000, resample=False)
    assert load_wav(tmp_path / "at22k.wav", 22050, resample=False)[1] == 22050
    assert load_wav(tmp_path / "at22k.wav", None, resample=False)[1] == 22050


def test_empty_garbage_missing_and_non_finite_files_are_named_errors(tmp_path):
    wavfile.write(tmp_path / "empty.wav", 16000, np.zeros(0, np.int16))
    with pytest.raises(DatasetError, match=r"empty\.wav has no samples"):
        load_wav(tmp_path / "empty.wav")
    wavfile.write(tmp_path / "empty_stereo.wav", 16000, np.zeros((0, 2), np.float32))
    with pytest.raises(DatasetError, match=r"empty_stereo\.wav has no samples"):
        load_wav(tmp_path / "empty_stereo.wav")
    (tmp_path / "garbage.wav").write_bytes(b"this is not a RIFF file, just text" * 20)
    with pytest.raises(DatasetError, match=r"garbage\.wav cannot be read as a WAV file"):
        load_wav(tmp_path / "garbage.wav")
    (tmp_path / "zero_bytes.wav").write_bytes(b"")
    with pytest.raises(DatasetError, match=r"zero_bytes\.wav cannot be read as a WAV file"):
        load_wav(tmp_path / "zero_bytes.wav")
    whole = tmp_path / "whole.wav"
    wavfile.write(whole, 16000, np.ones(100, np.int16))
    (tmp_path / "truncated.wav").write_bytes(whole.read_bytes()[:30])
    with pytest.raises(DatasetError, match=r"truncated\.wav cannot be read as a WAV file"):
        load_wav(tmp_path / "truncated.wav")
    with pytest.raises(DatasetError, match=r"missing\.wav does not exist"):
        load_wav(tmp_path / "missing.wav")
    with pytest.raises(DatasetError, match="is a directory"):
        load_wav(tmp_path)
    wavfile.write(tmp_path / "nan.wav", 16000, np.array([0.0, np.nan, 0.5], np.float32))
    with pytest.raises(DatasetError, match=r"nan\.wav has NaN or infinite samples"):
        load_wav(tmp_path / "nan.wav")
    with pytest.raises(DatasetError, match="positive whole number of Hz"):
        load_wav(whole, rate=0)


def test_write_wav_round_trips_within_half_a_step(tmp_path):
    signal = np.sin(np.linspace(0, 20, 999)) * 0.9
    write_wav(tmp_path / "w.wav", signal, 16000)
    back, rate = load_wav(tmp_path / "w.wav")
    assert rate == 16000 and wavfile.read(tmp_path / "w.wav")[1].dtype == np.int16
    assert np.max(np.abs(back - signal)) <= 2.0 ** -16
    with pytest.raises(DatasetError, match=r"lie in \[−1, 1\]"):
        write_wav(tmp_path / "loud.wav", signal * 2, 16000)


# ----------------------------------------------------------------------------- bundled speech
def recorded_audio_hashes():
    text = (DATA_DIR / "README.md").read_text()
    section = text.split("## SHA-256 of the audio files", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"\| `([\w.-]+)` \| `([0-9a-f]{64})` \|", section))


def test_bundled_clips_match_their_recorded_sha256():
    hashes = recorded_audio_hashes()
    assert sorted(hashes) == sorted(SPEECH_FILES.values())
    for name, digest in hashes.items():
        assert hashlib.sha256((DATA_DIR / name).read_bytes()).hexdigest() == digest, name


@pytest.mark.parametrize("name, samples", [("librispeech", 31440), ("espeak", None)])
def test_bundled_clips_load_at_16_khz_with_their_durations(name, samples):
    signal, rate = load_speech(name)
    file_rate, pcm = wavfile.read(speech_path(name))
    assert rate == file_rate == 16000 and pcm.dtype == np.int16 and pcm.ndim == 1
    np.testing.assert_array_equal(signal, pcm / 32768.0)
    if samples is not None:
        assert signal.size == samples and signal.size / rate == 1.965
    else:
        assert signal.size / rate >= 10.0
    assert speech_path(name.upper()) == speech_path(name)


def test_bundled_clips_have_speech_and_pauses():
    for name in SPEECH_NAMES:
        signal, rate = load_speech(name)
        labels = frame_labels(signal, rate)
        assert labels.shape == (-(-signal.size // 160),)
        assert 0.3 < labels.mean() < 0.9, name
        assert not labels[0] and not labels[-1], name  # both clips start and end in silence
    # the espeak clip: six sentences, five pauses of 500–1200 ms between them (less the 20 ms hangover)
    labels = frame_labels(*load_speech("espeak"))
    starts = np.flatnonzero(np.diff(labels.astype(int)) == 1) + 1
    stops = np.flatnonzero(np.diff(labels.astype(int)) == -1) + 1
    assert starts.size == stops.size == 6
    pauses = starts[1:] - stops[:-1]
    assert np.all(pauses >= 45) and np.all(pauses <= 125), pauses
    # the LibriSpeech clip: one stretch of speech after 0.58 s of recorded silence
    labels = frame_labels(*load_speech("librispeech"))
    assert np.flatnonzero(labels)[0] == 58 and labels[58:170].all()


def test_unknown_clip_is_a_named_error():
    with pytest.raises(DatasetError, match="unknown speech clip 'timit'.*espeak, librispeech"):
        speech_path("timit")
    with pytest.raises(DatasetError, match="string"):
        load_speech(1)


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")
def test_the_espeak_clip_is_reproducible(tmp_path):
    from fgraph.datasets import make_espeak_speech

    if ": 1.51 " not in make_espeak_speech.espeak_version():
        pytest.skip("the bundled clip was made with eSpeak NG 1.51")
    made = make_espeak_speech.make(tmp_path / "again.wav")
    assert made.read_bytes() == speech_path("espeak").read_bytes()


# ----------------------------------------------------------------------------- labels
RATE = 16000


def tone(ms_silence_before, ms_tone, ms_silence_after, amplitude=0.5, frequency=440.0):
    n_before, n_tone, n_after = (RATE * ms // 1000 for ms in (ms_silence_before, ms_tone, ms_silence_after))
    t = np.arange(n_tone) / RATE
    return np.concatenate([np.zeros(n_before), amplitude * np.sin(2 * np.pi * frequency * t), np.zeros(n_after)])


def test_frame_energy_is_the_mean_square_in_db():
    x = np.concatenate([np.full(160, 0.1), np.zeros(160), np.full(80, 1.0)])  # last frame: 80 of 160 samples
    np.testing.assert_allclose(frame_energy_db(x, RATE), [-20.0, -200.0, 0.0])
    assert frame_length(16000) == 160 and frame_length(22050, 20) == 441


def test_a_tone_in_silence_is_speech_exactly_on_its_frames_plus_the_hangover():
    # 300 ms silence, 500 ms tone, 400 ms silence: the tone fills frames 30 … 79
    signal = tone(300, 500, 400)
    expected = np.zeros(120, bool)
    expected[30:80] = True
    np.testing.assert_array_equal(frame_labels(signal, RATE, hangover_ms=0), expected)
    expected[80:82] = True  # the documented 20 ms hangover: two frames after the run
    np.testing.assert_array_equal(frame_labels(signal, RATE), expected)
    # the same with a recording-noise floor 50 dB below the tone
    noisy = signal + np.random.default_rng(1).standard_normal(signal.size) * 0.5 / np.sqrt(2) * 10 ** (-50 / 20)
    np.testing.assert_array_equal(frame_labels(noisy, RATE), expected)


def test_the_threshold_is_relative_to_the_95th_percentile():
    # a loud tone (frames 10 … 59) and a quieter one (frames 80 … 99), 20 resp. 30 dB down
    # plus a 10 ms click 10 dB above the loud tone (frame 125): a percentile ignores it, the loudest frame would not
    for drop_db, quiet_is_speech in ((20.0, True), (30.0, False)):
        signal = np.concatenate([tone(100, 500, 200), tone(0, 200, 400, amplitude=0.5 * 10 ** (-drop_db / 20))])
        signal[125 * 160:126 * 160] = tone(0, 10, 0, amplitude=0.5 * 10 ** (10 / 20))
        labels = frame_labels(signal, RATE, hangover_ms=0)
        assert labels[10:60].all() and labels[80:100].all() == quiet_is_speech
        assert not labels[:10].any() and not labels[60:80].any() and not labels[100:].any()


def test_short_gaps_are_filled_and_short_bursts_dropped():
    bridged = np.concatenate([tone(200, 300, 0), tone(50, 300, 200)])  # a 50 ms gap inside speech
    assert frame_labels(bridged, RATE, hangover_ms=0)[20:85].all()
    kept = np.concatenate([tone(200, 300, 0), tone(200, 300, 200)])  # a 200 ms pause stays a pause
    labels = frame_labels(kept, RATE, hangover_ms=0)
    assert not labels[50:70].any() and labels[20:50].all() and labels[70:100].all()
    click = np.concatenate([tone(200, 300, 300), tone(0, 20, 200)])  # a 20 ms burst is not speech
    labels = frame_labels(click, RATE, hangover_ms=0)
    assert labels[20:50].all() and not labels[50:].any()
    assert frame_labels(click, RATE, hangover_ms=0, min_speech_ms=0)[80:82].all()


def test_labels_expand_to_samples_and_scores_average_back_to_frames():
    labels = np.array([False, True, True, False])
    per_sample = sample_labels(labels, 160, 600)  # the last frame has 120 samples
    assert per_sample.shape == (600,) and per_sample.dtype == bool
    np.testing.assert_array_equal(per_sample, np.repeat([False, True, True, False], [160, 160, 160, 120]))
    np.testing.assert_array_equal(frame_scores(per_sample.astype(float), RATE), labels.astype(float))
    with pytest.raises(DatasetError, match="do not cover T = 700"):
        sample_labels(labels, 160, 700)
    # means per frame, with a batch axis; the short last frame averages the samples it has
    p = np.linspace(0.0, 1.0, 400)
    scores = frame_scores(np.stack([p, 1 - p]), RATE)
    assert scores.shape == (2, 3)
    np.testing.assert_allclose(scores[0], [p[:160].mean(), p[160:320].mean(), p[320:].mean()])
    np.testing.assert_allclose(scores[1], 1 - scores[0])
    with pytest.raises(DatasetError, match=r"\[0, 1\]"):
        frame_scores(p * 2, RATE)


def test_label_errors_are_named():
    with pytest.raises(DatasetError, match="same energy"):
        frame_labels(np.zeros(1600), RATE)
    with pytest.raises(DatasetError, match="empty"):
        frame_labels(np.zeros(0), RATE)
    with pytest.raises(DatasetError, match="NaN"):
        frame_labels(np.array([0.0, np.nan]), RATE)
    with pytest.raises(DatasetError, match="hangover_ms"):
        frame_labels(tone(10, 10, 10), RATE, hangover_ms=-1)


# ----------------------------------------------------------------------------- noise and scaling
def measured_snr_db(clean, noisy):
    return 10 * np.log10(np.mean(clean ** 2) / np.mean((noisy - clean) ** 2))


def test_white_noise_gives_the_requested_snr():
    clean = 0.3 * np.sin(2 * np.pi * 440 * np.arange(400_000) / RATE)  # power 0.045
    snrs = [20.0, 10.0, 0.0, -5.0]
    noisy, variance = add_white_noise(clean, snrs, random_state=0)
    assert noisy.shape == (4, clean.size) and variance.shape == (4,)
    np.testing.assert_allclose(variance, 0.045 / 10 ** (np.array(snrs) / 10), rtol=1e-9)
    for row, snr in zip(noisy, snrs):
        assert abs(measured_snr_db(clean, row) - snr) < 0.1, snr
    # the rows' noises are independent draws, and a seed reproduces them
    assert abs(np.corrcoef(noisy[0] - clean, noisy[1] - clean)[0, 1]) < 0.01
    np.testing.assert_array_equal(add_white_noise(clean, snrs, random_state=0).signal, noisy)
    one = add_white_noise(clean, 3.0, random_state=np.random.default_rng(2))
    assert one.signal.shape == clean.shape and isinstance(one.noise_variance, float)
    assert abs(measured_snr_db(clean, one.signal) - 3.0) < 0.1
    # the signal's power is its mean square, not its variance: a DC offset counts
    shifted = clean + 0.3
    assert add_white_noise(shifted, 10.0, random_state=0).noise_variance == pytest.approx((0.045 + 0.09) / 10, rel=1e-4)


def test_noise_errors_are_named():
    with pytest.raises(DatasetError, match="finite"):
        add_white_noise(np.ones(10), np.nan)
    with pytest.raises(DatasetError, match="finite"):
        add_white_noise(np.ones(10), [10.0, np.inf])
    with pytest.raises(DatasetError, match="empty"):
        add_white_noise(np.zeros(0), 10.0)
    with pytest.raises(DatasetError, match="all zeros"):
        add_white_noise(np.zeros(10), 10.0)
    with pytest.raises(DatasetError, match="non-empty list"):
        add_white_noise(np.ones(10), [])


def test_standardise():
    x = 3.0 + 2.0 * np.random.default_rng(0).standard_normal(1000)
    z = standardise(x)
    assert abs(z.mean()) < 1e-12 and abs(z.var() - 1.0) < 1e-12
    np.testing.assert_allclose(z, (x - x.mean()) / x.std())
    np.testing.assert_allclose(standardise(np.stack([x, -x])).std(axis=-1), [1.0, 1.0])
    with pytest.raises(DatasetError, match="constant"):
        standardise(np.full(50, 0.25))
