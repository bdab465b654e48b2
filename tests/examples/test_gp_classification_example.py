"""`fgraph run gp-classification`: the quick run through the command line, its files and finite numbers; one Table-3
cell refitted on the split rebuilt from its random state and scored by metrics written out here; the α_ε selection
recomputed; one landscape point's profiled evidence by dense linear algebra; the active-learning bookkeeping and its
first entropy query; resuming from the records; an unknown data set as one line."""
import json
import shutil

import numpy as np
import pytest

from fgraph.cli import main
from fgraph.datasets import load_dataset, train_test_splits
from fgraph.examples import OptionError
from fgraph.families.kernels import ExponentiatedQuadratic
from fgraph.models.gp import GPClassifier, pseudo_observations
from fgraph_experiments import gp_classification

COLUMNS = ("moment-original", "moment", "laplace", "variational", "sklearn")
FIGURES = ("table.png", "alpha.png", "landscape.png", "toy.png", "active.png")


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("gp-classification")
    code = main(["run", "gp-classification", "--quick", "--out", str(out)])
    return code, out, json.loads((out / "summary.json").read_text())


def scores(p, y):
    """accuracy, NLL (floor 1e-12), ECE with 20 equal-width bins (b/20, (b+1)/20], written out."""
    p = np.asarray(p)
    correct = np.argmax(p, axis=1) == y
    nll = -np.mean(np.log(np.maximum(p[np.arange(len(y)), y], 1e-12)))
    confidence = p.max(axis=1)
    ece = 0.0
    for b in range(20):
        inside = (confidence > b / 20) & (confidence <= (b + 1) / 20) if b else (confidence <= 1 / 20)
        if inside.any():
            ece += inside.mean() * abs(correct[inside].mean() - confidence[inside].mean())
    return correct.mean(), nll, ece


def finite(value):
    return value is not None and np.all(np.isfinite(np.asarray(value, dtype=float)))


def test_quick_run_writes_its_files_and_every_number_is_finite(quick):
    code, out, summary = quick
    assert code == 0
    assert set(FIGURES) | {"results.md", "summary.json"} <= set(summary["files"])
    for name in FIGURES + ("results.md", "summary.json"):
        assert (out / name).stat().st_size > 0, name
    manifest = json.loads((out / "records" / "store.json").read_text())
    # 2 data sets × 1 split × 5 columns, 5 landscapes, 8 toy panels, 2 active-learning runs
    assert len(manifest["records"]) == 10 + 5 + 8 + 2
    settings = summary["settings"]
    assert settings["datasets"] == ["breast_cancer", "iris"] and settings["splits"] == 1
    text = (out / "results.md").read_text()
    for name, result in summary["table"].items():
        assert result["n_train"] <= 100 and result["n_test"] == round(0.3 * result["n_rows"])
        for method in COLUMNS:
            s = result["summary"][method]
            for metric in ("error", "nll", "ece", "fit_seconds"):
                assert finite(s[metric]["mean"]), (name, method, metric)
            assert 0 <= s["error"]["mean"] <= 100 and 0 <= s["ece"]["mean"] <= 1 and s["nll"]["mean"] > 0
            assert f"| {gp_classification.SHORT[method]} | {s['error']['mean']:.2f} | {s['nll']['mean']:.3f} |" in text
    for name, cells in summary["cells"].items():
        for cell in cells:
            fits = cell["fits"] if "fits" in cell else [cell]
            for fit in fits:
                assert all(finite(v) for v in fit["test"].values()), (name, cell["method"])
                for key in ("elbo", "train_log_likelihood", "log_evidence"):
                    if key in fit:
                        assert finite(fit[key]), (name, cell["method"], key)
    for method, panel in summary["landscape"].items():
        assert finite(panel["grid_max"]) and finite(panel["fitted_log_parameters"]), method
    for key, panel in summary["toy"].items():
        assert all(finite(v) for v in panel.values()), key
        assert 0 < panel["alpha"] and 0 <= panel["test_accuracy"] <= 1
    steps = settings["active_steps"]
    for strategy, curves in summary["active"].items():
        for metric in ("accuracy_mean", "nll_mean"):
            assert len(curves[metric]) == steps + 1 and finite(curves[metric]), (strategy, metric)


def rebuilt_split(cell, name):
    data = load_dataset(name)
    split = train_test_splits(data.X, data.y, [cell["n_train"]], cell["n_test"], random_state=cell["random_state"])[0]
    raw = data.X[split.train_index]
    np.testing.assert_allclose(split.X_train.mean(axis=0), 0, atol=1e-12)
    assert np.intersect1d(split.train_index, split.test_index).size == 0
    assert np.array_equal(np.bincount(split.y_train), np.bincount(data.y[split.train_index]))
    assert raw.shape == (cell["n_train"], data.X.shape[1])
    return split


@pytest.mark.parametrize("name, method", [("iris", "variational"), ("breast_cancer", "moment-original")])
def test_a_cell_refitted_and_its_alpha_recomputed(quick, name, method):
    """The chosen α_ε is the argmax of the training log-likelihood over the grid (each recomputed by a fresh fit);
    the test scores at it equal a refit scored by the metrics written out above."""
    summary = quick[2]
    cell = next(c for c in summary["cells"][name] if c["method"] == method)
    split = rebuilt_split(cell, name)
    grid = summary["settings"]["alpha_grid"]
    assert [f["alpha"] for f in cell["fits"]] == grid
    train_ll, models = [], []
    for alpha in grid:
        model = GPClassifier(kernel=ExponentiatedQuadratic(1.0, 1.0), method=method, alpha_epsilon=alpha)
        model.fit(split.X_train, split.y_train)
        p = model.predict_proba(split.X_train)
        train_ll.append(np.mean(np.log(np.maximum(p[np.arange(len(split.y_train)), split.y_train], 1e-12))))
        models.append(model)
    np.testing.assert_allclose([f["train_log_likelihood"] for f in cell["fits"]], train_ll, rtol=0, atol=1e-9)
    assert cell["chosen"] == int(np.argmax(train_ll))
    assert np.ptp(train_ll) > 1e-3  # the criterion tells the grid values apart
    chosen = cell["fits"][cell["chosen"]]
    accuracy, nll, ece = scores(models[cell["chosen"]].predict_proba(split.X_test), split.y_test)
    assert [chosen["test"]["accuracy"], chosen["test"]["nll"], chosen["test"]["ece"]] == pytest.approx(
        [accuracy, nll, ece], abs=1e-9)
    table = summary["table"][name]["summary"][method]
    assert table["error"]["mean"] == pytest.approx(100 * (1 - accuracy), abs=1e-7)
    assert table["alpha"] == [grid[cell["chosen"]]]


def test_a_landscape_point_by_dense_linear_algebra(quick):
    """moment on iris: at one grid point, max over the constant means of Σ_b log N(ỹ_b | m_b 1, K + diag(ṽ_b)),
    by numpy's solve and slogdet, equals the stored surface; the marked optimum is the grid maximum."""
    code, out, summary = quick
    with np.load(out / "records" / "landscape" / "moment.npz", allow_pickle=False) as stored:
        panel = {key: stored[key] for key in stored.files}
    data = load_dataset("iris")
    X = (data.X - data.X.mean(axis=0)) / data.X.std(axis=0)
    targets, variances = pseudo_observations(data.y, 3, "moment", float(panel["alpha"]))
    i, j = 2, 4
    lengthscale, variance = np.exp(panel["log_lengthscale"][j]), np.exp(panel["log_variance"][i])
    squared = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    K = variance * np.exp(-0.5 * squared / lengthscale**2)
    total = 0.0
    for y_b, v_b in zip(targets, variances):
        S = K + np.diag(v_b)
        ones = np.ones(len(y_b))
        mean = ones @ np.linalg.solve(S, y_b) / (ones @ np.linalg.solve(S, ones))
        residual = y_b - mean
        best = -0.5 * (residual @ np.linalg.solve(S, residual) + np.linalg.slogdet(S)[1] + len(y_b) * np.log(2 * np.pi))
        shifted = y_b - mean - 0.1
        other = -0.5 * (shifted @ np.linalg.solve(S, shifted) + np.linalg.slogdet(S)[1] + len(y_b) * np.log(2 * np.pi))
        assert best > other  # m̂ maximises
        total += best
    assert panel["log_evidence"][i, j] == pytest.approx(total, rel=1e-8)
    a, b = np.unravel_index(np.argmax(panel["log_evidence"]), panel["log_evidence"].shape)
    assert summary["landscape"]["moment"]["grid_argmax"] == pytest.approx(
        [panel["log_lengthscale"][b], panel["log_variance"][a]])
    assert summary["landscape"]["moment"]["grid_max"] == pytest.approx(panel["log_evidence"].max())
    assert summary["landscape"]["gauss"]["alpha"] is None  # gauss: one-hot targets, noise 0.1, no α_ε


def test_active_learning_bookkeeping_and_the_first_entropy_query(quick):
    code, out, summary = quick
    settings = gp_classification.settings_for(True)
    records = {}
    for strategy in ("entropy", "random"):
        with np.load(out / "records" / "active" / f"{strategy}_seed00.npz", allow_pickle=False) as stored:
            records[strategy] = {key: stored[key] for key in stored.files}
    for record in records.values():
        queried, initial = record["queried"], record["initial"]
        assert len(queried) == settings["active_steps"] and len(set(queried.tolist())) == len(queried)
        assert np.intersect1d(queried, initial).size == 0 and len(initial) == settings["active_initial"]
    assert np.array_equal(records["entropy"]["initial"], records["random"]["initial"])
    assert records["entropy"]["accuracy"][0] == records["random"]["accuracy"][0]
    X, y, X_test, y_test = gp_classification.moons_split(settings, 0)
    assert sorted(np.bincount(y[records["entropy"]["initial"]]).tolist()) == [2, 2]
    model = GPClassifier(kernel=ExponentiatedQuadratic(1.0, 1.0), method="variational", alpha_epsilon=0.1)
    model.fit(X[records["entropy"]["initial"]], y[records["entropy"]["initial"]])
    assert scores(model.predict_proba(X_test), y_test)[0] == pytest.approx(records["entropy"]["accuracy"][0])
    unlabelled = np.setdiff1d(np.arange(len(y)), records["entropy"]["initial"])
    p = model.predict_proba(X[unlabelled])
    entropy = -np.sum(p * np.log(p), axis=1)
    assert records["entropy"]["queried"][0] == unlabelled[np.argmax(entropy)]
    assert summary["active"]["entropy"]["accuracy_mean"] == pytest.approx(records["entropy"]["accuracy"].tolist())


def test_a_rerun_resumes_from_the_records(quick, tmp_path, monkeypatch):
    """Into a copy of the quick run's directory: one more split of iris fits only that split's five cells, the
    first split's cells are read back unchanged, and the other parts are not recomputed."""
    out = tmp_path / "again"
    shutil.copytree(quick[1], out)
    calls = []
    for name in ("fit_cell", "fit_sklearn", "landscape_panel", "toy_panel", "active_learning_run"):
        honest = getattr(gp_classification, name)

        def counted(*args, _name=name, _honest=honest, **kwargs):
            calls.append(_name)
            return _honest(*args, **kwargs)

        monkeypatch.setattr(gp_classification, name, counted)
    assert main(["run", "gp-classification", "--quick", "--out", str(out), "--datasets", "iris", "--splits", "2"]) == 0
    assert sorted(calls) == ["fit_cell"] * 4 + ["fit_sklearn"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["settings"]["datasets"] == ["iris"] and summary["settings"]["splits"] == 2
    cells = summary["cells"]["iris"]
    assert cells[:5] == quick[2]["cells"]["iris"]
    assert [c["random_state"][:2] for c in cells[::5]] == [[0, 0], [0, 1]]
    assert summary["table"]["iris"]["summary"]["moment"]["error"]["sd"] is not None


def test_an_unknown_data_set_is_one_clear_error(tmp_path, capsys):
    assert main(["run", "gp-classification", "--quick", "--out", str(tmp_path / "a"), "--datasets", "mnist"]) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and "unknown data set 'mnist'" in error and "choose from banknote" in error
    assert not (tmp_path / "a" / "summary.json").exists()
    assert main(["run", "gp-classification", "--quick", "--out", str(tmp_path / "b"), "--datasets", "letter"]) == 2
    assert "not available offline" in capsys.readouterr().err
    with pytest.raises(OptionError, match="unknown data set 'mnist'; choose from banknote"):
        gp_classification.run(quick=True, out=tmp_path / "c", datasets=["iris", "mnist"])
    assert not (tmp_path / "c" / "records").exists()
    assert main(["run", "gp-classification", "--quick", "--out", str(tmp_path / "d"), "--splits", "0"]) == 2
