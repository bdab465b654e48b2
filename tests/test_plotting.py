"""Figures: result.plot_free_energy() and ReliabilityDiagram.plot() draw the result's own numbers, write files
atomically, and say which extra to install when matplotlib is missing."""
import sys

import numpy as np
import pytest

import fgraph as fg
from fgraph import metrics
from fgraph.nodes import Gamma, Normal

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

Y = np.random.default_rng(2023).normal(2.0, 0.5, size=50)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def mean_and_precision(copies=None):
    with fg.Model(copies=copies) as model:
        mu = Normal("mu", mean=0.0, var=10.0)
        tau = Gamma("tau", shape=2.0, rate=0.5)
        Normal("y", mean=mu, precision=tau, observed=Y)
    return model


def vmp_result(**options):
    return fg.infer(mean_and_precision(), algorithm="vmp", init={"tau": fg.Gamma(2.0, 0.5)},
                    **({"iterations": 50, "tol": 1e-10} | options))


def line(ax, label):
    (found,) = [drawn for drawn in ax.lines if drawn.get_label() == label]
    return found


def test_the_free_energy_line_is_the_results_free_energy_and_the_end_is_marked():
    result = vmp_result()
    ax = result.plot_free_energy()
    drawn = line(ax, "free energy")
    np.testing.assert_array_equal(drawn.get_ydata(), result.free_energy)
    np.testing.assert_array_equal(drawn.get_xdata(), np.arange(1, result.iterations + 1))
    (end,) = [drawn for drawn in ax.lines if drawn.get_label().startswith("converged")]
    assert list(end.get_xdata()) == [result.iterations, result.iterations]
    assert ax.get_xlabel() == "iteration" and ax.get_ylabel() == "free energy F (nats)"
    assert not any("log p(data)" in drawn.get_label() for drawn in ax.lines)  # VMP: no exact evidence


def test_relative_plots_the_gap_to_the_minimum_on_a_log_scale():
    result = vmp_result()
    ax = result.plot_free_energy(relative=True)
    gap = np.array(result.free_energy) - min(result.free_energy)
    expected = np.where(gap > 0, gap, np.nan)
    np.testing.assert_array_equal(line(ax, "F − min F").get_ydata(), expected)
    assert ax.get_yscale() == "log"


def test_a_run_that_did_not_converge_is_marked_so():
    with pytest.warns(fg.ConvergenceWarning):
        result = vmp_result(iterations=2, tol=1e-30)
    ax = result.plot_free_energy()
    assert [drawn.get_label() for drawn in ax.lines][1:] == ["not converged after 2"]


def test_exact_bp_draws_minus_the_log_evidence():
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=10.0)
        Normal("y", mean=mu, var=0.25, observed=Y)
    result = fg.infer(model, algorithm="bp", free_energy=True)
    ax = result.plot_free_energy()
    np.testing.assert_allclose(line(ax, "−log p(data) (exact)").get_ydata(), -result.log_evidence)
    np.testing.assert_array_equal(line(ax, "free energy").get_ydata(), result.free_energy)
    with pytest.raises(fg.ModelError, match="free_energy=True"):
        fg.infer(model, algorithm="bp").plot_free_energy()


def test_a_model_with_copies_draws_one_line_per_copy():
    result = fg.infer(mean_and_precision(copies=3), algorithm="vmp", iterations=4,
                      init={"tau": fg.Gamma(np.array([1.0, 2.0, 4.0]), 0.5)})
    ax = result.plot_free_energy()
    lines = [drawn.get_ydata() for drawn in ax.lines if drawn.get_label() in ("free energy", "_nolegend_")]
    np.testing.assert_array_equal(np.column_stack(lines), np.array(result.free_energy))


def test_the_figure_is_drawn_on_the_axes_given_and_written_whole(tmp_path, monkeypatch):
    figure, (left, right) = plt.subplots(1, 2)
    result = vmp_result()
    path = tmp_path / "figures" / "free_energy.png"
    assert result.plot_free_energy(ax=right, path=path) is right
    content = path.read_bytes()
    assert content.startswith(b"\x89PNG") and sorted(p.name for p in path.parent.iterdir()) == ["free_energy.png"]
    # a save that fails half-way leaves the previous file as it was, and no temporary file
    def broken(self, target, **options):
        target.write(b"\x89PNG half")
        raise RuntimeError("disk gone")
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", broken)
    with pytest.raises(RuntimeError, match="disk gone"):
        result.plot_free_energy(path=path)
    assert path.read_bytes() == content and sorted(p.name for p in path.parent.iterdir()) == ["free_energy.png"]


def test_bad_options_are_named():
    result = vmp_result()
    with pytest.raises(fg.ModelError, match=r"path='fe.docx'.*\.png"):
        result.plot_free_energy(path="fe.docx")
    with pytest.raises(fg.ModelError, match="relative must be True or False"):
        result.plot_free_energy(relative="yes")


def test_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    diagram = metrics.reliability_diagram(np.array([[0.8, 0.2], [0.3, 0.7]]), np.array([0, 0]), n_bins=4)
    for draw in (vmp_result().plot_free_energy, diagram.plot):
        with pytest.raises(ImportError, match=r"matplotlib.*fgraph-mp\[plot\]"):
            draw()


def test_the_reliability_diagram_draws_its_bins(tmp_path):
    rng = np.random.default_rng(0)
    logits = 2.0 * rng.normal(size=(400, 3))
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = rng.integers(0, 3, size=400)
    diagram = metrics.reliability_diagram(probabilities, y, n_bins=10)
    filled = diagram.count > 0
    assert 3 <= filled.sum() < 10  # some bins empty (none below 1/3): they are left out
    ax = diagram.plot(path=tmp_path / "reliability.svg")
    points = line(ax, "observed accuracy")
    np.testing.assert_array_equal(points.get_xdata(), diagram.confidence[filled])
    np.testing.assert_array_equal(points.get_ydata(), diagram.accuracy[filled])
    np.testing.assert_array_equal(line(ax, "perfect calibration").get_ydata(), [0.0, 1.0])
    bars = ax.containers[0]
    np.testing.assert_allclose([bar.get_height() for bar in bars], diagram.accuracy[filled])
    np.testing.assert_allclose([bar.get_x() for bar in bars], diagram.edges[:-1][filled])
    assert [text.get_text() for text in ax.texts] == [str(n) for n in diagram.count[filled]]
    assert f"ECE {diagram.expected_calibration_error:.3f}" in ax.get_title()
    assert (tmp_path / "reliability.svg").read_text().lstrip().startswith("<?xml")
