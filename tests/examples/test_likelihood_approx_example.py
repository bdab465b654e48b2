"""`fgraph run likelihood-approx`: the quick run's files and time, one density-table entry by an independent
quadrature (in the original basis, with scipy.stats) and the Appendix A moments, classification cells refitted on
the same split and scored by metrics written out here, the α_ε selection recomputed as the argmax over the grid, the
gap to Pólya-Gamma recomputed for one α_ε, the gauss baseline written out with numpy, options and named errors."""
import json
import warnings

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import digamma, polygamma

from fgraph.cli import main
from fgraph.datasets import load_dataset, train_test_splits
from fgraph.errors import DatasetError
from fgraph_experiments import likelihood_approx
from fgraph.models.logistic import BayesianLogisticRegression, MultinomialLogisticRegression

GRID = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("likelihood-approx")
    code = main(["run", "likelihood-approx", "--quick", "--out", str(out)])
    return code, out, json.loads((out / "summary.json").read_text())


def the_split(entry, record):
    """The split of a summary record, rebuilt from its random state; the z-scoring checked by hand."""
    data = load_dataset(entry["dataset"])
    split = train_test_splits(data.X, data.y, [record["n_train"]], record["n_test"],
                              random_state=record["random_state"])[0]
    raw = data.X[split.train_index]
    scale = raw.std(axis=0)
    np.testing.assert_allclose(split.X_train, (raw - raw.mean(axis=0)) / np.where(scale > 0, scale, 1), atol=1e-12)
    assert np.intersect1d(split.train_index, split.test_index).size == 0
    return split


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


def test_quick_run_writes_its_files(quick):
    code, out, summary = quick
    assert code == 0
    assert {"results.md", "summary.json", "density.png", "gap.png"} <= set(summary["files"])
    for name in summary["files"]:
        assert (out / name).stat().st_size > 0, name
    settings = summary["settings"]
    assert settings["datasets"] == ["breast_cancer", "iris"] and settings["splits"] == 1
    assert settings["alpha_grid"] == list(GRID) and settings["noise_grid"] == [0.01, 0.1, 1.0]
    text = (out / "results.md").read_text()
    for name, entry in summary["classification"].items():
        record = entry["splits"][0]
        assert record["n_train"] == min(200, entry["n_rows"] - round(0.3 * entry["n_rows"]))
        assert record["n_test"] == round(0.3 * entry["n_rows"])
        for method in ("polya-gamma", "laplace", "variational", "moment", "moment-original", "gauss", "sklearn"):
            s = entry["summary"][method]
            assert s["accuracy"]["mean"] == record["methods"][method]["accuracy"] and s["accuracy"]["sd"] is None
            assert f"| {method} | {s['accuracy']['mean']:.3f} | {s['nll']['mean']:.3f} |" in text
    # the density table is in results.md
    m = summary["density"]["Gamma(1.1, 1)"]["methods"]["moment"]
    assert f"| | moment | {m['mean']:.4f} | {m['variance']:.4f} | {m['kl_pq']:.4f} | {m['kl_qp']:.4f} |" in text


def test_density_entry_recomputed_independently(quick):
    """Gamma(1.1, 1), moment: mean/variance are Appendix A's digamma/trigamma, and KL(p‖q) equals the KL between
    the Gamma and the log-normal in the original basis (KL is invariant under the bijection ψ = log ω), by quad
    with scipy.stats densities."""
    density = quick[2]["density"]
    entry = density["Gamma(1.1, 1)"]["methods"]["moment"]
    assert entry["mean"] == pytest.approx(digamma(1.1), rel=1e-13)
    assert entry["variance"] == pytest.approx(polygamma(1, 1.1), rel=1e-13)
    p = stats.gamma(1.1)
    q = stats.lognorm(s=np.sqrt(entry["variance"]), scale=np.exp(entry["mean"]))

    def kl_term(w, first, second):
        return np.exp(first.logpdf(w)) * (first.logpdf(w) - second.logpdf(w)) if first.pdf(w) > 0 else 0.0

    kl_pq = sum(integrate.quad(kl_term, a, b, args=(p, q), limit=200)[0] for a, b in ((0, 1), (1, 20), (20, np.inf)))
    kl_qp = sum(integrate.quad(kl_term, a, b, args=(q, p), limit=200)[0] for a, b in ((0, 1), (1, 20), (20, np.inf)))
    assert entry["kl_pq"] == pytest.approx(kl_pq, rel=1e-6)
    assert entry["kl_qp"] == pytest.approx(kl_qp, rel=1e-6)
    # Beta(10, 5), laplace: N(log(a/b), (a+b)/(ab)); Beta(1.1, 0.1) moment: digamma / trigamma differences
    laplace = density["Beta(10, 5)"]["methods"]["laplace"]
    assert [laplace["mean"], laplace["variance"]] == pytest.approx([np.log(2.0), 15 / 50], rel=1e-13)
    moment = density["Beta(1.1, 0.1)"]["methods"]["moment"]
    assert moment["mean"] == pytest.approx(digamma(1.1) - digamma(0.1), rel=1e-13)
    assert moment["variance"] == pytest.approx(polygamma(1, 1.1) + polygamma(1, 0.1), rel=1e-13)
    # the quadrature reproduces the exact moments of every transformed density; every KL is positive
    for label, shape in density.items():
        exact = shape["exact"]
        assert exact["mass_quadrature"] == pytest.approx(1.0, abs=1e-8), label
        assert exact["mean_quadrature"] == pytest.approx(exact["mean"], rel=1e-7, abs=1e-9), label
        assert exact["variance_quadrature"] == pytest.approx(exact["variance"], rel=1e-7), label
        for method, values in shape["methods"].items():
            assert values["kl_pq"] > 0 and values["kl_qp"] > 0, (label, method)


@pytest.mark.parametrize("dataset, method", [("breast_cancer", "variational"), ("iris", "moment"),
                                             ("breast_cancer", "polya-gamma")])
def test_classification_cell_refitted_on_the_same_split(quick, dataset, method):
    entry = quick[2]["classification"][dataset]
    record = entry["splits"][0]
    split = the_split(entry, record)
    reported = record["methods"][method]
    estimator_class = BayesianLogisticRegression if entry["n_classes"] == 2 else MultinomialLogisticRegression
    options = {} if method == "polya-gamma" else {"alpha_epsilon": reported["parameter"]}
    if method != "polya-gamma":
        assert reported["parameter"] in GRID
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Pólya-Gamma VMP may stop at max_iter, as in the run
        estimator = estimator_class(likelihood=method, **options).fit(split.X_train, split.y_train)
    p = estimator.predict_proba(split.X_test)
    acc, nll, ece = scores(p, split.y_test)
    assert reported["accuracy"] == pytest.approx(acc, abs=1e-12)
    assert reported["nll"] == pytest.approx(nll, abs=1e-12)
    assert reported["ece"] == pytest.approx(ece, abs=1e-12)


@pytest.mark.parametrize("dataset, method", [("iris", "variational"), ("breast_cancer", "moment-original")])
def test_alpha_epsilon_is_the_argmax_of_the_training_log_likelihood(quick, dataset, method):
    entry = quick[2]["classification"][dataset]
    record = entry["splits"][0]
    split = the_split(entry, record)
    estimator_class = BayesianLogisticRegression if entry["n_classes"] == 2 else MultinomialLogisticRegression
    train_ll = []
    for alpha in GRID:
        p = estimator_class(likelihood=method, alpha_epsilon=alpha).fit(split.X_train, split.y_train).predict_proba(
            split.X_train)
        train_ll.append(np.mean(np.log(np.maximum(p[np.arange(len(split.y_train)), split.y_train], 1e-12))))
    reported = record["methods"][method]
    np.testing.assert_allclose(reported["train_log_likelihood"], train_ll, rtol=0, atol=1e-12)
    assert reported["parameter"] == GRID[int(np.argmax(train_ll))]
    # not a degenerate grid: the criterion really differs across α_ε
    assert np.ptp(train_ll) > 1e-3


def test_gauss_baseline_written_out_and_the_gap_recomputed(quick):
    """gauss on iris: ridge-like posterior means of the one-hot regression by numpy, clipped and renormalised,
    its noise variance the argmax of the training log-likelihood; the gap of moment at α_ε = 0.1 to Pólya-Gamma."""
    entry = quick[2]["classification"]["iris"]
    record = entry["splits"][0]
    split = the_split(entry, record)
    rows = np.column_stack([split.X_train, np.ones(len(split.X_train))])
    test_rows = np.column_stack([split.X_test, np.ones(len(split.X_test))])
    one_hot = np.eye(3)[split.y_train]

    def probabilities(noise, design):
        mean = np.linalg.solve(rows.T @ rows / noise + np.eye(rows.shape[1]) / 25.0, rows.T @ one_hot / noise)
        clipped = np.clip(design @ mean, 1e-6, 1.0)
        return clipped / clipped.sum(axis=1, keepdims=True)

    train_ll = [np.mean(np.log(probabilities(v, rows)[np.arange(len(rows)), split.y_train])) for v in (0.01, 0.1, 1)]
    reported = record["methods"]["gauss"]
    np.testing.assert_allclose(reported["train_log_likelihood"], train_ll, atol=1e-10)
    assert reported["parameter"] == (0.01, 0.1, 1.0)[int(np.argmax(train_ll))]
    acc, nll, ece = scores(probabilities(reported["parameter"], test_rows), split.y_test)
    assert [reported["accuracy"], reported["nll"], reported["ece"]] == pytest.approx([acc, nll, ece], abs=1e-9)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pg = MultinomialLogisticRegression().fit(split.X_train, split.y_train).predict_proba(split.X_test)
    approx = MultinomialLogisticRegression(likelihood="moment", alpha_epsilon=0.1).fit(
        split.X_train, split.y_train).predict_proba(split.X_test)
    gap = entry["gap"]["moment"]
    assert gap["mean_abs_difference"][GRID.index(0.1)] == pytest.approx(np.mean(np.abs(approx - pg)), abs=1e-12)
    assert gap["test_nll"][GRID.index(0.1)] == pytest.approx(scores(approx, split.y_test)[1], abs=1e-12)


def test_options_reach_the_run_and_an_unknown_data_set_is_a_named_error(tmp_path, capsys):
    assert main(["run", "likelihood-approx", "--quick", "--out", str(tmp_path), "--datasets", "iris", "--splits",
                 "2", "--seed", "3"]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["settings"]["datasets"] == ["iris"] and summary["settings"]["splits"] == 2
    assert summary["settings"]["seed"] == 3
    records = summary["classification"]["iris"]["splits"]
    assert [r["random_state"][:2] for r in records] == [[3, 0], [3, 1]]
    assert records[0]["n_test"] == 45 and not np.array_equal(records[0]["methods"]["moment"]["train_log_likelihood"],
                                                             records[1]["methods"]["moment"]["train_log_likelihood"])
    assert list(summary["classification"]) == ["iris"]
    assert "gap.png" in summary["files"]  # iris is one of the gap data sets
    capsys.readouterr()
    assert main(["run", "likelihood-approx", "--quick", "--out", str(tmp_path / "x"), "--datasets", "mnist"]) == 2
    assert "unknown data set 'mnist'" in capsys.readouterr().err
    with pytest.raises(DatasetError, match="unknown data set 'mnist'; choose from breast_cancer"):
        likelihood_approx.run(quick=True, out=tmp_path / "y", datasets=["iris", "mnist"])
    with pytest.raises(DatasetError, match="--splits must be at least 1"):
        likelihood_approx.run(quick=True, out=tmp_path / "y", splits=0)
    assert main(["run", "likelihood-approx", "--quick", "--out", str(tmp_path / "z"), "--bogus"]) == 2


def test_an_interrupted_run_resumes_from_its_finished_splits(tmp_path, monkeypatch):
    """Each (data set, split) is kept as it finishes: a rerun fits nothing again, one more split fits only that one,
    and the tables are those of the kept records; another seed in the same directory is a named error."""
    from fgraph_experiments import likelihood_approx
    from fgraph_experiments._replications import ReplicationsMismatchError

    calls = []
    honest = likelihood_approx._run_split

    def counted(name, data, seed, split_index, quick):
        calls.append((name, split_index))
        return honest(name, data, seed, split_index, quick)

    monkeypatch.setattr(likelihood_approx, "_run_split", counted)
    first = likelihood_approx.run(quick=True, out=tmp_path, datasets=["iris"], splits=1)
    assert calls == [("iris", 0)]
    again = likelihood_approx.run(quick=True, out=tmp_path, datasets=["iris"], splits=2)
    assert calls == [("iris", 0), ("iris", 1)]
    assert again["classification"]["iris"]["splits"][0] == first["classification"]["iris"]["splits"][0]
    assert len(again["classification"]["iris"]["splits"]) == 2
    with pytest.raises(ReplicationsMismatchError, match="seed"):
        likelihood_approx.run(quick=True, out=tmp_path, datasets=["iris"], splits=1, seed=3)
