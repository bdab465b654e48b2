"""benchmarks/core.py: the element-wise VMP of ours equals the numpy peer's updates, iteration by iteration, in
at most three passes over the data."""
import numpy as np
import pytest

import fgraph.codegen as codegen
from benchmarks import core


@pytest.mark.parametrize("n", [7, 2000])
def test_element_wise_vmp_equals_the_numpy_updates_every_iteration(n):
    data = np.random.default_rng(11).normal(2.0, 0.5, size=n)
    ours = core.vmp_ours(data, collapse_plates=False)
    peer = core.vmp_numpy(data)
    np.testing.assert_allclose(ours["trace"], peer["trace"], rtol=1e-12)
    assert ours["mean_mu"] == pytest.approx(peer["mean_mu"], rel=1e-12)
    assert ours["var_mu"] == pytest.approx(peer["var_mu"], rel=1e-12)
    assert ours["mean_tau"] == pytest.approx(peer["mean_tau"], rel=1e-12)


def test_element_wise_vmp_makes_at_most_three_passes_over_the_data_per_iteration(monkeypatch):
    if codegen.MODE == "compared":  # (which runs every sweep twice: once generated, once interpreted)
        monkeypatch.setattr(codegen, "MODE", "auto")
    counted = core.count_passes(size=3000, collapse_plates=False, iterations=4)
    assert len(counted["per_iteration"]) <= 3, counted
    assert counted["per_iteration"] == ["dot", "subtract"]  # y - E[mu], then Σ (y - E[mu])²
    collapsed = core.count_passes(size=3000, collapse_plates=True, iterations=4)
    assert collapsed["per_iteration"] == [] and len(collapsed["per_run"]) == 2  # Σy and Σy², once


def test_the_long_collapsed_vmp_part_runs_and_agrees(monkeypatch, tmp_path):
    """The ``vmp-long`` part (its quick size, fewer sweeps): ours, compiled once hot, equals the peer and, to the
    bit, the same run in Python."""
    monkeypatch.setenv("FGRAPH_CACHE_DIR", str(tmp_path))
    report = core.run_vmp_long(quick=True, iterations=300, repeats=1)
    assert report["agree"] is True
    assert report["params"]["iterations"] == 300
