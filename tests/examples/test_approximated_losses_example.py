"""``fgraph run approximated-losses``: the losses through their public functions (against scipy and numpy written
out here), and the quick run through the command line — its files, values of it recomputed independently from the
records it keeps (the networks' predictions by a numpy forward pass, the Bayesian last layer by the closed-form
posterior, the α_ε selection), its resumption and its options."""
import json

import numpy as np
import pytest
from scipy.special import log_softmax, softmax

pytest.importorskip("jax")
pytest.importorskip("optax")
pytest.importorskip("sklearn")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402

from fgraph.cli import main  # noqa: E402
from fgraph.datasets import train_test_splits  # noqa: E402
from fgraph.families.basis_matching import softmax_pseudo_observations  # noqa: E402
from fgraph.nodes.softmax import predictive_probabilities  # noqa: E402
from fgraph.store import CorruptRecordWarning  # noqa: E402
from fgraph_experiments import approximated_losses as experiment  # noqa: E402
from fgraph_experiments.baselines import approximated_losses as losses  # noqa: E402

METHODS = ("laplace", "variational", "moment", "moment-original")


def _problem(n=37, k=5, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(scale=2.0, size=(n, k)), rng.integers(0, k, size=n)


# ============================================================================================ the losses


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("alpha", [0.01, 0.1, 1.0])
def test_approximation_gradient_vanishes_at_the_pseudo_observations(method, alpha):
    """∂L/∂f = (f − ỹ)/(N ṽ): zero at f = ỹ (the targets of softmax_pseudo_observations) and that value beside
    it."""
    _, labels = _problem()
    targets, variances = softmax_pseudo_observations(labels, 5, alpha, method)
    loss = losses.make_loss(method, 5, alpha)
    at_targets = np.asarray(jax.grad(loss)(jnp.asarray(targets), jnp.asarray(labels)))
    np.testing.assert_allclose(at_targets, 0.0, atol=1e-14)
    shift = np.random.default_rng(1).normal(size=targets.shape)
    logits = targets + shift
    beside = np.asarray(jax.grad(loss)(jnp.asarray(logits), jnp.asarray(labels)))
    np.testing.assert_allclose(beside, (logits - targets) / (len(labels) * variances), rtol=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_approximation_loss_uses_exactly_the_library_pseudo_observations(method):
    logits, labels = _problem(seed=2)
    for alpha in (0.05, np.array([0.1, 0.2, 0.3, 0.4, 0.5])):
        targets, variances = softmax_pseudo_observations(labels, 5, alpha, method)
        expected = np.mean(np.sum((logits - targets) ** 2 / (2 * variances), axis=1))
        value = float(losses.make_loss(method, 5, alpha)(jnp.asarray(logits), jnp.asarray(labels)))
        assert value == pytest.approx(expected, rel=1e-13)
        with_constant = float(losses.make_loss(method, 5, alpha, constant=True)(jnp.asarray(logits),
                                                                               jnp.asarray(labels)))
        constant = np.mean(np.sum(0.5 * np.log(2 * np.pi * variances), axis=1))
        assert with_constant == pytest.approx(expected + constant, rel=1e-13)
        # the tables the training loop indexes are the same numbers
        table_targets, table_variances = losses.loss_tables(method, 5, alpha)
        np.testing.assert_array_equal(table_targets[labels], targets)
        np.testing.assert_array_equal(table_variances[labels], variances)


def test_gauss_loss_is_the_mean_squared_error_to_the_one_hot_labels():
    logits, labels = _problem(seed=3)
    one_hot = np.eye(5)[labels]
    expected = np.mean((logits - one_hot) ** 2)
    assert float(losses.one_hot_regression(jnp.asarray(logits), jnp.asarray(labels))) == pytest.approx(expected,
                                                                                                       rel=1e-13)
    assert float(losses.make_loss("gauss", 5)(jnp.asarray(logits), jnp.asarray(labels))) == pytest.approx(
        expected, rel=1e-13)
    # the tables the training loop uses for gauss give the same loss
    targets, variances = losses.loss_tables("gauss", 5)
    table_value = losses.approximation_loss(jnp.asarray(logits), jnp.asarray(labels), jnp.asarray(targets),
                                            jnp.asarray(variances))
    assert float(table_value) == pytest.approx(expected, rel=1e-13)


def test_exact_loss_is_minus_log_softmax_at_the_label():
    logits, labels = _problem(seed=4)
    logits[0] += 300.0  # large logits: the log-sum-exp must be stable
    expected = -np.mean(log_softmax(logits, axis=1)[np.arange(len(labels)), labels])
    value = float(losses.softmax_cross_entropy(jnp.asarray(logits), jnp.asarray(labels)))
    assert value == pytest.approx(expected, rel=1e-13)
    assert float(losses.make_loss("exact", 5)(jnp.asarray(logits), jnp.asarray(labels))) == value


def test_probabilities_and_errors():
    logits, _ = _problem(seed=5)
    np.testing.assert_allclose(np.asarray(losses.class_probabilities(jnp.asarray(logits))), softmax(logits, axis=1),
                               rtol=1e-13)
    clipped = np.asarray(losses.clipped_probabilities(jnp.asarray([[1.2, 0.5, -0.3]])))
    np.testing.assert_allclose(clipped, [[1.0, 0.5, 1e-6]] / np.sum([1.0, 0.5, 1e-6]), rtol=1e-13)
    with pytest.raises(ValueError, match="unknown loss"):
        losses.make_loss("hinge", 5)
    with pytest.raises(ValueError, match="unknown Gaussian loss"):
        losses.loss_tables("exact", 5)


# ============================================================================================ the quick run


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("approximated-losses")
    code = main(["run", "approximated-losses", "--quick", "--out", str(out)])
    return code, out, json.loads((out / "summary.json").read_text())


def _scores(p, y):
    """accuracy, NLL (floor 1e-12), ECE with 20 equal-width bins (b/20, (b+1)/20], written out."""
    correct = np.argmax(p, axis=1) == y
    nll = -np.mean(np.log(np.maximum(p[np.arange(len(y)), y], 1e-12)))
    confidence = p.max(axis=1)
    ece = 0.0
    for b in range(20):
        inside = (confidence > b / 20) & (confidence <= (b + 1) / 20) if b else (confidence <= 1 / 20)
        if inside.any():
            ece += inside.mean() * abs(correct[inside].mean() - confidence[inside].mean())
    return {"accuracy": correct.mean(), "nll": nll, "ece": ece}


def _digits_split(r=0):
    from sklearn.datasets import load_digits

    digits = load_digits()
    split = train_test_splits(digits.data.astype(float), digits.target, [1258], 539, random_state=[0, r])[0]
    assert split.X_train.shape == (1258, 64) and split.X_test.shape == (539, 64)
    return split


def _forward(record, X):
    """The perceptron in numpy from a record's parameters: (features, logits)."""
    h = np.maximum(X @ record["W0"] + record["b0"], 0.0)
    h = np.maximum(h @ record["W1"] + record["b1"], 0.0)
    return h, h @ record["W2"] + record["b2"]


def test_quick_run_writes_its_files_and_report(quick):
    code, out, summary = quick
    assert code == 0
    for name in ("results.md", "summary.json", "toy_regions.png", "digits_alpha.png", "digits_curves.png",
                 "bll.png"):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    settings = summary["settings"]
    assert settings["quick"] and settings["seeds"] == 1 and settings["alphas"] == [0.01, 0.1]
    # 6 toy networks, 2 + 4·2 digits networks, 4·2 last layers: all computed by a first run
    assert summary["records"] == summary["computed_this_run"] == 6 + 10 + 8
    text = (out / "results.md").read_text()
    for loss in ("exact", "gauss", "laplace", "variational", "moment", "moment-original"):
        m = summary["toy"][loss]
        label = experiment.LOSS_LABELS[loss]
        assert f"| {label} | " in text and f"{m['accuracy']['mean']:.3f} | {m['nll']['mean']:.3f} |" in text
    for method in METHODS:
        entry = summary["digits"]["grid"][method]["0.1"]
        assert (f"| {experiment.LOSS_LABELS[method]} | 0.1 | {entry['accuracy']['mean']:.3f} | "
                f"{entry['nll']['mean']:.3f} | {entry['ece']['mean']:.3f} |") in text


def test_toy_metrics_recomputed_from_the_stored_logits(quick):
    _, out, summary = quick
    data = experiment.toy_data(0, 0)
    assert data["X_train"].shape == (400, 2) and np.bincount(data["y_train"]).tolist() == [100] * 4
    np.testing.assert_array_equal(experiment.toy_data(0, 0)["X_test"], data["X_test"])  # deterministic
    for loss in ("exact", "gauss", "moment"):
        with np.load(out / "runs" / "toy" / f"s0_{loss}.npz") as record:
            logits = record["test_logits"]
        expected = _scores(softmax(logits, axis=1), data["y_test"])
        for metric, value in expected.items():
            assert summary["toy"][loss][metric]["mean"] == pytest.approx(value, abs=1e-12), (loss, metric)
    with np.load(out / "runs" / "toy" / "s0_gauss.npz") as record:
        clipped = np.clip(record["test_logits"], 1e-6, 1.0)
    expected = _scores(clipped / clipped.sum(axis=1, keepdims=True), data["y_test"])
    assert summary["toy"]["gauss-clipped"]["nll"]["mean"] == pytest.approx(expected["nll"], abs=1e-12)


def test_digits_exact_network_recomputed_by_a_numpy_forward_pass(quick):
    _, out, summary = quick
    split = _digits_split()
    with np.load(out / "runs" / "digits" / "s0_exact.npz") as stored:
        record = dict(stored)
    _, logits = _forward(record, split.X_test)
    expected = _scores(softmax(logits, axis=1), split.y_test)
    for metric, value in expected.items():
        assert summary["digits"]["exact"][metric]["mean"] == pytest.approx(value, abs=1e-10), metric
    # the per-epoch curve computed inside the training loop ends at the same numbers
    assert record["test_accuracy"][-1] == pytest.approx(expected["accuracy"], abs=1e-12)
    assert record["test_nll"][-1] == pytest.approx(expected["nll"], rel=1e-10)
    assert record["test_nll"].shape == (summary["settings"]["epochs"],)
    _, train_logits = _forward(record, split.X_train)
    train_ll = np.mean(np.log(np.maximum(softmax(train_logits, axis=1)[np.arange(1258), split.y_train], 1e-12)))
    assert float(record["train_log_likelihood"]) == pytest.approx(train_ll, abs=1e-10)


def test_alpha_is_chosen_by_the_training_log_likelihood(quick):
    _, out, summary = quick
    alphas = summary["settings"]["alphas"]
    for method in METHODS:
        train_ll = []
        for alpha in alphas:
            with np.load(out / "runs" / "digits" / f"s0_{method}_a{alpha:g}.npz") as record:
                train_ll.append(float(record["train_log_likelihood"]))
        assert summary["digits"]["chosen"][method]["alphas"] == [alphas[int(np.argmax(train_ll))]]
        bll_ll = [json.loads((out / "runs" / "bll" / f"s0_{method}_a{a:g}.json").read_text())["train_log_likelihood"]
                  for a in alphas]
        assert summary["bll"]["chosen"][method]["alphas"] == [alphas[int(np.argmax(bll_ll))]]


@pytest.mark.parametrize("method, alpha", [("variational", 0.1), ("moment-original", 0.01)])
def test_bayesian_last_layer_recomputed_in_closed_form(quick, method, alpha):
    """The posterior of each class's last-layer weights, Σ = (I/σ² + Φᵀ V⁻¹ Φ)⁻¹, μ = Σ Φᵀ V⁻¹ ỹ, on the exact
    network's features; its MC predictive and plug-in scores equal the run's."""
    _, out, summary = quick
    split = _digits_split()
    with np.load(out / "runs" / "digits" / "s0_exact.npz") as stored:
        record = dict(stored)
    features, _ = _forward(record, split.X_train)
    test_features, _ = _forward(record, split.X_test)
    rows = np.column_stack([features, np.ones(len(features))])
    test_rows = np.column_stack([test_features, np.ones(len(test_features))])
    targets, variances = softmax_pseudo_observations(split.y_train, 10, alpha, method)
    prior_var = summary["settings"]["prior_var"]
    means, s2 = np.empty((539, 10)), np.empty((539, 10))
    for k in range(10):
        precision = np.eye(rows.shape[1]) / prior_var + rows.T @ (rows / variances[:, k:k + 1])
        cov = np.linalg.inv(precision)
        mu = cov @ (rows.T @ (targets[:, k] / variances[:, k]))
        means[:, k] = test_rows @ mu
        s2[:, k] = np.einsum("ni,ij,nj->n", test_rows, cov, test_rows)
    mc = predictive_probabilities(means, s2, n_samples=summary["settings"]["predictive_samples"], seed=0)
    reported = summary["bll"]["grid"][method][f"{alpha:g}"]
    for metric, value in _scores(mc, split.y_test).items():
        assert reported["mc"][metric]["mean"] == pytest.approx(value, abs=1e-8), metric
    for metric, value in _scores(softmax(means, axis=1), split.y_test).items():
        assert reported["plug_in"][metric]["mean"] == pytest.approx(value, abs=1e-8), metric
    assert summary["bll"]["network"]["nll"]["mean"] == summary["digits"]["exact"]["nll"]["mean"]


def test_rerun_reads_every_cell_and_other_settings_are_refused(quick, capsys):
    _, out, summary = quick
    manifest = (out / "runs" / "store.json").read_text()
    stamps = {path: path.stat().st_mtime_ns for path in (out / "runs").rglob("*.npz")}
    assert main(["run", "approximated-losses", "--quick", "--out", str(out)]) == 0
    again = json.loads((out / "summary.json").read_text())
    assert again["toy"] == summary["toy"] and again["digits"] == summary["digits"] and again["bll"] == summary["bll"]
    assert again["computed_this_run"] == 0
    assert (out / "runs" / "store.json").read_text() == manifest
    assert {path: path.stat().st_mtime_ns for path in stamps} == stamps  # nothing was trained again
    capsys.readouterr()
    assert main(["run", "approximated-losses", "--quick", "--prior-var", "2", "--out", str(out)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("fgraph: ") and "prior_var" in error and "\n" not in error


def test_a_lost_cell_is_recomputed_to_the_same_numbers(quick, tmp_path):
    """A run killed before a cell was written: the rerun trains only that cell, and gets the same numbers."""
    _, out, summary = quick
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    lost = copy / "runs" / "digits" / "s0_moment_a0.1.npz"
    lost.unlink()
    kept = copy / "runs" / "digits" / "s0_laplace_a0.1.npz"
    stamp = kept.stat().st_mtime_ns
    with pytest.warns(CorruptRecordWarning, match="s0_moment_a0.1.npz is listed in the manifest but missing"):
        assert main(["run", "approximated-losses", "--quick", "--out", str(copy)]) == 0
    assert lost.is_file() and kept.stat().st_mtime_ns == stamp
    again = json.loads((copy / "summary.json").read_text())
    assert again["computed_this_run"] == 1
    assert again["digits"]["grid"]["moment"] == summary["digits"]["grid"]["moment"]


@pytest.mark.parametrize("words, said", [(["--alphas", "0"], "must be a finite number > 0"),
                                         (["--alphas", "0.1", "0.1"], "given twice"),
                                         (["--seeds", "0"], "whole number >= 1"),
                                         (["--prior-var", "nan"], "must be a finite number > 0")])
def test_bad_options_are_one_line(tmp_path, capsys, words, said):
    assert main(["run", "approximated-losses", "--quick", "--out", str(tmp_path / "x"), *words]) == 2
    error = capsys.readouterr().err.strip()
    assert said in error and "\n" not in error


def test_run_refuses_bad_values_given_directly(tmp_path):
    with pytest.raises(experiment.OptionError, match="--alphas"):
        experiment.run(quick=True, out=tmp_path, alphas=[-1.0])
    with pytest.raises(experiment.OptionError, match="--prior-var"):
        experiment.run(quick=True, out=tmp_path, prior_var=0.0)
