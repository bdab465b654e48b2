"""Speech segments of a recording as it is (fgraph.models.vad.recording): WAV files of every encoding, named errors
for bad files and options, segments of a synthetic signal with known bursts, the frame table and its files, the
figure."""
import json
import struct

import numpy as np
import pytest
from scipy.io import wavfile

from fgraph.errors import DataError
from fgraph.models.vad import RecordingError, detect_speech, read_wav

BURSTS = [(0.4, 0.9), (1.3, 2.1)]  # seconds of "speech" in the synthetic recording
SECONDS = 2.6


def synthetic(rate: int, seed: int = 0) -> np.ndarray:
    """Faint white noise (std 0.002) with two voiced bursts (150 Hz and its harmonics, std 0.3) at BURSTS."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(SECONDS * rate)) / rate
    x = rng.normal(0.0, 0.002, t.size)
    for a, b in BURSTS:
        inside = (t >= a) & (t < b)
        voiced = sum(np.sin(2 * np.pi * 150 * k * t[inside] + k) / k for k in range(1, 12))
        x[inside] += 0.3 * voiced / voiced.std()
    return x


def write_24_bit(path, rate: int, samples: np.ndarray) -> None:
    """A mono 24-bit PCM WAV written byte by byte (scipy writes no 24-bit files)."""
    pcm = np.clip(np.round(samples * 2**23), -2**23, 2**23 - 1).astype("<i4")
    data = b"".join(int(v).to_bytes(3, "little", signed=True) for v in pcm)
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate * 3, 3, 24)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(data)) + data
    with open(path, "wb") as file:
        file.write(b"RIFF" + struct.pack("<I", len(body)) + body)


def assert_edges(segments, expected, tolerance: float) -> None:
    """The segments' (start, end) are ``expected`` (n, 2) to within ``tolerance`` seconds."""
    found = np.array([segment[:2] for segment in segments]).reshape(-1, 2)
    assert found.shape == np.shape(expected), (found, expected)
    np.testing.assert_allclose(found, expected, atol=tolerance, rtol=0)


# ----------------------------------------------------------------------------- reading
@pytest.mark.parametrize("encoding", ["int16", "uint8", "int32", "float32", "float64", "stereo-int16", "int24"])
def test_read_wav_scales_every_encoding_to_the_same_samples(tmp_path, encoding):
    rate = 8000
    x = 0.5 * np.sin(np.arange(2000) / 7.0)
    path = tmp_path / f"{encoding}.wav"
    if encoding == "int16":
        wavfile.write(path, rate, np.round(x * 32768).astype(np.int16))
    elif encoding == "uint8":
        wavfile.write(path, rate, np.round(x * 128 + 128).astype(np.uint8))
    elif encoding == "int32":
        wavfile.write(path, rate, np.round(x * 2**31).astype(np.int32))
    elif encoding in ("float32", "float64"):
        wavfile.write(path, rate, x.astype(encoding))
    elif encoding == "stereo-int16":  # the channels are averaged: x and 0 average to x / 2
        wavfile.write(path, rate, np.round(np.stack([2 * x, np.zeros_like(x)], axis=1) * 32768 / 2).astype(np.int16))
        x = x / 2
    else:
        write_24_bit(path, rate, x)
    samples, file_rate = read_wav(path)
    assert file_rate == rate and samples.dtype == np.float64 and samples.shape == x.shape
    tolerance = {"uint8": 1 / 128, "int16": 1 / 32768, "stereo-int16": 1 / 32768}.get(encoding, 1e-6)
    np.testing.assert_allclose(samples, x, atol=tolerance)


def test_bad_files_are_named_errors(tmp_path):
    good = tmp_path / "good.wav"
    wavfile.write(good, 16000, np.round(synthetic(16000) * 20000).astype(np.int16))
    cases = {"missing.wav": None,
             "text.wav": b"hello, not a wav file",
             "truncated.wav": good.read_bytes()[:30],
             "empty.wav": None, "short.wav": None, "zeros.wav": None, "nan.wav": None}
    wavfile.write(tmp_path / "empty.wav", 16000, np.zeros(0, np.int16))
    wavfile.write(tmp_path / "short.wav", 16000, np.ones(100, np.int16))
    wavfile.write(tmp_path / "zeros.wav", 16000, np.zeros(16000, np.int16))
    wavfile.write(tmp_path / "nan.wav", 16000, np.array([0.1, np.nan] * 4000, np.float32))
    said = {"missing.wav": "does not exist", "text.wav": "cannot be read as a WAV file",
            "truncated.wav": "cannot be read as a WAV file", "empty.wav": "no samples", "short.wav": "lasts",
            "zeros.wav": "digital silence", "nan.wav": "NaN"}
    for name, content in cases.items():
        if content is not None:
            (tmp_path / name).write_bytes(content)
        with pytest.raises(RecordingError, match=said[name]) as raised:
            read_wav(tmp_path / name)
        assert name in str(raised.value) and isinstance(raised.value, DataError)
        error = raised.value  # no traceback from inside scipy shown with it
        assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)


def test_every_truncation_of_a_wav_file_is_a_named_error(tmp_path):
    good = tmp_path / "good.wav"
    wavfile.write(good, 16000, np.round(synthetic(16000)[:4000] * 20000).astype(np.int16))
    content = good.read_bytes()
    broken = tmp_path / "broken.wav"
    for size in range(0, 60):
        broken.write_bytes(content[:size])
        with pytest.raises(RecordingError, match="broken.wav"):
            read_wav(broken)


# ----------------------------------------------------------------------------- detection
@pytest.mark.parametrize("rate", [8000, 16000, 44100])
def test_segments_of_bursts_in_silence_are_found_within_a_frame(tmp_path, rate):
    path = tmp_path / "bursts.wav"
    wavfile.write(path, rate, np.round(synthetic(rate) * 32767).astype(np.int16))
    found = detect_speech(path)
    assert_edges(found.segments, BURSTS, 0.011)  # one 10 ms frame
    assert all(s.probability > 0.9 for s in found.segments)
    assert found.rate == 16000 and found.source_rate == rate and found.duration == pytest.approx(SECONDS)
    assert found.speech_probability.shape == found.signal.shape == (int(np.ceil(SECONDS * 16000)),)


def test_an_array_and_its_file_give_the_same_segments(tmp_path):
    x = synthetic(16000)
    path = tmp_path / "bursts.wav"
    wavfile.write(path, 16000, x.astype(np.float32))
    from_file, from_array = detect_speech(path), detect_speech(x.astype(np.float32), 16000)
    assert from_file.segments == from_array.segments
    np.testing.assert_array_equal(from_file.frames.probability, from_array.frames.probability)


def test_the_frame_table_is_consistent_with_the_segments():
    found = detect_speech(synthetic(16000), 16000, frame_ms=20.0, min_silence_ms=300.0, min_speech_ms=600.0)
    frames = found.frames
    assert len(frames) == int(np.ceil(SECONDS / 0.02))
    np.testing.assert_allclose(frames.end[:-1], frames.start[1:])
    assert frames.start[0] == 0.0 and frames.end[-1] == pytest.approx(SECONDS)
    speech = frames.speech.astype(int)
    starts = frames.start[np.flatnonzero(np.diff(np.concatenate([[0], speech])) == 1)]
    ends = frames.end[np.flatnonzero(np.diff(np.concatenate([speech, [0]])) == -1)]
    assert [(s.start, s.end) for s in found.segments] == list(zip(starts, ends))
    for segment in found.segments:
        inside = (frames.start >= segment.start) & (frames.end <= segment.end)
        assert segment.probability == pytest.approx(frames.probability[inside].mean())
    # the 0.5 s burst is shorter than min_speech_ms = 600: dropped, and its frames are not speech
    assert_edges(found.segments, BURSTS[1:], 0.021)
    assert not frames.speech[frames.end <= 1.0].any() and frames.probability[(frames.start > 0.5)
                                                                               & (frames.end < 0.8)].min() > 0.9


def test_a_short_pause_is_filled_and_a_long_one_kept():
    x = synthetic(16000)
    x[int(1.6 * 16000):int(1.68 * 16000)] = np.random.default_rng(1).normal(0, 0.002, int(0.08 * 16000))
    apart = detect_speech(x, 16000, min_silence_ms=0.0)
    assert len(apart.segments) == 3  # the 80 ms pause splits the second burst
    joined = detect_speech(x, 16000, min_silence_ms=100.0)
    assert_edges(joined.segments, BURSTS, 0.011)


def test_csv_and_json_are_written(tmp_path):
    found = detect_speech(synthetic(16000), 16000)
    found.frames.write_csv(tmp_path / "frames.csv")
    lines = (tmp_path / "frames.csv").read_text().splitlines()
    assert lines[0] == "start_s,end_s,speech_probability,speech" and len(lines) == len(found.frames) + 1
    rows = np.array([[float(v) for v in line.split(",")] for line in lines[1:]])
    np.testing.assert_allclose(rows[:, 0], found.frames.start, atol=1e-5)
    np.testing.assert_array_equal(rows[:, 3].astype(bool), found.frames.speech)
    found.write_json(tmp_path / "speech.json")
    stored = json.loads((tmp_path / "speech.json").read_text())
    assert [(s["start_s"], s["end_s"]) for s in stored["segments"]] == [tuple(s[:2]) for s in found.segments]
    assert len(stored["frames"]) == len(found.frames) and stored["settings"]["threshold"] == 0.5
    found.frames.write_json(tmp_path / "frames.json")
    assert json.loads((tmp_path / "frames.json").read_text()) == found.frames.rows()


def test_the_figure_is_written(tmp_path):
    pytest.importorskip("matplotlib")
    found = detect_speech(synthetic(16000), 16000)
    figure = found.plot(tmp_path / "speech.png")
    assert (tmp_path / "speech.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    wave, probability = figure.axes
    assert len(wave.patches) == len(found.segments) and probability.get_ylabel() == "P(speech)"


def test_a_long_recording_is_smoothed_in_blocks_with_the_same_segments():
    x = np.tile(synthetic(16000), 2)  # 5.2 s: bursts at 0.4-0.9, 1.3-2.1, 3.0-3.5, 3.9-4.7
    whole = detect_speech(x, 16000)
    blocks = detect_speech(x, 16000, block_seconds=2.0)
    assert whole.blocks == 1 and blocks.blocks == 3
    assert_edges(blocks.segments, [s[:2] for s in whole.segments], 0.011)
    assert len(whole.segments) == 4


@pytest.mark.parametrize("options, said", [
    ({"threshold": 1.0}, "threshold"), ({"threshold": "0.5"}, "threshold"), ({"frame_ms": 0}, "frame_ms"),
    ({"frame_ms": float("nan")}, "frame_ms"), ({"min_speech_ms": -1}, "min_speech_ms"),
    ({"min_silence_ms": True}, "min_silence_ms"), ({"frame_ms": 5000.0}, "longer than"),
    ({"parameters": {"rhoo": 0.9}}, "rhoo"), ({"rate": None}, "rate"), ({"rate": 0}, "rate"),
])
def test_bad_options_are_named(options, said):
    options = {"rate": 16000, **options}
    with pytest.raises(RecordingError, match=said):
        detect_speech(synthetic(16000), options.pop("rate"), **options)


def test_a_path_with_a_rate_is_refused(tmp_path):
    path = tmp_path / "bursts.wav"
    wavfile.write(path, 16000, synthetic(16000).astype(np.float32))
    with pytest.raises(RecordingError, match="carries its own rate"):
        detect_speech(path, 16000)
