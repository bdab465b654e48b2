"""`fgraph run cmn-heldout --quick`: each setting is the fit its options name, trained on cmn-uci's largest training
set and scored on its test set (accuracy, LPD, ECE recomputed here by hand, under both predictives); the table and
the comparison say what the records hold; a second run reads the fits back; other options are refused by name."""
import json

import numpy as np
import pytest

from fgraph.cli import main
from fgraph.datasets import DEFAULT_SPLITS, load_dataset, train_test_splits
from fgraph.models.cmn import CMNPriors, bound_predictive_log_proba, build_cmn, fit_cmn, predictive_log_proba
from fgraph_experiments import cmn_heldout


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("cmn-heldout")
    assert main(["run", "cmn-heldout", "--quick", "--out", str(out)]) == 0
    return out, json.loads((out / "summary.json").read_text())


def ece(probabilities, y, n_bins=20):
    """Expected calibration error written out: equal-width bins (lo, hi] of the top-class confidence."""
    confidence, correct = probabilities.max(axis=1), probabilities.argmax(axis=1) == y
    total = 0.0
    for b in range(n_bins):
        lo, hi = b / n_bins, (b + 1) / n_bins
        inside = (confidence > lo) & (confidence <= hi) if b else (confidence <= hi)
        if inside.any():
            total += inside.sum() / len(y) * abs(correct[inside].mean() - confidence[inside].mean())
    return total


def heldout_iris():
    """Iris's largest training set and the test set of cmn-uci (split seed 0), z-scored by the training rows."""
    data = load_dataset("iris")
    sizes = DEFAULT_SPLITS["iris"]
    assert sizes.train_sizes[-1] == 96 and sizes.test_size == 50
    splits = train_test_splits(data.X, data.y, sizes.train_sizes, sizes.test_size, random_state=0)
    train_index, test_index = splits[-1].train_index, splits[0].test_index  # every size shares the test set
    assert np.intersect1d(train_index, test_index).size == 0 and len(train_index) == 96 and len(test_index) == 50
    mean, scale = data.X[train_index].mean(0), data.X[train_index].std(0)
    return ((data.X[train_index] - mean) / scale, data.y[train_index], (data.X[test_index] - mean) / scale,
            data.y[test_index])


@pytest.mark.parametrize("setting, stick_bias, initial, passes", [
    ("eq4", False, "draws", 1), ("reference", True, "prior-mean", 8)])
def test_each_setting_is_the_fit_its_options_name_scored_on_the_test_set(quick, setting, stick_bias, initial,
                                                                          passes):
    _, summary = quick
    row = summary["rows"][f"iris/{setting}"]
    options = cmn_heldout.QUICK
    X_train, y_train, X_test, y_test = heldout_iris()
    assert (row["train_size"], row["test_size"]) == (96, 50)
    assert row["fit_seed"] == 4  # cmn-uci's seed for iris's fifth training size (6, 12, 24, 48, 96)
    network = build_cmn(X_train, y_train, 20, n_restarts=options["n_restarts"],
                        priors=CMNPriors(stick_bias=stick_bias))
    fit = fit_cmn(network, iterations=options["iterations"], seed=4, initial=initial, e_step_passes=passes)
    np.testing.assert_allclose(row["elbo_final"], fit.elbo[-1], rtol=1e-10)
    assert row["best_restart"] == int(np.argmax(fit.elbo[-1]))
    ours = np.exp(predictive_log_proba(fit.posteriors(), X_test, n_samples=options["predictive_samples"],
                                       random_state=4))
    authors = np.exp(bound_predictive_log_proba(fit.posteriors(), X_test))
    in_sample = {"ours": np.exp(predictive_log_proba(fit.posteriors(), X_train, n_samples=options["predictive_samples"],
                                                     random_state=4)),
                 "authors": np.exp(bound_predictive_log_proba(fit.posteriors(), X_train))}
    for name, probabilities in (("ours", ours), ("authors", authors)):
        np.testing.assert_allclose(row["train_lpd"][name], [np.mean(np.log(p[np.arange(96), y_train]))
                                                            for p in in_sample[name]], rtol=1e-9)
        found = row["predictives"][name]
        np.testing.assert_allclose(found["lpd"], [np.mean(np.log(p[np.arange(50), y_test])) for p in probabilities],
                                   rtol=1e-9)
        np.testing.assert_allclose(found["accuracy"], [np.mean(p.argmax(1) == y_test) for p in probabilities])
        np.testing.assert_allclose(found["ece"], [ece(p, y_test) for p in probabilities], rtol=1e-9, atol=1e-12)
        scores = summary["scores"][f"iris/{setting}"][name]["lpd"]
        assert scores["mean"] == pytest.approx(np.mean(found["lpd"]), rel=1e-12)
        assert scores["std"] == pytest.approx(np.std(found["lpd"]), rel=1e-12)
        assert scores["best_elbo"] == found["lpd"][row["best_restart"]]


def test_the_comparison_and_the_table_say_what_the_records_hold(quick):
    out, summary = quick
    for predictive in ("ours", "authors"):
        eq4, reference = (np.array(summary["rows"][f"iris/{s}"]["predictives"][predictive]["lpd"])
                          for s in ("eq4", "reference"))
        compared = summary["comparison"]["iris"][predictive]
        assert compared["lpd_difference"] == pytest.approx(eq4.mean() - reference.mean(), rel=1e-12)
        assert compared["better_lpd"] == ("eq4" if eq4.mean() > reference.mean() else "reference")
        spread = max(eq4.std(), reference.std())
        assert compared["beyond_spread"] == bool(abs(eq4.mean() - reference.mean()) > spread)
    text = (out / "results.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| iris |")]
    assert len(rows) == 4 and all(line.count("±") == 3 for line in rows)
    entry = summary["scores"]["iris/reference"]["authors"]["lpd"]
    assert "| iris | 96 | 50 | reference | authors |" in text
    assert f"{entry['mean']:.4f} ± {entry['std']:.4f} ({entry['best_elbo']:.4f})" in text
    compared = summary["comparison"]["iris"]["ours"]
    assert (f"* iris, the better test LPD under ours: {compared['better_lpd']} by {abs(compared['lpd_difference']):.4f}, "
            in text)
    assert {path.name for path in out.iterdir()} >= {"results.md", "summary.json", "fits"}
    assert {path.name for path in (out / "fits").glob("*.json")} == {"store.json", "iris-eq4.json",
                                                                       "iris-reference.json"}


def test_a_second_run_reads_the_fits_back(quick, monkeypatch):
    out, summary = quick

    def refit(*args, **kwargs):
        raise AssertionError("a finished (data set, setting) was fitted again")

    monkeypatch.setattr(cmn_heldout, "fit_one", refit)
    assert main(["run", "cmn-heldout", "--quick", "--out", str(out)]) == 0
    again = json.loads((out / "summary.json").read_text())
    assert again["rows"] == summary["rows"] and again["comparison"] == summary["comparison"]


def test_other_options_and_bad_input_are_refused_by_name(quick, capsys):
    out, _ = quick
    assert main(["run", "cmn-heldout", "--out", str(out), "--datasets", "iris"]) == 2  # the full study's options
    said = capsys.readouterr().err
    assert "CMN held-out fits" in said and "iterations, n_restarts, predictive_samples" in said
    assert main(["run", "cmn-heldout", "--quick", "--out", str(out), "--datasets", "irises"]) == 2
    assert "--datasets: invalid choice: 'irises'" in capsys.readouterr().err
    with pytest.raises(cmn_heldout.OptionError, match="--datasets: unknown data set 'irises'"):
        cmn_heldout.run(quick=True, out=out, datasets=["irises"])


@pytest.mark.parametrize("setting, stick_bias", [("initial", False), ("initial-bias", True)])
def test_the_parts_are_eq4_with_the_reference_settings_choices_one_by_one(quick, setting, stick_bias):
    """--parts: eq. (4) with the reference setting's initial state (and the sticks' prior bias), one E-step pass:
    the record is that fit (its final ELBO), and parts.md reports its test LPD beside eq. (4)'s and the
    reference's."""
    out, _ = quick
    assert main(["run", "cmn-heldout", "--quick", "--out", str(out), "--parts"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    row = json.loads((out / "parts" / f"iris-{setting}.json").read_text())
    options = cmn_heldout.QUICK
    X_train, y_train, _, _ = heldout_iris()
    network = build_cmn(X_train, y_train, 20, n_restarts=options["n_restarts"],
                        priors=CMNPriors(stick_bias=stick_bias))
    fit = fit_cmn(network, iterations=options["iterations"], seed=4, initial="prior-mean", e_step_passes=1)
    np.testing.assert_allclose(row["elbo_final"], fit.elbo[-1], rtol=1e-10)
    lpd = summary["part_scores"][f"iris/{setting}"]["ours"]["lpd"]["mean"]
    assert lpd == pytest.approx(np.mean(row["predictives"]["ours"]["lpd"]), rel=1e-12)
    assert f"{lpd:.4f}" in (out / "parts.md").read_text()
