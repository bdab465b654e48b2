"""Inputs that cannot mislead the voice-activity detector (fgraph.models.vad).

* The level of a recording is not information: the same recording as raw 16-bit PCM, as floats in [−1, 1] (what
  ``load_wav`` returns), standardised, or at 10³⁰⁰ gives the same segmentation, offline and online.
* Parameters given as a mapping are the VADParameters they name; a mistyped field or value is a named error.
* A signal without variation (digital silence, a constant) cannot fit a speech prior: a named error, not (nan, nan).
"""
import re

import numpy as np
import pytest

import fgraph as fg
from fgraph.datasets.audio import DEFAULT_RATE, add_white_noise, load_speech, standardise
from fgraph.models.vad import (SignalError, StreamingVAD, VADParameters, detect_voice, estimate_observation_var,
                               fit_speech_prior, learn_speech_prior, signal_scale)

CHUNK = 1600  # 100 ms at 16 kHz


@pytest.fixture(scope="module")
def recording():
    """LibriSpeech at 10 dB, quantised to 16-bit PCM: (pcm int16, floats pcm / 32768, standardised floats)."""
    signal, _ = load_speech("librispeech")
    noisy = add_white_noise(signal, 10.0, random_state=0).signal
    pcm = np.round(noisy / np.max(np.abs(noisy)) * 32000).astype(np.int16)
    floats = pcm / 32768.0
    return pcm, floats, standardise(floats)


@pytest.fixture(scope="module")
def parameters():
    """The speech prior of the clean recording; v_y from the noise floor (its default scale otherwise)."""
    signal, _ = load_speech("librispeech")
    rho, speech_var = fit_speech_prior(signal)
    return VADParameters(rho=rho, speech_var=speech_var)


def with_noise_floor(parameters, y):
    return VADParameters(**{**vars(parameters), "observation_var": estimate_observation_var(y, DEFAULT_RATE)})


def test_the_level_of_the_recording_does_not_change_the_detection(recording, parameters):
    """int16 PCM, [−1, 1] floats and the standardised signal: one segmentation. (The clean clip under the default
    parameters used to read as 0.85 / 0.00 / 0.40 speech at these three levels.)"""
    floors = [estimate_observation_var(y, DEFAULT_RATE) for y in recording]
    np.testing.assert_allclose(floors[0], floors[1], rtol=1e-12)  # the noise floor in the signal's own units
    np.testing.assert_allclose(floors[2], floors[1], rtol=1e-3)   # standardising also removes the (tiny) mean
    found = [detect_voice(y, with_noise_floor(parameters, y)) for y in recording]
    fraction = np.mean(found[1].speech_probability > 0.5)
    assert 0.3 < fraction < 0.9  # a real segmentation, neither all speech nor all silence
    np.testing.assert_allclose(found[0].speech_probability, found[1].speech_probability, rtol=0, atol=1e-9)
    np.testing.assert_allclose(found[0].free_energy, found[1].free_energy, rtol=1e-9)
    assert found[0].scale == pytest.approx(32768 * found[1].scale, rel=1e-12)
    assert np.mean((found[2].speech_probability > 0.5) == (found[1].speech_probability > 0.5)) > 0.999
    assert np.max(np.abs(found[2].speech_probability - found[1].speech_probability)) < 0.05


def test_the_default_parameters_give_one_answer_at_every_level(recording):
    pcm, floats, _ = recording
    found = [detect_voice(y).speech_probability for y in (pcm, floats, 1e-3 * floats)]
    np.testing.assert_allclose(found[0], found[1], rtol=0, atol=1e-9)
    np.testing.assert_allclose(found[2], found[1], rtol=0, atol=1e-9)


def test_the_stream_gives_one_answer_at_every_level(recording, parameters):
    pcm, floats, _ = recording
    probabilities = []
    for y in (pcm, floats):
        stream = StreamingVAD(parameters)
        for start in range(0, y.size, CHUNK):  # v_y from the samples seen so far, as the experiment does
            stream.parameters = with_noise_floor(parameters, y[:start + CHUNK])
            stream.update(y[start:start + CHUNK])
        probabilities.append(stream.speech_probability)
    assert 0.3 < np.mean(probabilities[1] > 0.5) < 0.95
    np.testing.assert_allclose(probabilities[0], probabilities[1], rtol=0, atol=1e-9)


def test_a_stream_at_a_stated_level_gives_one_answer_when_the_level_is_stated_alike(recording, parameters):
    """``scale=`` fixes the unit: int16 PCM with its own level stated, and the floats with theirs, agree; the noise
    floor in that unit (``estimate_observation_var(..., scale=)``) alike."""
    pcm, floats, _ = recording
    probabilities = []
    for y in (pcm, floats):
        level = signal_scale(y)
        stream = StreamingVAD(parameters, scale=level)
        for start in range(0, y.size, CHUNK):
            stream.parameters = VADParameters(**{**vars(parameters), "observation_var": estimate_observation_var(
                y[:start + CHUNK], DEFAULT_RATE, scale=level)})
            stream.update(y[start:start + CHUNK])
        assert stream.scale == level
        probabilities.append(stream.speech_probability)
    np.testing.assert_allclose(probabilities[0], probabilities[1], rtol=0, atol=1e-9)
    assert 0.3 < np.mean(probabilities[1] > 0.5) < 0.95
    with pytest.raises(fg.ModelError, match="StreamingVAD: scale must be a positive finite number"):
        StreamingVAD(parameters, scale=0.0)
    with pytest.raises(fg.ModelError, match="estimate_observation_var: scale must be a positive finite number"):
        estimate_observation_var(floats, DEFAULT_RATE, scale=-1.0)


def test_one_chunk_of_any_level_streams_as_the_offline_detection(recording, parameters):
    pcm = recording[0]
    stream = StreamingVAD(parameters)
    np.testing.assert_allclose(stream.update(pcm), detect_voice(pcm, parameters).speech_probability, rtol=0, atol=1e-12)


def test_a_signal_at_1e300_is_detected_as_at_unit_scale(recording, parameters):
    """Squares of 10³⁰⁰ overflow; the scale is measured without squaring the raw samples."""
    floats = recording[1]
    huge = floats * (1e300 / np.max(np.abs(floats)))
    np.testing.assert_allclose(detect_voice(huge, parameters).speech_probability,
                               detect_voice(floats, parameters).speech_probability, rtol=0, atol=1e-9)
    np.testing.assert_allclose(estimate_observation_var(huge, DEFAULT_RATE),
                               estimate_observation_var(floats, DEFAULT_RATE), rtol=1e-9)
    np.testing.assert_allclose(fit_speech_prior(huge), fit_speech_prior(floats), rtol=1e-9)
    stream = StreamingVAD(parameters)
    for start in range(0, 3 * CHUNK, CHUNK):
        stream.update(huge[start:start + CHUNK])
    reference = StreamingVAD(parameters)
    for start in range(0, 3 * CHUNK, CHUNK):
        reference.update(floats[start:start + CHUNK])
    np.testing.assert_allclose(stream.speech_probability, reference.speech_probability, rtol=0, atol=1e-9)


def test_plus_minus_1e300_samples_are_detected():
    signs = np.where(np.random.default_rng(0).random(4000) < 0.5, -1.0, 1.0)
    found = detect_voice(1e300 * signs)
    np.testing.assert_allclose(found.speech_probability, detect_voice(signs).speech_probability, rtol=0, atol=1e-12)
    assert np.all(np.isfinite(found.free_energy))


def test_digital_silence_is_detected_as_silence_and_streams():
    """A VAD must take silence: an all-zero signal has no scale to measure and needs none."""
    assert np.all(detect_voice(np.zeros(4000)).speech_probability < 0.5)
    stream = StreamingVAD()
    stream.update(np.zeros(CHUNK))  # a stream may open with digital silence
    y = np.random.default_rng(1).normal(0, 300.0, CHUNK)
    stream.update(y)
    assert np.all(np.isfinite(stream.speech_probability))


# ----------------------------------------------------------------------------- parameters
def test_a_mapping_of_parameters_is_the_vad_parameters_it_names(recording):
    y = recording[1][:8000]
    named = {"rho": 0.9, "speech_var": 0.2}
    np.testing.assert_array_equal(detect_voice(y, named).speech_probability,
                                  detect_voice(y, VADParameters(rho=0.9, speech_var=0.2)).speech_probability)
    stream = StreamingVAD(named)
    assert stream.parameters == VADParameters(rho=0.9, speech_var=0.2)
    stream.parameters = {"observation_var": 0.1}
    assert stream.parameters == VADParameters(observation_var=0.1)
    stream.update(y[:CHUNK])


@pytest.mark.parametrize("given, error, match", [
    ({"rho": 0.9, "speach_var": 0.2}, fg.ModelError, r"parameters: unknown field 'speach_var'.*speech_var"),
    ({"speech_var": -1.0}, fg.ModelError, "VADParameters: speech_var must be a positive variance"),
    ([0.9, 0.2], fg.ModelTypeError, r"parameters must be VADParameters\(\.\.\.\) or a mapping of its fields, got list"),
])
def test_bad_parameters_are_named_errors(given, error, match):
    y = np.random.default_rng(2).normal(size=200)
    with pytest.raises(error, match=match):
        detect_voice(y, given)
    with pytest.raises(error, match=match):
        StreamingVAD(given)
    stream = StreamingVAD()
    with pytest.raises(error, match=match):
        stream.parameters = given
    assert stream.parameters == VADParameters()  # a refused assignment leaves the parameters as they were


@pytest.mark.parametrize("field, value", [("speech_var", "0.2"), ("rho", None), ("switch", True), ("initial", [0.5])])
def test_a_field_of_the_wrong_type_is_a_named_error(field, value):
    with pytest.raises(fg.ModelTypeError, match=f"VADParameters: {field} must be a real number.*got {re.escape(repr(value))}"):
        VADParameters(**{field: value})


@pytest.mark.parametrize("scale", [0.0, -1.0, np.inf, "2", None])
def test_a_unit_that_is_not_a_positive_number_is_a_named_error(scale):
    with pytest.raises(fg.ModelError, match=r"VADParameters.in_units_of: scale must be a positive finite number"):
        VADParameters().in_units_of(scale)


def test_parameters_in_the_signals_own_units_carry_over_to_the_models_unit(recording):
    """Variances known in 16-bit PCM units, divided by the PCM's mean power, give the detection of the same
    variances known in [−1, 1] units."""
    pcm, floats, _ = recording
    pcm_units = VADParameters(rho=0.9, speech_var=0.2 * 1e6, noise_var=1e4, observation_var=0.5 * 1e6)
    float_units = VADParameters(rho=0.9, speech_var=0.2 * 1e6 / 32768**2, noise_var=1e4 / 32768**2,
                                observation_var=0.5 * 1e6 / 32768**2)
    np.testing.assert_allclose(detect_voice(pcm, pcm_units.in_units_of(signal_scale(pcm))).speech_probability,
                               detect_voice(floats, float_units.in_units_of(signal_scale(floats))).speech_probability,
                               rtol=0, atol=1e-9)


def test_numeric_fields_of_numpy_types_are_plain_floats():
    p = VADParameters(rho=np.float32(0.5), speech_var=np.array(0.25), switch=np.float64(1e-3), observation_var=1)
    assert (p.rho, p.speech_var, p.switch, p.observation_var) == (0.5, 0.25, 1e-3, 1.0)
    assert all(type(value) is float for value in vars(p).values())


# ----------------------------------------------------------------------------- signals without variation
@pytest.mark.parametrize("fit", [fit_speech_prior, learn_speech_prior])
@pytest.mark.parametrize("signal", [np.zeros(4000), np.full(4000, 0.3), np.full(100, -7, dtype=np.int16)])
def test_a_speech_prior_from_a_signal_without_variation_is_a_named_error(fit, signal):
    with pytest.raises(SignalError, match=f"{fit.__name__}: the signal has no variation .*clean speech"):
        fit(signal)


@pytest.mark.parametrize("fit", [fit_speech_prior, learn_speech_prior])
def test_a_speech_prior_from_a_too_short_signal_is_a_named_error(fit):
    with pytest.raises(SignalError, match=rf"{fit.__name__}: .*at least 3 samples, got shape \(2,\)"):
        fit(np.array([0.1, -0.3]))


def test_signal_errors_are_model_and_data_errors():
    assert issubclass(SignalError, fg.ModelError) and issubclass(SignalError, fg.DataError)
    with pytest.raises(SignalError, match="detect_voice: the signal must be an array of real numbers"):
        detect_voice(["a", "b", "c"])
