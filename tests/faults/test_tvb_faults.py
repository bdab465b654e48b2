"""TVB tables on disk (the GMM's and the BMLR's) under faults: a finished table truncated or overwritten, an
interrupted build with a damaged block or start file, a build killed with SIGKILL at any write, three builders of
one directory at once, and a resumed build of another grid. Every case ends with the table an uninterrupted build
gives, to the last digit, or with a named error — never a zipfile or json traceback, never a foreign cell."""
import json
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fgraph.models import tvb
from fgraph.models.tvb import BMLRTVBTable
from fgraph.store import CorruptRecordWarning, StoreError
from tests.faults.children import build_table

pytest.importorskip("sklearn")

CHILDREN = Path(__file__).with_name("children.py")
TABLES = {"gmm": tvb.TVBTable, "bmlr": BMLRTVBTable}


def run_child(**arguments) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CHILDREN), "table", json.dumps(arguments)], capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def uninterrupted():
    return {kind: build_table(kind, None) for kind in TABLES}


def assert_same_table(table, expected):
    for key, value in expected._arrays().items():
        got = table.start[key[6:]] if key.startswith("start_") else getattr(table, key)
        np.testing.assert_array_equal(got, value, err_msg=key)


def killed_build(kind: str, path: Path, function: str, call: int) -> None:
    result = run_child(kind=kind, path=str(path), kill_at=[function, call])
    assert result.returncode in (0, -signal.SIGKILL), result.stderr


@pytest.mark.parametrize("kind", TABLES)
@pytest.mark.parametrize("damage", ["truncate npz", "empty npz", "delete npz", "garbage json", "truncate json"])
def test_a_damaged_finished_table_is_named_on_load_and_rebuilt_by_its_builder(tmp_path, uninterrupted, kind, damage):
    build_table(kind, tmp_path)
    npz, settings_file = tmp_path / "tvb_table.npz", tmp_path / "tvb_table.json"
    if damage == "truncate npz":
        npz.write_bytes(npz.read_bytes()[:-100])
    elif damage == "empty npz":
        npz.write_bytes(b"")
    elif damage == "delete npz":
        npz.unlink()
    elif damage == "garbage json":
        settings_file.write_text("this is not json")
    else:
        settings_file.write_bytes(settings_file.read_bytes()[:40])
    culprit = "tvb_table.json" if "json" in damage else "tvb_table.npz"
    with pytest.raises(tvb.CorruptTableError, match=rf"{culprit} .*(truncated|missing|unreadable).*rebuilds it"):
        TABLES[kind].load(tmp_path)
    with pytest.warns(CorruptRecordWarning, match=rf"{culprit}.*rebuilding it"):
        rebuilt = build_table(kind, tmp_path)
    assert_same_table(rebuilt, uninterrupted[kind])
    assert_same_table(TABLES[kind].load(tmp_path), uninterrupted[kind])


@pytest.mark.parametrize("kind", TABLES)
@pytest.mark.parametrize("victim", ["start.npz", "blocks/block_00000.npz", "blocks/block_00001.npz", "store.json"])
def test_an_interrupted_build_with_a_damaged_file_resumes_to_the_uninterrupted_table(tmp_path, uninterrupted, kind,
                                                                                  victim):
    # renames: the new manifest, then start, block 0, block 1 each with its manifest; killed before the 8th
    killed_build(kind, tmp_path, "replace", 8)
    assert not (tmp_path / "tvb_table.json").exists()
    path = tmp_path / victim
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    with pytest.warns(CorruptRecordWarning, match=Path(victim).name):
        resumed = build_table(kind, tmp_path)
    assert_same_table(resumed, uninterrupted[kind])


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(function=st.sampled_from(["replace", "fsync"]), call=st.integers(1, 16), kind=st.sampled_from(sorted(TABLES)))
def test_a_build_killed_at_any_write_resumes_to_the_uninterrupted_table(tmp_path_factory, uninterrupted, function,
                                                                        call, kind):
    path = tmp_path_factory.mktemp("killed")
    killed_build(kind, path, function, call)
    resumed = build_table(kind, path)
    assert_same_table(resumed, uninterrupted[kind])
    assert_same_table(TABLES[kind].load(path), uninterrupted[kind])


@pytest.mark.parametrize("kind", TABLES)
def test_three_builders_of_one_directory_share_it_and_agree(tmp_path, uninterrupted, kind):
    arguments = json.dumps({"kind": kind, "path": str(tmp_path)})
    children = [subprocess.Popen([sys.executable, str(CHILDREN), "table", arguments], stderr=subprocess.PIPE,
                                 text=True) for _ in range(3)]
    for child in children:
        assert child.wait(timeout=600) == 0, child.stderr.read()
    assert_same_table(TABLES[kind].load(tmp_path), uninterrupted[kind])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store.json", "store.lock", "tvb_table.json",
                                                         "tvb_table.npz"]


def test_a_resumed_build_of_another_grid_never_takes_the_first_grids_blocks(tmp_path):
    killed_build("gmm", tmp_path, "replace", 8)
    with pytest.raises(tvb.TableMismatchError, match=r"differing: grid"):
        build_table("gmm", tmp_path, grid=[0.4, 1.0])
    # with the manifest gone too, the first grid's blocks are files no manifest vouches for: recomputed
    (tmp_path / "store.json").unlink()
    table = build_table("gmm", tmp_path, grid=[0.4, 1.0])
    assert_same_table(table, build_table("gmm", None, grid=[0.4, 1.0]))


def test_a_finished_table_of_other_settings_is_refused(tmp_path):
    build_table("gmm", tmp_path)
    (tmp_path / "store.json").unlink()  # the finished table's own settings still say what it is
    with pytest.raises(tvb.TableMismatchError, match=r"differing: n_bootstrap"):
        build_table("gmm", tmp_path, n_bootstrap=4)


def test_loading_a_directory_without_a_table_says_how_to_build_one(tmp_path):
    with pytest.raises(tvb.TVBError, match=r"holds no TVB table.*build_tvb_table with this path builds one"):
        tvb.TVBTable.load(tmp_path)


@pytest.mark.parametrize("bad", [dict(grid=[]), dict(grid=[0.0, 1.0]), dict(n_bootstrap=0), dict(block_size=0),
                                 dict(seed="a")])
def test_bad_settings_into_a_used_directory_are_named_and_lose_nothing(tmp_path, uninterrupted, bad):
    build_table("gmm", tmp_path)
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir() if path.is_file()}
    with pytest.raises(tvb.TVBError):
        build_table("gmm", tmp_path, **bad)
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir() if path.is_file()} == before
    assert_same_table(tvb.TVBTable.load(tmp_path), uninterrupted["gmm"])


def test_a_table_path_below_a_file_is_named(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError, match=r"file.*cannot be a directory \(a file is in the way\)"):
        build_table("gmm", tmp_path / "file" / "table")
