"""`fgraph run gmm-tvb-ablation` and the named options of `fgraph run gmm-tvb`: the quick run's files, the arms'
options reach the library (one row recomputed by direct calls), the tie arm and the paired counts recomputed from
the rows, a rerun fits nothing, and our defaults keep the rows' identity."""
import json

import numpy as np
import pytest

from fgraph.cli import main
from fgraph.models.mixtures import GMMPriors
from fgraph.models.tvb import build_tvb_table, omega_grid
from fgraph_experiments import gmm_tvb, gmm_tvb_ablation

pytest.importorskip("sklearn")


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("gmm-tvb-ablation")
    return gmm_tvb_ablation.run(quick=True, out=out), out


def rows_of(out, arm):
    return {row["replication"]: row for row in (json.loads(path.read_text()) for path in
                                                 sorted((out / "arms" / arm).glob("n*_r*.json")))}


def test_quick_run_writes_its_files_and_every_arm(quick):
    summary, out = quick
    for name in summary["files"]:
        assert (out / name).exists(), name
    assert set(summary["results"]) == set(gmm_tvb_ablation.ARMS) | set(gmm_tvb_ablation.TIE_ARMS) | set(
        gmm_tvb_ablation.PORT_ARMS)
    text = (out / "results.md").read_text()
    for arm in summary["results"]:
        assert f"| {arm} |" in text
    ours = rows_of(out, "ours")
    for arm, (_, table, sequential) in gmm_tvb_ablation.ARMS.items():
        mine = rows_of(out, arm)
        assert sorted(mine) == sorted(ours) == [0, 1]
        for r, row in mine.items():
            assert row["data_seed"] == ours[r]["data_seed"] and row["split_seed"] == ours[r]["split_seed"]
            assert ("tvb_grid" in row) == table and ("tvb_sequential" in row) == sequential
    for arm, (_, _, sequential) in gmm_tvb_ablation.PORT_ARMS.items():  # the port: the same data
        mine = rows_of(out, arm)
        assert sorted(mine) == [0, 1]
        assert all(row["data_seed"] == ours[r]["data_seed"] and {"vb", "tvb_grid"} <= set(row)
                   and ("tvb_sequential" in row) == sequential for r, row in mine.items())


def test_the_authors_arm_is_the_library_called_with_the_authors_choices(quick):
    """One replication of the 'authors' arm, recomputed by direct calls of the library with the authors' choices
    spelled out: W₀ = cov(X), ν₀ = 4, per-ω resampling, k-means starts, 199 sweeps / 1e-4 per sweep, ties to
    the largest ω."""
    _, out = quick
    row = rows_of(out, "authors")[1]
    scope = gmm_tvb_ablation.QUICK
    X = gmm_tvb.simulate(scope["size"], 0, 1)
    table = build_tvb_table(X, 2, grid=omega_grid(scope["grid_size"], scope["grid_low"]),
                            n_bootstrap=scope["n_bootstrap"], seed=row["split_seed"], n_jobs=1,
                            priors=GMMPriors(scale="covariance", df=4.0), resampling="per_omega", start="kmeans",
                            iterations=199, tol=1e-4, check_every=1)
    s = table.select("weight[largest]", 0.95, ties="largest")
    assert row["tvb_grid"]["omega"] == pytest.approx(s.omega, rel=1e-12)
    assert row["tvb_grid"]["lower"] == pytest.approx(float(s.interval.lower), rel=1e-9)
    assert row["tvb_grid"]["upper"] == pytest.approx(float(s.interval.upper), rel=1e-9)
    np.testing.assert_allclose(row["curve"]["coverage"], s.coverage, rtol=0, atol=0)


def test_the_tie_arm_and_the_paired_counts_follow_from_the_rows(quick):
    summary, out = quick
    ours, priors = rows_of(out, "ours"), rows_of(out, "priors")
    ties = summary["results"]["ties"]["tvb_grid"]
    expected = []
    for row in ours.values():
        curve = row["curve"]
        distance = np.round(np.abs(np.array(curve["coverage"]) - 0.95), 12)
        index = max(np.flatnonzero(distance == distance.min()))  # the largest ω of the closest coverage
        expected.append(curve["lower"][index] <= 0.65 <= curve["upper"][index])
    assert ties["coverage"] == pytest.approx(np.mean(expected))
    authors = rows_of(out, "authors")
    for arm, mine, method in (("priors", priors, "tvb_grid"), ("authors", authors, "tvb_grid"),
                              ("authors", authors, "tvb_sequential")):
        paired = summary["results"][arm][method]["paired"]
        assert paired["gained"] == sum(mine[r][method]["covers"] and not ours[r][method]["covers"] for r in ours)
        assert paired["lost"] == sum(ours[r][method]["covers"] and not mine[r][method]["covers"] for r in ours)


def test_a_rerun_fits_nothing(quick):
    _, out = quick
    again = gmm_tvb_ablation.run(quick=True, out=out)
    assert again["fitted_this_run"] == 0


def test_a_fine_grid_directory_is_compared_replication_by_replication(quick, tmp_path):
    _, out = quick
    fine = tmp_path / "fine"
    fine.mkdir()
    for r, row in rows_of(out, "ours").items():  # the same rows stand in for the full grid: all alike
        (fine / f"n200_r{r:04d}.json").write_text(json.dumps(row))
    summary = gmm_tvb_ablation.run(quick=True, out=out, fine=fine, arms=["ours"])
    check = summary["results"]["fine_grid_check"]
    assert check["replications"] == 2 and check["tvb_grid"]["agree"] == 2
    with pytest.raises(Exception, match="holds no rows"):
        gmm_tvb_ablation.run(quick=True, out=out, fine=tmp_path, arms=["ours"])


def test_gmm_tvb_takes_the_authors_choices_by_name(tmp_path, capsys):
    """--setting authors puts every option on the authors' side (and B = 500 outside --quick); a single option
    names one; our defaults leave the settings — the identity of stored rows — as they were."""
    ours = gmm_tvb.study_settings(False)
    assert "options" not in ours and ours["n_bootstrap"] == 100 and ours["max_iter"] == 50
    authors = gmm_tvb.study_settings(False, setting="authors")
    assert authors["n_bootstrap"] == 500 and authors["max_iter"] == 100
    assert set(authors["options"].values()) == {"authors"}
    one = gmm_tvb.study_settings(False, sides={"priors": "authors"})
    assert one["options"]["priors"] == "authors" and one["options"]["start"] == "ours"
    arguments = gmm_tvb.table_arguments(authors)
    assert arguments["priors"] == GMMPriors(scale="covariance", df=4.0)
    assert arguments["resampling"] == "per_omega" and arguments["start"] == "kmeans"
    assert (arguments["iterations"], arguments["tol"], arguments["check_every"]) == (199, 1e-4, 1)
    steps = gmm_tvb.sequential_arguments(authors)
    assert (steps["step"], steps["decay"], steps["tolerance"]) == (1.0, 0.51, 1e-3)
    assert main(["run", "gmm-tvb", "--quick", "--out", str(tmp_path / "a"), "--replications", "1", "--sizes", "200",
                 "--no-sequential", "--setting", "authors"]) == 0
    stored = json.loads((tmp_path / "a" / "summary.json").read_text())["settings"]
    assert set(stored["options"].values()) == {"authors"} and stored["n_bootstrap"] == 6  # --quick keeps its B
    assert "every option the authors' code's" in (tmp_path / "a" / "results.md").read_text()
    assert main(["run", "gmm-tvb", "--quick", "--out", str(tmp_path / "b"), "--priors", "theirs"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_the_tie_rules_read_a_curve_as_ours_and_as_the_authors_code():
    """Equally far below and above the level: ours takes the coverage above, the authors' code the larger ω."""
    curve = {"omega": [0.1, 0.5, 1.0], "coverage": [1.0, 0.96, 0.94], "lower": [0.5, 0.55, 0.6],
             "upper": [0.8, 0.75, 0.7], "point": [0.65, 0.65, 0.65]}
    ours = gmm_tvb.grid_choice(curve, gmm_tvb.OPTIONS["ties"]["ours"]["ties"])
    authors = gmm_tvb.grid_choice(curve, gmm_tvb.OPTIONS["ties"]["authors"]["ties"])
    assert (ours["omega"], ours["reached"], ours["lower"]) == (0.5, True, 0.55)
    assert (authors["omega"], authors["reached"], authors["upper"]) == (1.0, False, 0.7)


def test_our_priors_give_the_same_intervals_in_any_units_and_the_authors_do_not(tmp_path):
    """``--units 4``: the same data times 4. Our priors (set from the data's mean and covariance) give the same
    intervals of π — every ω of the curve — as the data in their own units; the authors' W₀ = cov(X) does not."""
    def row(name, *options):
        out = tmp_path / name
        assert main(["run", "gmm-tvb", "--quick", "--out", str(out), "--replications", "1", "--sizes", "200",
                     "--no-sequential", *options]) == 0
        return json.loads((out / "replications" / "n200_r0000.json").read_text())

    ours, ours_x4 = row("ours"), row("ours-x4", "--units", "4")
    for part in ("lower", "upper", "coverage"):
        np.testing.assert_allclose(ours_x4["curve"][part], ours["curve"][part], rtol=0, atol=1e-7)
    authors, authors_x4 = row("authors", "--priors", "authors"), row("authors-x4", "--priors", "authors",
                                                                     "--units", "4")
    assert np.max(np.abs(np.subtract(authors_x4["curve"]["lower"], authors["curve"]["lower"]))) > 1e-3
    stored = json.loads((tmp_path / "ours-x4" / "summary.json").read_text())["settings"]
    assert stored["units"] == 4.0 and "units" not in json.loads((tmp_path / "ours" / "summary.json").read_text())[
        "settings"]
    assert main(["run", "gmm-tvb", "--quick", "--out", str(tmp_path / "bad"), "--units", "-1"]) == 2
