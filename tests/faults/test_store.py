"""The results store (fgraph.store): records survive truncation at every kind of byte boundary, foreign files, an
unreadable manifest, kill -9 at every step of a write, and two or three concurrent writers — who share the work."""
import json
import os
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from fgraph.store import CorruptRecordWarning, Store, StoreError, StoreMismatchError, write_npz

CHILDREN = Path(__file__).with_name("children.py")


def run_child(job: str, **arguments) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CHILDREN), job, json.dumps(arguments)], capture_output=True,
                          text=True, timeout=300)


def arrays(i=1):
    return {"values": np.linspace(0.0, 1.0, 500) * i, "count": np.array(i), "flags": np.array([True, False])}


def test_records_read_back_as_written_and_equal_arrays_give_equal_files(tmp_path):
    store = Store(tmp_path / "s", {"data": "abc", "n": 3}, "test")
    store.put("blocks/b0.npz", arrays(2), key={"block": 0})
    store.put("rows/r0.json", {"size": 10, "coverage": [0.5, 1.0]}, key=(10, 0))
    again = Store(tmp_path / "s", {"n": 3, "data": "abc"}, "test")  # the same identity, read from the manifest
    np.testing.assert_array_equal(again.get("blocks/b0.npz", {"block": 0})["values"], arrays(2)["values"])
    assert again.get("rows/r0.json", (10, 0)) == {"size": 10, "coverage": [0.5, 1.0]}
    assert again.get("rows/r1.json", (10, 1)) is None  # not written yet: no warning
    first, second = write_npz(tmp_path / "a.npz", arrays(3)), write_npz(tmp_path / "b.npz", arrays(3))
    assert first == second and (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    with np.load(tmp_path / "a.npz", allow_pickle=False) as stored:  # plain npz, readable by numpy alone
        np.testing.assert_array_equal(stored["flags"], [True, False])


def _damaged(content: bytes, how: str) -> bytes:
    middle = len(content) // 2
    return {"empty": b"", "one byte": content[:1], "header only": content[:30], "half": content[:middle],
            "all but the last byte": content[:-1], "a flipped byte": content[:middle] + bytes([content[middle] ^ 1])
            + content[middle + 1:], "extra bytes": content + b"\0", "other content": b"{\"size\": 11}\n"}[how]


@pytest.mark.parametrize("name, value", [("blocks/b.npz", arrays()), ("rows/r.json", {"size": 10, "x": [1.5]})])
@pytest.mark.parametrize("how", ["empty", "one byte", "header only", "half", "all but the last byte",
                                 "a flipped byte", "extra bytes", "other content"])
def test_a_damaged_record_is_reported_by_name_and_never_read(tmp_path, name, value, how):
    store = Store(tmp_path, {"n": 1}, "test table")
    store.put(name, value, key="k")
    path = tmp_path / name
    path.write_bytes(_damaged(path.read_bytes(), how))
    with pytest.warns(CorruptRecordWarning, match=rf"test table: .*{Path(name).name} is truncated or altered.*"
                                                  "recomputed"):
        assert Store(tmp_path, {"n": 1}, "test table").get(name, "k") is None
    assert name not in Store(tmp_path, {"n": 1}, "test table").names()  # dropped: the next get is quiet
    store.put(name, value, key="k")  # and it is written again
    assert Store(tmp_path, {"n": 1}, "test table").get(name, "k") is not None


def test_a_missing_record_and_a_record_of_other_content_are_recomputed(tmp_path):
    store = Store(tmp_path, {"n": 1}, "test")
    store.put("blocks/b0.npz", arrays(1), key={"block": 0, "cells": np.arange(4)})
    store.put("blocks/b1.npz", arrays(2), key={"block": 1})
    with pytest.warns(CorruptRecordWarning, match="b0.npz holds other results than the ones asked for"):
        assert store.get("blocks/b0.npz", {"block": 0, "cells": np.arange(5)}) is None
    (tmp_path / "blocks" / "b1.npz").unlink()
    with pytest.warns(CorruptRecordWarning, match="b1.npz is listed in the manifest but missing"):
        assert store.get("blocks/b1.npz", {"block": 1}) is None
    # a file no manifest lists (copied in from elsewhere) is simply not a record
    write_npz(tmp_path / "blocks" / "b2.npz", arrays(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert store.get("blocks/b2.npz", {"block": 2}) is None


@pytest.mark.parametrize("content", [b"", b"not json", b"{\"format\": \"fgraph-store\"", b"[1, 2]",
                                     b"{\"format\": \"other\", \"identity\": {}, \"records\": {}}"])
def test_an_unreadable_manifest_is_set_aside_and_its_records_recomputed(tmp_path, content):
    Store(tmp_path, {"n": 1}, "test").put("rows/r.json", {"a": 1}, key=1)
    (tmp_path / "store.json").write_bytes(content)
    with pytest.warns(CorruptRecordWarning, match=r"the manifest .*store.json is unreadable.*recomputed"):
        store = Store(tmp_path, {"n": 1}, "test")
    assert store.get("rows/r.json", 1) is None
    assert list(tmp_path.glob("store.json.corrupt-*"))  # kept for inspection, never read
    store.put("rows/r.json", {"a": 1}, key=1)
    assert Store(tmp_path, {"n": 1}, "test").get("rows/r.json", 1) == {"a": 1}


def test_a_directory_of_other_settings_is_refused_naming_what_differs(tmp_path):
    Store(tmp_path, {"grid": [0.5, 1.0], "seed": 0, "n": 3}, "TVB table")
    with pytest.raises(StoreMismatchError, match=r"TVB table: .* other data or settings \(differing: grid, seed\)"):
        Store(tmp_path, {"grid": [0.4, 1.0], "seed": 1, "n": 3}, "TVB table")


def test_a_path_that_cannot_be_a_directory_is_named(tmp_path):
    (tmp_path / "file").write_text("x")
    for path in (tmp_path / "file", tmp_path / "file" / "below"):
        with pytest.raises(StoreError, match=r"cannot be a directory \(a file is in the way\)"):
            Store(path, {}, "results")


@pytest.mark.parametrize("function", ["fsync", "replace"])
@pytest.mark.parametrize("call", [1, 2, 3, 4, 5, 6, 7])
def test_a_writer_killed_at_any_step_leaves_only_whole_records(tmp_path, function, call):
    """kill -9 at the k-th fsync or rename: every record the manifest lists reads back whole, and a new writer
    completes the rest."""
    log = tmp_path / "log"
    killed = run_child("records", path=str(tmp_path / "s"), count=4, log=str(log), kill_at=[function, call])
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing on disk is damaged: nothing to report
        store = Store(tmp_path / "s", {"job": "records"}, "records")
        for name in store.names():
            index = int(name[-7:-4])
            np.testing.assert_array_equal(store.get(name, {"i": index})["values"], np.arange(1000.0) * index)
    finished = run_child("records", path=str(tmp_path / "s"), count=4, log=str(log))
    assert finished.returncode == 0, finished.stderr
    store = Store(tmp_path / "s", {"job": "records"}, "records")
    assert store.names() == [f"records/r{i:03d}.npz" for i in range(4)]
    assert not list((tmp_path / "s").rglob("*.tmp"))  # the dead writer's temporary files are not records


def test_concurrent_writers_share_the_work_and_agree(tmp_path):
    """Three processes compute the same 12 records at once: each record is computed exactly once."""
    log = tmp_path / "log"
    arguments = json.dumps({"path": str(tmp_path / "s"), "count": 12, "log": str(log)})
    children = [subprocess.Popen([sys.executable, str(CHILDREN), "records", arguments], stderr=subprocess.PIPE,
                                 text=True) for _ in range(3)]
    for child in children:
        assert child.wait(timeout=300) == 0, child.stderr.read()
    computed = [int(line.split()[0]) for line in log.read_text().splitlines()]
    assert sorted(computed) == list(range(12))
    store = Store(tmp_path / "s", {"job": "records"}, "records")
    for i in range(12):
        np.testing.assert_array_equal(store.get(f"records/r{i:03d}.npz", {"i": i})["values"], np.arange(1000.0) * i)


def test_a_claim_lapses_when_its_holder_is_killed(tmp_path):
    child = subprocess.Popen([sys.executable, str(CHILDREN), "hold-claim", json.dumps({"path": str(tmp_path)})],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "claimed"
        store = Store(tmp_path, {"job": "records"}, "records")
        assert store.claim("records/r000.npz") is None  # held by a live process
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    claim = store.claim("records/r000.npz")
    assert claim is not None
    claim.release()
    value = store.compute_once("records/r000.npz", {"i": 0}, lambda: {"values": np.zeros(3)})
    np.testing.assert_array_equal(value["values"], np.zeros(3))
    assert os.path.exists(tmp_path / "records" / "r000.npz")


def test_a_file_written_elsewhere_is_adopted_as_it_is_and_garbage_is_refused(tmp_path):
    (tmp_path / "rows").mkdir()
    (tmp_path / "rows" / "r0.json").write_text('{"covers": true}')
    (tmp_path / "rows" / "r1.json").write_text('{"covers": tr')
    store = Store(tmp_path, {"n": 1}, "study")
    store.adopt("rows/r0.json", key=[100, 0])
    assert Store(tmp_path, {"n": 1}, "study").get("rows/r0.json", [100, 0]) == {"covers": True}
    with pytest.raises(StoreError, match=r"r1.json cannot be adopted as a record \(not readable JSON"):
        store.adopt("rows/r1.json", key=[100, 1])
    assert store.names() == ["rows/r0.json"]


def test_a_packed_store_unpacks_to_the_same_records_and_a_damaged_pack_is_refused(tmp_path):
    from fgraph.store import pack, unpack

    store = Store(tmp_path / "s", {"n": 1}, "study")
    for i in range(5):
        store.put(f"rows/r{i}.json", {"i": i, "x": [0.5 * i]}, key=i)
    store.put("blocks/b.npz", arrays(2), key="b")
    packed = pack(tmp_path / "s", tmp_path / "study.npz")
    again = Store(unpack(packed, tmp_path / "u"), {"n": 1}, "study")
    assert again.names() == store.names()
    assert [again.get(f"rows/r{i}.json", i) for i in range(5)] == [{"i": i, "x": [0.5 * i]} for i in range(5)]
    np.testing.assert_array_equal(again.get("blocks/b.npz", "b")["values"], arrays(2)["values"])
    with pytest.raises(StoreError, match="already holds a store"):
        unpack(packed, tmp_path / "u")
    with np.load(packed) as stored:  # one byte of one record altered inside a well-formed pack
        members = {key: stored[key].copy() for key in stored.files}
    members["records"][5] ^= 1
    np.savez_compressed(tmp_path / "altered.npz", **members)
    with pytest.raises(StoreError, match="differs from its manifest entry"):
        unpack(tmp_path / "altered.npz", tmp_path / "w")
    packed.write_bytes(packed.read_bytes()[:-50])
    with pytest.raises(StoreError, match="is not a packed store"):
        unpack(packed, tmp_path / "v")


def test_a_report_is_replaced_whole_and_leaves_no_temporary_file(tmp_path):
    from fgraph.store import write_text

    path = tmp_path / "results.md"
    write_text(path, "# first\n")
    write_text(path, "# second, longer\n")
    assert path.read_text() == "# second, longer\n" and sorted(p.name for p in tmp_path.iterdir()) == ["results.md"]


def test_a_figure_is_written_whole_and_a_failed_drawing_leaves_the_previous_file(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fgraph.store import write_figure

    figure, axes = plt.subplots()
    axes.plot([0, 1], [1, 0])
    path = tmp_path / "figure.png"
    write_figure(path, figure, dpi=50)
    first = path.read_bytes()
    assert first.startswith(b"\x89PNG") and sorted(p.name for p in tmp_path.iterdir()) == ["figure.png"]

    def dies_half_way(target, **options):  # writes the start of a picture where it is told to, then dies
        if hasattr(target, "write"):
            target.write(b"\x89PN")
        else:
            Path(target).write_bytes(b"\x89PN")
        raise RuntimeError("killed while drawing")

    figure.savefig = dies_half_way
    with pytest.raises(RuntimeError, match="killed while drawing"):
        write_figure(path, figure)
    assert path.read_bytes() == first and sorted(p.name for p in tmp_path.iterdir()) == ["figure.png"]
    write_figure(tmp_path / "figure.svg", plt.figure())
    assert b"<svg" in (tmp_path / "figure.svg").read_bytes()
    plt.close("all")
