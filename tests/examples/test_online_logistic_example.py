"""``fgraph run online-logistic``: the quick run, values of it recomputed independently, and its options."""
import json

import numpy as np
import pytest

pytest.importorskip("sklearn")

from fgraph.cli import main
from fgraph.datasets import load_dataset
from fgraph_experiments import online_logistic
from fgraph.metrics import accuracy, log_predictive_density
from fgraph.models.logistic import BayesianLogisticRegression, MultinomialLogisticRegression


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("online-logistic")
    assert main(["run", "online-logistic", "--quick", "--out", str(out)]) == 0
    return out, json.loads((out / "summary.json").read_text())


def _zscored(X, train, test):
    centre, scale = X[train].mean(axis=0), X[train].std(axis=0)
    scale[scale == 0] = 1.0
    return (X[train] - centre) / scale, (X[test] - centre) / scale


def test_quick_run_writes_its_files(quick):
    out, summary = quick
    for name in ("results.md", "summary.json", "streaming.png", "active.png"):
        assert (out / name).is_file(), name
    assert summary["quick"] and summary["settings"]["alpha_epsilon"] == 0.1
    text = (out / "results.md").read_text()
    assert "IMDB" in text and "Labels needed" in text and "ADF" in text
    binary = summary["streaming"]["breast_cancer"]
    assert binary["points"][:4] == [1, 2, 5, 10] and binary["points"][-1] == binary["n_train"] == 398
    assert set(binary["aggregate"]) == set(online_logistic.STREAM_METHODS["breast_cancer"])
    assert "adf" not in summary["streaming"]["digits"]["aggregate"]  # ADF is binary only
    for method in online_logistic.APPROXIMATIONS:  # the run's own check of conjugacy
        assert binary["runs"][0]["methods"][method]["stream_vs_fit_max_abs_difference"] < 1e-8
    active = summary["active"]["aggregate"]
    assert len(active["moment"]["entropy"]["accuracy_mean"]) == summary["settings"]["steps"] + 1 == 21


@pytest.mark.parametrize("position", [2, 4])  # the checkpoints 5 and 20 points
def test_streamed_moment_value_is_a_fresh_fit_on_the_first_points(quick, position):
    _, summary = quick
    block = summary["streaming"]["breast_cancer"]
    run = block["runs"][0]
    n = block["points"][position]
    data = load_dataset("breast_cancer")
    X_train, X_test = _zscored(data.X, run["train_index"], run["test_index"])
    y_train, y_test = data.y[run["train_index"]], data.y[run["test_index"]]
    fresh = BayesianLogisticRegression(likelihood="moment", alpha_epsilon=0.1).fit(X_train[:n], y_train[:n])
    if len(np.unique(y_train[:n])) < 2:
        pytest.skip("the first points hold one class only")
    proba = fresh.predict_proba(X_test)
    assert run["methods"]["moment"]["accuracy"][position] == accuracy(proba, y_test)
    np.testing.assert_allclose(run["methods"]["moment"]["log_likelihood"][position],
                               log_predictive_density(proba, y_test), rtol=1e-9)


def test_streamed_digits_value_is_a_fresh_fit(quick):
    from sklearn.datasets import load_digits

    _, summary = quick
    block = summary["streaming"]["digits"]
    run = block["runs"][0]
    position = block["points"].index(100)
    digits = load_digits()
    X_train, X_test = _zscored(digits.data.astype(float), run["train_index"], run["test_index"])
    y_train, y_test = digits.target[run["train_index"]], digits.target[run["test_index"]]
    fresh = MultinomialLogisticRegression(likelihood="variational", alpha_epsilon=0.1,
                                          predictive_samples=summary["settings"]["predictive_samples"])
    fresh.fit(X_train[:100], y_train[:100])
    if len(np.unique(y_train[:100])) < 10:
        pytest.skip("the first 100 points miss a class")
    proba = fresh.predict_proba(X_test)
    assert run["methods"]["variational"]["accuracy"][position] == accuracy(proba, y_test)
    np.testing.assert_allclose(run["methods"]["variational"]["log_likelihood"][position],
                               log_predictive_density(proba, y_test), rtol=1e-9)


@pytest.mark.parametrize("method", ["moment", "variational"])
def test_first_active_query_is_the_maximum_entropy_pool_point(quick, method):
    _, summary = quick
    run = summary["active"]["runs"][0]
    data = load_dataset("breast_cancer")
    X_pool, _ = _zscored(data.X, run["train_index"], run["test_index"])
    y_pool = data.y[run["train_index"]]
    initial = np.array(run["initial"])
    assert len(initial) == 10 and len(np.unique(y_pool[initial])) == 2
    fresh = BayesianLogisticRegression(likelihood=method, alpha_epsilon=0.1).fit(X_pool[initial], y_pool[initial])
    p = fresh.predict_proba(X_pool)[:, 1]
    entropy = -(p * np.log(p) + (1 - p) * np.log(1 - p))
    entropy[initial] = -np.inf
    queried = run["methods"][method]["entropy"]["queried"]
    assert queried[0] == int(np.argmax(entropy))
    assert len(set(queried) | set(initial.tolist())) == len(queried) + len(initial)  # no point labelled twice
    # random acquisition takes the seed's permutation in order, skipping the initial points
    order = [i for i in run["random_order"] if i not in set(initial.tolist())]
    assert run["methods"][method]["random"]["queried"] == order[:len(queried)]


def test_labels_to_reach():
    assert online_logistic.labels_to_reach([0.8, 0.85, 0.91, 0.95], 0.9) == 12
    assert online_logistic.labels_to_reach([0.95], 0.9) == 10
    assert online_logistic.labels_to_reach([0.8, 0.85], 0.9) is None


def test_options_reach_the_run(tmp_path, monkeypatch):
    seen = {}

    def fake_run(quick, out, progress, **options):
        seen.update(options, quick=quick)
        return {}

    monkeypatch.setattr(online_logistic, "run", fake_run)
    assert main(["run", "online-logistic", "--quick", "--out", str(tmp_path), "--seeds", "3", "--steps", "7",
                 "--seed", "11"]) == 0
    assert seen == {"seeds": 3, "steps": 7, "seed": 11, "quick": True}
    assert main(["run", "online-logistic", "--quick", "--out", str(tmp_path), "--bogus"]) == 2


def test_bad_options_are_named_errors(tmp_path):
    with pytest.raises(online_logistic.OptionError, match="--seeds"):
        online_logistic.run(quick=True, out=tmp_path, seeds=0)
    with pytest.raises(online_logistic.OptionError, match="--steps"):
        online_logistic.run(quick=True, out=tmp_path, steps=0)
    assert main(["run", "online-logistic", "--quick", "--out", str(tmp_path), "--steps", "0"]) == 2


def test_checkpoints():
    assert online_logistic.checkpoints(398) == [1, 2, 5, 10, 20, 50, 100, 200, 398]
    assert online_logistic.checkpoints(1000) == [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]
    assert online_logistic.checkpoints(3) == [1, 2, 3]


def test_an_interrupted_run_resumes_from_its_finished_seeds(tmp_path, monkeypatch):
    """Every seed's stream and active-learning run is kept as it finishes: a rerun with one more seed computes only
    that seed's, the kept ones are read back as they were, and other settings in the directory are a named error."""
    from fgraph_experiments._replications import ReplicationsMismatchError

    calls = []
    honest_stream, honest_active = online_logistic.stream, online_logistic.active_learning
    monkeypatch.setattr(online_logistic, "stream", lambda data, *a: calls.append("stream") or honest_stream(data, *a))
    monkeypatch.setattr(online_logistic, "active_learning",
                        lambda *a: calls.append("active") or honest_active(*a))
    first = online_logistic.run(quick=True, out=tmp_path, seeds=1, steps=3)
    counts = {"stream": calls.count("stream"), "active": calls.count("active")}
    assert counts["stream"] == 2 and counts["active"] > 0  # two data sets, one seed
    calls.clear()
    again = online_logistic.run(quick=True, out=tmp_path, seeds=2, steps=3)
    assert calls.count("stream") == 2 and calls.count("active") == counts["active"]  # only seed 1's
    assert again["streaming"]["breast_cancer"]["runs"][0] == first["streaming"]["breast_cancer"]["runs"][0]
    assert again["active"]["runs"][0] == first["active"]["runs"][0]
    with pytest.raises(ReplicationsMismatchError, match="steps"):
        online_logistic.run(quick=True, out=tmp_path, seeds=1, steps=4)
