"""`fgraph run faithful`: the quick run's files, its VB interval for π recomputed by scipy, TVB against VB, options."""
import json

import numpy as np
import pytest
from scipy import stats

from fgraph.cli import main
from fgraph.errors import DatasetError
from fgraph.examples import faithful
from fgraph.models.tvb import FULL, TVBTable


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("faithful")
    summary = faithful.run(quick=True, out=out)
    return summary, out


def test_quick_run_writes_its_files(quick):
    summary, out = quick
    for name in summary["files"]:
        assert (out / name).exists(), name
    assert {"results.md", "clusters.png", "weight_posterior.png"} <= set(summary["files"])
    assert json.loads((out / "summary.json").read_text())["n"] == 136
    table = (out / "results.md").read_text()
    for quantity in ("π (larger weight)", "μ_11", "μ_12", "μ_21", "μ_22", "μ_11 + μ_12", "μ_21 + μ_22"):
        assert f"| {quantity} |" in table
    assert summary["grid_size"] == faithful.QUICK_GRID and summary["n_bootstrap"] == faithful.QUICK_BOOTSTRAP


def test_vb_interval_of_the_larger_weight_is_the_beta_marginal(quick):
    """Plain VB: Dir(α) of the fit at ω = 1 on the whole data; π of the larger cluster ~ Beta(α_k, Σα − α_k)"""
    summary, out = quick
    table = TVBTable.load(out / "tvb-table")
    assert table.grid[-1] == 1.0
    alpha = table.alpha[-1, FULL]
    assert np.allclose(alpha, summary["vb_posterior"]["alpha"])
    k = int(np.argmax(alpha))
    a, b = alpha[k], alpha.sum() - alpha[k]
    expected = stats.beta.ppf([0.025, 0.975], a, b)
    row = summary["rows"][0]
    assert row["functional"] == "weight[largest]"
    assert row["vb"] == pytest.approx(expected, abs=1e-10)
    assert row["vb_point"] == pytest.approx(a / (a + b), abs=1e-12)
    # the counts: ω N points plus the prior's concentration per component (1 / K by default)
    assert alpha.sum() == pytest.approx(summary["n"] + 2 * 0.5, rel=1e-9)


def test_tvb_intervals_of_the_selected_omega(quick):
    """The TVB interval is the whole-data cell at the selected ω; as the paper finds (Table 1), it is at least as
    wide as VB's for every quantity, and strictly wider where VB under-covers."""
    summary, out = quick
    table = TVBTable.load(out / "tvb-table")
    for row in summary["rows"]:
        index = int(np.flatnonzero(table.grid == row["omega"])[0])
        lower, upper = table.intervals(row["functional"]).lower, table.intervals(row["functional"]).upper
        assert row["tvb"] == pytest.approx([lower[index, FULL], upper[index, FULL]], abs=1e-12)
        vb_length, tvb_length = np.diff(row["vb"])[0], np.diff(row["tvb"])[0]
        assert tvb_length >= vb_length - 1e-12, row
        assert row["wider"]
        if row["vb_coverage"] < 0.95:
            assert row["omega"] < 1.0 and tvb_length > vb_length, row


def test_the_bundled_data_is_old_faithful():
    X, names = faithful.load_faithful()
    assert X.shape == (272, 2) and names == ["eruptions", "waiting"]
    assert X[0].tolist() == [3.6, 79.0]


def test_command_line_options_reach_the_run(tmp_path, capsys):
    rows = faithful.DATA_FILE.read_text().splitlines()
    mine = tmp_path / "mine.csv"
    mine.write_text("\n".join(rows[:101]) + "\n")
    assert main(["run", "faithful", "--quick", "--out", str(tmp_path / "o"), "--data", str(mine),
                 "--standardise", "--jobs", "1"]) == 0
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["n"] == 50 and summary["standardised"]
    means = np.asarray(summary["vb_posterior"]["mean"])
    assert np.all(np.abs(means) < 3)  # standard units


def test_a_missing_data_file_is_a_named_error(tmp_path, capsys):
    assert main(["run", "faithful", "--quick", "--out", str(tmp_path), "--data", str(tmp_path / "none.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fgraph:") and "none.csv" in err and "Traceback" not in err
    with pytest.raises(DatasetError, match="none.csv"):
        faithful.run(quick=True, out=tmp_path, data=tmp_path / "none.csv")


def test_a_malformed_data_file_is_a_named_error(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,c\n1,2,3\n")
    with pytest.raises(DatasetError, match="two columns"):
        faithful.load_faithful(bad)
    bad.write_text("a,b\n1,x\n")
    with pytest.raises(DatasetError, match="not two numbers"):
        faithful.load_faithful(bad)


def test_unknown_options_are_errors(tmp_path, capsys):
    assert main(["run", "faithful", "--quick", "--out", str(tmp_path), "--dataa", "x.csv"]) == 2
    assert "unrecognized arguments: --dataa" in capsys.readouterr().err
