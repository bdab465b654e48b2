"""Progress bars: tqdm when installed, else a line on stderr every 10%; nothing at all when disabled.

The same bar serves ``fg.infer(..., progress=True)`` (sweeps, with the free
energy beside them) and the online model combination (observations).
"""
import sys

import numpy as np
import pytest

import fgraph as fg
from fgraph.progress import ProgressBar
from fgraph.nodes import Gamma, Normal


@pytest.fixture
def without_tqdm(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # ``import tqdm.auto`` now raises ImportError
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)


def test_without_tqdm_a_line_every_tenth(without_tqdm, capsys):
    with ProgressBar(20, "demo", "obs") as bar:
        for step in range(20):
            bar.update(1, loss=f"{step / 4:g}")
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"demo: {done}/20 obs, loss={(done - 1) / 4:g}" for done in range(2, 21, 2)]


def test_without_tqdm_uneven_steps_report_once_per_tenth_crossed(without_tqdm, capsys):
    bar = ProgressBar(10, "stream", "obs")
    for count in (3, 1, 5, 1):  # 3/10, 4/10, 9/10, 10/10
        bar.update(count)
    bar.close()
    assert capsys.readouterr().err.splitlines() == [f"stream: {done}/10 obs" for done in (3, 4, 9, 10)]


def test_disabled_bar_is_silent(without_tqdm, capsys):
    bar = ProgressBar(5, "quiet", "it", enabled=False)
    for _ in range(5):
        bar.update(1, free_energy="1.0")
    bar.close()
    assert capsys.readouterr().err == ""


def _vmp_model():
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=4.0)
        tau = Gamma("tau", shape=2.0, rate=3.0)
        Normal("y", mean=mu, precision=tau, observed=np.array([0.3, 1.2, -0.4, 0.9]))
    return model


def test_inference_progress_without_tqdm_shows_the_free_energy(without_tqdm, capsys):
    result = fg.infer(_vmp_model(), algorithm="vmp", iterations=10, init={"tau": fg.Gamma(1.0, 1.0)}, progress=True)
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"inference: {i + 1}/10 it, free_energy={f:.6g}" for i, f in enumerate(result.free_energy)]


def test_inference_progress_with_tqdm(capsys):
    pytest.importorskip("tqdm")
    fg.infer(_vmp_model(), algorithm="vmp", iterations=3, init={"tau": fg.Gamma(1.0, 1.0)}, progress=True)
    err = capsys.readouterr().err
    assert "inference" in err and "3/3" in err and "free_energy=" in err
