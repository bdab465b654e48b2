"""`fgraph run faithful-seeds`: the quick run's files; every seed's table is built with its setting's choices and
the spread reported is that of the ω each table selects; a rerun reads the tables back."""
import json

import numpy as np
import pytest

from fgraph.models.tvb import TVBTable
from fgraph_experiments import faithful_seeds

pytest.importorskip("sklearn")


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("faithful-seeds")
    return faithful_seeds.run(quick=True, out=out), out


def test_quick_run_writes_its_files(quick):
    summary, out = quick
    for name in summary["files"]:
        assert (out / name).exists(), name
    assert json.loads((out / "summary.json").read_text())["seeds"] == 2
    assert "| π (larger weight) | authors |" in (out / "results.md").read_text()


def test_every_table_has_its_settings_choices_and_the_spread_is_of_their_selections(quick):
    summary, out = quick
    for setting, ties in (("ours", "nominal"), ("authors", "largest")):
        omegas = []
        for seed in range(2):
            table = TVBTable.load(out / "tables" / setting / f"seed{seed}")
            assert table.metadata["seed"] == seed
            assert table.n_bootstrap == faithful_seeds.QUICK_SCOPE["bootstrap"][setting]
            assert table.metadata["start"] == ("kmeans" if setting == "authors" else "reference")
            assert table.metadata["resampling"] == ("per_omega" if setting == "authors" else "common")
            omegas.append(table.select("weight[largest]", 0.95, ties=ties).omega)
        reported = summary["results"][setting]["π (larger weight)"]
        assert reported["omegas"] == pytest.approx(omegas)
        assert reported["omega"]["min"] == min(omegas) and reported["omega"]["max"] == max(omegas)
        assert reported["omega"]["median"] == pytest.approx(np.median(omegas))


def test_a_rerun_reads_the_tables_back(quick):
    """A second run reads every finished table (its files are left as they were) and reports the same."""
    summary, out = quick
    files = sorted((out / "tables").glob("*/seed*/tvb_table.*"))
    before = {path: path.read_bytes() for path in files}
    again = faithful_seeds.run(quick=True, out=out)
    assert again["results"] == summary["results"]
    assert {path: path.read_bytes() for path in files} == before and len(files) == 8
