"""`fgraph run cmn-uci --quick` and `fgraph run cmn-pinwheels --quick`: the summaries against independent computations.

* the splits are the stratified nested splits of ``train_test_splits`` with the run's seed;
* the CAVI fit is one graph with R restarts: refitting with the same seed gives the same ELBO traces;
* every restart is scored on its own predictive, by accuracy, LPD and ECE written out here in numpy;
* steps to 95 % are the exponential fit of each restart's ELBO trace;
* WAIC is Σ_n [log mean_m p(y_n | θ_m) − var_m log p(y_n | θ_m)] (divisor M) of each restart's pointwise log-likelihoods;
* a second run in the same directory reuses the results, one with other settings recomputes them.

The baselines (JAX) are tested on a tiny configuration only with FGRAPH_TEST_FULL_EXAMPLES=1: their
compilation takes minutes on a small machine.
"""
import dataclasses
import json
import os
import warnings

import numpy as np
import pytest
from scipy.special import logsumexp

from fgraph.cli import main
from fgraph.datasets import load_dataset, train_test_splits
from fgraph.errors import ConvergenceWarning
from fgraph_experiments import _cmn_experiment as experiment
from fgraph_experiments import cmn_pinwheels, cmn_uci
from fgraph.models.cmn import CMNPriors, build_cmn, fit_cmn, pointwise_log_likelihood, predictive_log_proba
from fgraph.models.convergence import iterations_to_fraction


def quick_run(tmp_path_factory, example: str) -> dict:
    """``fgraph run <example> --quick``'s summary, with its output folder under ``"_out"``."""
    out = tmp_path_factory.mktemp(example)
    assert main(["run", example, "--quick", "--out", str(out)]) == 0
    found = json.loads((out / "summary.json").read_text())
    found["_out"] = out
    return found


@pytest.fixture(scope="module")
def uci(tmp_path_factory):
    return quick_run(tmp_path_factory, "cmn-uci")


@pytest.fixture(scope="module")
def pinwheels(tmp_path_factory):
    return quick_run(tmp_path_factory, "cmn-pinwheels")


def numpy_scores(probabilities, y):
    """Accuracy, mean log p(y), and the 20-bin ECE of Guo et al., written out for one restart."""
    p = probabilities / probabilities.sum(axis=1, keepdims=True)
    predicted, confidence = p.argmax(axis=1), p.max(axis=1)
    correct = predicted == y
    ece = 0.0
    for b in range(20):
        low, high = b / 20, (b + 1) / 20
        inside = (confidence > low) & (confidence <= high) if b else (confidence <= high)
        if inside.any():
            ece += inside.mean() * abs(correct[inside].mean() - confidence[inside].mean())
    return correct.mean(), np.mean(np.log(p[np.arange(y.size), y])), ece


def waic_by_hand(log_likelihood):
    """elpd_waic = Σ_n log mean_m exp(ℓ_mn) − Σ_n var_m ℓ_mn for ℓ (M, N), the variance over draws with
    divisor M as ArviZ computes it."""
    M = log_likelihood.shape[0]
    lppd = logsumexp(log_likelihood, axis=0) - np.log(M)
    return float(np.sum(lppd) - np.sum(np.var(log_likelihood, axis=0)))


def quick_iris_splits():
    data = load_dataset("iris")
    train, test = cmn_uci.QUICK.split_sizes("iris")
    return data, train_test_splits(data.X, data.y, train, test, random_state=cmn_uci.QUICK.seed)


def test_quick_uci_writes_its_files(uci):
    out = uci["_out"]
    assert set(uci["datasets"]) == {"iris"}
    for name in ["summary.json", "results.md", "iris.json", "iris_traces.npz"]:
        assert (out / name).exists(), name
    pytest.importorskip("matplotlib")
    assert (out / "iris.png").exists() and (out / "iris_reliability.png").exists()


def test_every_restart_is_scored_on_its_own_predictive(uci):
    """Refit each training size with the run's seed under eq. (4) from drawn coefficients (the paper's model, which
    the study reproduces): same ELBO traces, and metrics recomputed in numpy."""
    result = uci["datasets"]["iris"]
    config = cmn_uci.QUICK
    _, splits = quick_iris_splits()
    traces = np.load(uci["_out"] / "iris_traces.npz")
    assert [row["train_size"] for row in result["rows"]] == [6, 12]
    for i, (split, row) in enumerate(zip(splits, result["rows"])):
        network = build_cmn(split.X_train, split.y_train, 20, n_restarts=config.n_restarts, n_classes=3,
                            priors=CMNPriors(stick_bias=False))
        fit = fit_cmn(network, iterations=config.iterations, seed=config.seed + i, initial="draws")
        np.testing.assert_allclose(traces[f"cavi_{split.train_size}"], fit.elbo, rtol=1e-10)
        probabilities = np.exp(predictive_log_proba(fit.posteriors(), split.X_test, config.predictive_samples,
                                                    config.seed + i))
        cavi = row["methods"]["cavi"]
        expected = np.array([numpy_scores(p, split.y_test) for p in probabilities])  # (R, 3)
        for column, metric in enumerate(("accuracy", "lpd", "ece")):
            np.testing.assert_allclose(cavi[metric]["values"], expected[:, column], rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(cavi[metric]["mean"], expected[:, column].mean(), rtol=1e-10)
            np.testing.assert_allclose(cavi[metric]["std"], expected[:, column].std(), rtol=1e-10, atol=1e-14)
        assert cavi["runtime"]["iterations"] == config.iterations
        np.testing.assert_allclose(cavi["runtime"]["seconds_per_step"],
                                   cavi["runtime"]["seconds"] / config.iterations, rtol=1e-12)


def test_steps_to_95_percent_are_the_exponential_fit_of_each_trace(uci):
    traces = np.load(uci["_out"] / "iris_traces.npz")
    for row in uci["datasets"]["iris"]["rows"]:
        elbo = traces[f"cavi_{row['train_size']}"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            expected = [iterations_to_fraction(elbo[:, r], 0.95) for r in range(elbo.shape[1])]
        found = np.array(row["methods"]["cavi"]["runtime"]["steps_to_95"]["values"], dtype=float)
        np.testing.assert_allclose(found, expected, rtol=1e-10)


def test_waic_is_computed_from_draws_of_the_full_data_fit(uci):
    pytest.importorskip("arviz")
    config = cmn_uci.QUICK
    data, _ = quick_iris_splits()
    X = (data.X - data.X.mean(axis=0)) / data.X.std(axis=0)
    seed = config.seed + 1000
    fit = fit_cmn(build_cmn(X, data.y, 20, n_restarts=config.n_restarts, n_classes=3,
                            priors=CMNPriors(stick_bias=False)), iterations=config.iterations, seed=seed,
                  initial="draws")
    log_likelihood = pointwise_log_likelihood(fit.posteriors(), X, data.y, config.waic_draws, config.waic_inner, seed)
    waic = uci["datasets"]["iris"]["waic"]
    assert waic["n"] == 150
    np.testing.assert_allclose(waic["cavi"]["elpd_waic"]["values"], [waic_by_hand(ll) for ll in log_likelihood],
                               rtol=1e-10)


def test_results_table_lists_each_size_and_the_waic(uci):
    table = (uci["_out"] / "results.md").read_text()
    rows = [line for line in table.splitlines() if line.startswith("| iris |")]
    assert len(rows) == 3  # two training sizes, one WAIC line
    first = uci["datasets"]["iris"]["rows"][0]["methods"]["cavi"]
    assert f"{first['accuracy']['mean']:.3f} ± {first['accuracy']['std']:.3f}" in rows[0]


def test_a_second_run_reuses_the_results_and_other_settings_recompute(tmp_path):
    config = experiment.ExperimentConfig(datasets=("iris",), n_experts=2, n_restarts=1, iterations=4,
                                         sizes={"iris": ((6,), 30)}, predictive_samples=4, waic=False,
                                         baselines=False)
    first = cmn_uci.run(out=tmp_path, config=config)["datasets"]["iris"]
    second = cmn_uci.run(out=tmp_path, config=config)["datasets"]["iris"]
    assert not first["resumed"] and second["resumed"]
    assert second["rows"] == first["rows"]
    other = cmn_uci.run(out=tmp_path, config=experiment.ExperimentConfig(**{**config.__dict__, "iterations": 5}))
    assert not other["datasets"]["iris"]["resumed"]
    assert other["datasets"]["iris"]["rows"][0]["methods"]["cavi"]["runtime"]["iterations"] == 5


def test_an_interrupted_data_set_resumes_at_its_next_training_size(tmp_path, monkeypatch):
    config = experiment.ExperimentConfig(datasets=("iris",), n_experts=2, n_restarts=2, iterations=4,
                                         sizes={"iris": ((6, 12), 30)}, predictive_samples=4, waic=False,
                                         baselines=False)
    whole = cmn_uci.run(out=tmp_path / "whole", config=config)["datasets"]["iris"]
    calls, real_cavi = [], experiment._cavi

    def cavi_then_stop(X, *args, **kwargs):
        calls.append(len(X))
        if len(calls) == 2:
            raise KeyboardInterrupt  # the run is stopped during its second training size
        return real_cavi(X, *args, **kwargs)

    monkeypatch.setattr(experiment, "_cavi", cavi_then_stop)
    with pytest.raises(KeyboardInterrupt):
        cmn_uci.run(out=tmp_path / "cut", config=config)
    assert not (tmp_path / "cut" / "iris.json").exists()
    assert (tmp_path / "cut" / "iris_sizes" / "6.json").exists()
    calls.clear()
    monkeypatch.setattr(experiment, "_cavi", lambda X, *args, **kwargs: (calls.append(len(X)),
                                                                         real_cavi(X, *args, **kwargs))[1])
    resumed = cmn_uci.run(out=tmp_path / "cut", config=config)["datasets"]["iris"]
    assert calls == [12]  # only the size that had not finished is fitted again
    for row, reference in zip(resumed["rows"], whole["rows"], strict=True):  # all but the wall-clock seconds
        found, expected = row["methods"]["cavi"], reference["methods"]["cavi"]
        for metric in ("accuracy", "lpd", "ece"):
            assert found[metric] == expected[metric]
        assert found["best_restart"] == expected["best_restart"]
        np.testing.assert_array_equal(found["runtime"]["steps_to_95"]["values"],
                                      expected["runtime"]["steps_to_95"]["values"])
    assert resumed["reliability"] == whole["reliability"]
    with np.load(tmp_path / "whole" / "iris_traces.npz") as a, np.load(tmp_path / "cut" / "iris_traces.npz") as b:
        assert sorted(a.files) == sorted(b.files)
        for key in a.files:
            np.testing.assert_array_equal(a[key], b[key])


def test_agreement_is_the_total_variation_and_lpd_difference():
    y = np.array([0, 1])
    reference = np.array([[[0.5, 0.5], [0.2, 0.8]]])
    restarts = np.array([[[0.9, 0.1], [0.2, 0.8]],  # TV 0.4 and 0
                         [[0.5, 0.5], [0.5, 0.5]]])  # TV 0 and 0.3
    found = experiment.agreement(restarts, reference, y)
    np.testing.assert_allclose(found["total_variation"]["values"], [0.2, 0.15])
    reference_lpd = (np.log(0.5) + np.log(0.8)) / 2
    np.testing.assert_allclose(found["lpd_difference"]["values"],
                               [(np.log(0.9) + np.log(0.8)) / 2 - reference_lpd, np.log(0.5) - reference_lpd])


def test_quick_pinwheels_runs_the_experiment_and_the_scaling_study(pinwheels):
    result = pinwheels["datasets"]["pinwheels"]
    assert result["n_experts"] == 10 and result["n_classes"] == 5 and result["test_size"] == 100
    assert [row["train_size"] for row in result["rows"]] == [25, 50]
    assert result["n_rows"] == 150  # the largest training set and the test set, generated with the seed
    for row in result["rows"]:
        cavi = row["methods"]["cavi"]
        assert len(cavi["accuracy"]["values"]) == 2 and cavi["accuracy"]["mean"] > 0.3  # 5 classes: chance is 0.2
    scaling = pinwheels["runtime_scaling"]
    for parameter, values in cmn_pinwheels.QUICK_SCALING_GRID.items():
        series = scaling[parameter]
        assert series["values"] == list(values)
        times = np.array(series["cavi"])
        assert np.all(np.isfinite(times)) and np.all(times >= 0) and times[0] > 0
        np.testing.assert_allclose(series["relative"]["cavi"], times / times[0])
    pytest.importorskip("matplotlib")
    assert (pinwheels["_out"] / "runtime_scaling.png").exists()


def test_pinwheel_splits_are_stratified_and_nested():
    config = cmn_pinwheels.QUICK
    train, test = config.split_sizes("pinwheels")
    data = experiment._load("pinwheels", config, train[-1] + test)
    splits = train_test_splits(data.X, data.y, train, test, random_state=config.seed)
    assert set(splits[0].train_index) <= set(splits[1].train_index)
    np.testing.assert_array_equal(np.bincount(splits[1].y_train, minlength=5), [10] * 5)
    np.testing.assert_allclose(splits[1].X_train.mean(axis=0), 0.0, atol=1e-12)


def test_unknown_sizes_are_a_clear_error():
    config = experiment.ExperimentConfig(datasets=("nowhere",))
    with pytest.raises(experiment.ExperimentError, match="no training sizes for data set 'nowhere'"):
        config.split_sizes("nowhere")


@pytest.mark.skipif(os.environ.get("FGRAPH_TEST_FULL_EXAMPLES") != "1",
                    reason="JAX baselines compile for minutes; set FGRAPH_TEST_FULL_EXAMPLES=1")
def test_baselines_run_beside_cavi_and_agreement_with_nuts_is_reported(tmp_path):
    pytest.importorskip("jax")
    pytest.importorskip("numpyro")
    pytest.importorskip("arviz")
    config = experiment.ExperimentConfig(datasets=("iris",), n_experts=2, n_restarts=2, iterations=6,
                                         sizes={"iris": ((24,), 30)}, predictive_samples=8, waic_draws=10,
                                         waic_inner=4, mle_steps=30, bbvi_steps=30, nuts_datasets=("iris",),
                                         nuts_warmup=20, nuts_samples=10, nuts_chains=2)
    result = cmn_uci.run(out=tmp_path, config=config)["datasets"]["iris"]
    assert result["methods"] == ["cavi", "mle", "bbvi", "nuts"]
    methods = result["rows"][0]["methods"]
    for method in ("cavi", "mle", "bbvi"):
        assert len(methods[method]["accuracy"]["values"]) == 2
        assert len(methods[method]["agreement_with_nuts"]["total_variation"]["values"]) == 2
    assert len(methods["nuts"]["accuracy"]["values"]) == 1
    assert {"cavi", "mle", "bbvi", "nuts"} <= set(result["waic"])


def test_progress_bars_advance_once_per_fit(tmp_path, monkeypatch):
    bars = []

    class Recorder:
        def __init__(self, total, description, enabled):
            self.total, self.description, self.enabled, self.steps, self.closed = total, description, enabled, 0, False
            bars.append(self)

        def __enter__(self):
            return self

        def __exit__(self, *exception):
            self.closed = True

        def update(self, steps=1):
            self.steps += steps

        def set_postfix_str(self, text):
            pass

    monkeypatch.setattr(experiment, "progress_bar", Recorder)
    config = experiment.ExperimentConfig(datasets=("iris",), n_experts=2, n_restarts=1, iterations=4,
                                         sizes={"iris": ((6, 12), 30)}, predictive_samples=4, waic_draws=4,
                                         waic_inner=2, baselines=False)
    cmn_uci.run(out=tmp_path, config=config, progress=True)
    cmn_pinwheels.run(out=tmp_path, config=experiment.ExperimentConfig(
        datasets=("pinwheels",), n_experts=2, n_restarts=1, iterations=4, sizes={"pinwheels": ((10,), 20)},
        predictive_samples=4, waic=False, baselines=False), progress=True,
        scaling=dict(grid={"d": (2, 3)}, base=cmn_pinwheels.QUICK_SCALING_BASE, iterations=(1, 2), baseline_steps=0))
    found = [(bar.description, bar.total, bar.steps, bar.enabled, bar.closed) for bar in bars]
    assert found == [("iris: fits", 3, 3, True, True), ("runtime scaling", 2, 2, True, True),
                     ("pinwheels: fits", 1, 1, True, True)]


def test_worker_processes_give_the_same_cavi_fits():
    """``n_jobs`` in the configuration reaches fit_cmn: the restarts on two workers are the in-process fit."""
    data = load_dataset("iris")
    X = (data.X - data.X.mean(0)) / data.X.std(0)
    config = experiment.ExperimentConfig(datasets=("iris",), n_restarts=3, iterations=4)
    alone, _ = experiment._cavi(X, data.y, 3, config, 4, seed=1)
    workers, _ = experiment._cavi(X, data.y, 3, dataclasses.replace(config, n_jobs=2), 4, seed=1)
    assert alone.result is not None and workers.result is None
    np.testing.assert_allclose(workers.elbo, alone.elbo, rtol=1e-10)
