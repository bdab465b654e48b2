"""`fgraph run cmn-table1 --quick`: each setting is the fit its options name, scored by the in-sample mean log
predictive density written out here; a second run reads the fits back."""
import json

import numpy as np
import pytest

from fgraph.cli import main
from fgraph.datasets import load_dataset
from fgraph.models.cmn import CMNPriors, bound_predictive_log_proba, build_cmn, fit_cmn, predictive_log_proba
from fgraph_experiments import cmn_table1


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("cmn-table1")
    assert main(["run", "cmn-table1", "--quick", "--out", str(out)]) == 0
    return out, json.loads((out / "summary.json").read_text())


@pytest.mark.parametrize("setting, stick_bias, initial, passes", [
    ("eq4", False, "draws", 1), ("reference", True, "prior-mean", 8)])
def test_each_setting_is_the_fit_its_options_name(quick, setting, stick_bias, initial, passes):
    _, summary = quick
    row = summary["rows"][f"iris/{setting}"]
    options = cmn_table1.QUICK
    data = load_dataset("iris")
    X = (data.X - data.X.mean(0)) / data.X.std(0)
    network = build_cmn(X, data.y, 20, n_restarts=options["n_restarts"], priors=CMNPriors(stick_bias=stick_bias))
    fit = fit_cmn(network, iterations=options["iterations"], seed=options["seed"], initial=initial,
                  e_step_passes=passes)
    probabilities = np.exp(predictive_log_proba(fit.posteriors(), X, n_samples=options["predictive_samples"],
                                                random_state=options["seed"]))
    expected = [np.mean(np.log(p[np.arange(len(data.y)), data.y])) for p in probabilities]
    np.testing.assert_allclose(row["lpd_per_restart"], expected, rtol=1e-10)
    bound = np.exp(bound_predictive_log_proba(fit.posteriors(), X))
    np.testing.assert_allclose(row["bound_lpd_per_restart"],
                               [np.mean(np.log(p[np.arange(len(data.y)), data.y])) for p in bound], rtol=1e-10)
    np.testing.assert_allclose(row["elbo_final"], fit.elbo[-1], rtol=1e-10)
    assert row["lpd_mean"] == pytest.approx(np.mean(expected), rel=1e-12)
    assert row["best_restart"] == int(np.argmax(fit.elbo[-1]))


def test_the_table_and_a_second_run_reads_the_fits_back(quick, capsys):
    out, summary = quick
    text = (out / "results.md").read_text()
    assert "| iris | 150 | -0.0747 |" in text and text.count("±") == 4
    again = cmn_table1.run(quick=True, out=out)
    assert again["rows"] == summary["rows"]  # (the seconds recorded are the first run's: nothing refitted)
