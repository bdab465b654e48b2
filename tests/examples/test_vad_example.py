"""`fgraph run vad`: the quick run's files and numbers recomputed independently, and the example's own options."""
import dataclasses
import json

import numpy as np
import pytest

from fgraph.cli import main
from fgraph.datasets.audio import add_white_noise, frame_labels, frame_scores, load_speech, standardise, write_wav
from fgraph_experiments import vad
from fgraph.models.vad import VADParameters, detect_voice, estimate_observation_var, fit_speech_prior, signal_scale
from fgraph_experiments.vad_baselines import energy_vad, energy_vad_scores, vad_metrics, webrtc_vad


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("vad")
    summary = vad.run(quick=True, out=out)
    return summary, out


def test_quick_run_writes_its_files(quick):
    summary, out = quick
    for name in summary["files"]:
        assert (out / name).exists(), name
    assert {"librispeech_figure.png", "librispeech_snr.png", "results.md"} <= set(summary["files"])
    table = (out / "results.md").read_text()
    for method in (*vad.OURS, "WebRTC mode 0", "WebRTC mode 3", "energy VAD"):
        assert f"| {method} |" in table


def test_quick_numbers_are_the_detectors_own(quick):
    """Recompute one SNR and seed by hand: our offline detector (both v_y), WebRTC mode 3 and the energy VAD."""
    summary, out = quick
    methods = json.loads((out / "results.json").read_text())["librispeech"]["methods"]
    signal, rate = load_speech("librispeech")
    clean = standardise(signal)
    labels = frame_labels(signal, rate)
    rho, var = fit_speech_prior(clean)
    y = add_white_noise(clean, 10.0, random_state=0).signal
    paper = VADParameters(rho=rho, speech_var=var, observation_var=0.5)  # in the clean recording's units
    floor = estimate_observation_var(y, rate, scale=1.0)
    for parameters, method in ((paper, "ours offline, v_y = 0.5"),
                               (dataclasses.replace(paper, observation_var=floor), "ours offline, v_y estimated")):
        # the model reads variances in units of the noisy signal's mean power
        scores = frame_scores(detect_voice(y, parameters.in_units_of(signal_scale(y))).speech_probability, rate)
        expected = vad_metrics(labels, scores > 0.5, scores)
        for metric in vad.METRICS:
            assert methods[method]["10"][metric]["values"] == [pytest.approx(expected[metric], abs=1e-12)]
    scale = 0.99 / max(1.0, np.max(np.abs(y * np.std(signal) + np.mean(signal))))
    pcm = (y * np.std(signal) + np.mean(signal)) * scale
    assert methods["WebRTC mode 3"]["10"]["accuracy"]["values"] == [
        pytest.approx(vad_metrics(labels, webrtc_vad(pcm, rate, mode=3))["accuracy"])]
    energy = vad_metrics(labels, energy_vad(pcm, rate), energy_vad_scores(pcm, rate))
    assert methods["energy VAD"]["10"]["auc"]["values"] == [pytest.approx(energy["auc"])]
    assert methods["WebRTC mode 0"]["10"]["auc"]["mean"] is None  # decisions only


def test_the_figure_is_the_papers_setting(quick):
    summary, _ = quick
    result = summary["recordings"]["librispeech"]
    assert result["snrs"] == [10.0] and result["seeds"] == 1
    assert result["runtime"]["offline_real_time_factor"] > 0  # recorded; how fast is python -m benchmarks.vad's


def test_command_line_options_reach_the_run(tmp_path, capsys):
    signal, rate = load_speech("librispeech")
    wav = write_wav(tmp_path / "mine.wav", signal[: rate], rate)
    assert main(["run", "vad", "--quick", "--out", str(tmp_path / "o"), "--wav", str(wav), "--snr", "5",
                 "--snr", "0", "--seeds", "1"]) == 0
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert list(summary["recordings"]) == ["mine"]
    assert summary["snrs"] == [5.0, 0.0]


def test_unknown_options_are_errors(tmp_path, capsys):
    assert main(["run", "vad", "--quick", "--out", str(tmp_path), "--snrr", "5"]) == 2
    assert "unrecognized arguments: --snrr" in capsys.readouterr().err
    assert main(["run", "quickstart", "--quick", "--out", str(tmp_path), "--snr", "5"]) == 2
    assert "takes no options of its own" in capsys.readouterr().err


def test_a_missing_wav_is_a_named_error(tmp_path, capsys):
    assert main(["run", "vad", "--quick", "--out", str(tmp_path), "--wav", str(tmp_path / "none.wav")]) == 2
    assert "none.wav" in capsys.readouterr().err
