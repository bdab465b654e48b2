"""A directory of results that survives kill -9, truncation and concurrent writers.

Everything long that fgraph writes to disk (the TVB tables' blocks, the experiments' per-replication rows) goes
through a :class:`Store`: a directory of **records** — npz files of arrays or JSON files of plain values, never
pickles — with a **manifest** ``store.json`` that says what the directory is for and which records are finished::

    {"format": "fgraph-store", "version": 1,
     "identity": {...},                               # what every record depends on (data hash, settings)
     "records": {"blocks/block_00003.npz": {"sha256": "...", "key": "..."}, ...}}

**A record is read only if the manifest vouches for it.** Its bytes must hash (SHA-256) to the manifest's entry and
its ``key`` — the hash of the caller's description of what the record holds (the cells of a block, the size and
number of a replication) — must equal the key asked for. A truncated or altered record, a record of another build
copied in, or a file no manifest lists is reported by name (:class:`CorruptRecordWarning`) and recomputed; it is
never read. A manifest that is not readable JSON is reported the same way and set aside; its records are then
unlisted and recomputed.

**Crash safety.** A record is written to a temporary file with a name unique to its writer (process id and a random
part), flushed to disk (``fsync``) and moved over its name with ``os.replace``, which is atomic; only then is it
entered in the manifest, which is rewritten the same way. A writer killed at any instant leaves the previous state
or the new one: at worst a finished record that the manifest does not list yet, which is recomputed.

**Concurrent writers share the work.** The manifest is read and rewritten under an exclusive lock
(``fcntl.flock`` on ``store.lock``), and the record's ``os.replace`` happens under the same lock, so the manifest
always describes the files beside it. Before computing a record a writer *claims* it (a non-blocking ``flock`` on
``claims/<record>.lock``): a record claimed by another live process is left to it, and waited for
(:meth:`Store.wait`) once there is nothing else to do. The kernel drops the locks of a process that dies, even by
kill -9, so a claim never outlives its writer and a crashed writer's records are simply computed by the next one.
Locks need a POSIX system (Linux, macOS), and a store is written by the processes of one machine (a Dask
cluster's workers hand their results back to the process that writes them); the temporary files of writers that
died are swept by process id when a store is opened.

**Identity.** A store opened with another ``identity`` than its manifest's raises :class:`StoreMismatchError`
naming the keys that differ: records of other data or settings are never mixed with these.

Deterministic bytes: npz records are written with fixed timestamps (:func:`write_npz`), so the same arrays give the
same file and the same hash whichever process writes them.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import os
import secrets
import shutil
import warnings
import zipfile
from pathlib import Path

import numpy as np

from fgraph.errors import FgraphError

__all__ = ["write_figure", "Store", "Claim", "StoreError", "StoreMismatchError", "CorruptRecordWarning", "prepare_directory",
           "directory_lock", "write_npz", "write_json", "write_text", "read_npz", "key_of", "pack", "unpack"]

FORMAT, VERSION = "fgraph-store", 1
MANIFEST, LOCK, CLAIMS = "store.json", "store.lock", "claims"


class StoreError(FgraphError, OSError):
    """A results directory cannot be used: not a directory, not writable, or a record that cannot be written."""


class StoreMismatchError(FgraphError, ValueError):
    """The directory holds records of other data or settings than the ones asked for."""


class CorruptRecordWarning(UserWarning):
    """A record (or the manifest) on disk was truncated, altered or is foreign: it is ignored and recomputed."""


# ------------------------------------------------------------------------------------------- atomic files
def _fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (the directory entry itself is flushed)."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _temporary_name(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def _write_temporary(path: Path, content: bytes) -> Path:
    """``content`` in a temporary file beside ``path``, unique to this writer and flushed to disk; its path (the
    caller renames it over ``path``, or deletes it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = _temporary_name(path)
    try:
        with open(temporary, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return temporary


def _write_bytes_atomically(path: Path, content: bytes) -> None:
    """``content`` at ``path``, whole or not at all: a temporary file unique to this writer, fsynced, then
    ``os.replace``."""
    temporary = _write_temporary(path, content)
    try:
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    _fsync_directory(path.parent)


def _npz_bytes(arrays: dict) -> bytes:
    """The npz file of ``arrays`` (as ``np.savez`` writes it, uncompressed) with fixed timestamps, so that equal
    arrays give equal bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, value in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            with archive.open(info, "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)
    return buffer.getvalue()


def _plain(value):
    """numpy scalars and arrays as the plain values JSON holds."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} cannot be written as JSON")


def _json_bytes(content) -> bytes:
    return (json.dumps(content, indent=1, allow_nan=True, default=_plain) + "\n").encode()


def write_npz(path, arrays: dict) -> str:
    """Write ``arrays`` (name → array, no object arrays) to the npz file ``path`` atomically; returns the SHA-256 of
    the bytes written."""
    content = _npz_bytes(arrays)
    _write_bytes_atomically(Path(path), content)
    return hashlib.sha256(content).hexdigest()


def write_json(path, content) -> str:
    """Write ``content`` (plain JSON values) to ``path`` atomically; returns the SHA-256 of the bytes written."""
    content = _json_bytes(content)
    _write_bytes_atomically(Path(path), content)
    return hashlib.sha256(content).hexdigest()


def write_text(path, text: str) -> str:
    """Write ``text`` (UTF-8) to ``path`` atomically (a report: ``results.md``); returns the SHA-256 of the bytes."""
    content = text.encode()
    _write_bytes_atomically(Path(path), content)
    return hashlib.sha256(content).hexdigest()


def write_figure(path, figure, dpi: int = 100) -> str:
    """Save a matplotlib ``figure`` to ``path`` atomically, in the format its suffix names (``.png``, ``.svg``,
    ``.pdf``): drawn into memory first, so a run killed while saving leaves the previous file or none, never half a
    picture; returns the SHA-256 of the bytes written."""
    path = Path(path)
    buffer = io.BytesIO()
    figure.savefig(buffer, format=path.suffix.lstrip(".") or "png", dpi=dpi)
    content = buffer.getvalue()
    _write_bytes_atomically(path, content)
    return hashlib.sha256(content).hexdigest()


def read_npz(content: bytes) -> dict:
    """The arrays of an npz file's bytes (no pickles); ``ValueError`` if they are not a readable npz file."""
    try:
        with np.load(io.BytesIO(content), allow_pickle=False) as stored:
            return {key: stored[key] for key in stored.files}
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, KeyError) as error:
        raise ValueError(f"not a readable npz file ({type(error).__name__}: {error})") from None


def _decode(name: str, content: bytes):
    """A record's value from its bytes: arrays for ``.npz``, plain values for ``.json``."""
    if name.endswith(".npz"):
        return read_npz(content)
    try:
        return json.loads(content.decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"not readable JSON ({type(error).__name__}: {error})") from None


def _encode(name: str, value) -> bytes:
    if name.endswith(".npz"):
        return _npz_bytes(value)
    if name.endswith(".json"):
        return _json_bytes(value)
    raise StoreError(f"a record's name must end in .npz or .json, got {name!r}")


def key_of(description) -> str:
    """The key of a record: the SHA-256 of a description of what it holds (plain values and arrays, in any
    nesting), independent of dict order."""
    digest = hashlib.sha256()

    def feed(value) -> None:
        if isinstance(value, dict):
            digest.update(b"{")
            for key in sorted(value):
                feed(str(key))
                feed(value[key])
            digest.update(b"}")
        elif isinstance(value, (list, tuple)):
            digest.update(b"[")
            for item in value:
                feed(item)
            digest.update(b"]")
        elif isinstance(value, np.ndarray):
            array = np.ascontiguousarray(value)
            digest.update(f"array{array.dtype.str}{array.shape}".encode())
            digest.update(array.tobytes())
        else:
            if isinstance(value, np.generic):
                value = value.item()
            digest.update(repr(value).encode())

    feed(description)
    return digest.hexdigest()


# ------------------------------------------------------------------------------------------------- the store
def prepare_directory(directory, label: str = "results") -> Path:
    """``directory`` as a Path, created if missing; a path that cannot be a writable directory is a named
    :class:`StoreError` (a file in the way, no permission)."""
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise StoreError(f"{label}: {directory} cannot be a directory (a file is in the way); give a directory "
                         "path") from None
    except PermissionError:
        raise StoreError(f"{label}: cannot create {directory} (permission denied); give a writable directory") \
            from None
    if not os.access(directory, os.W_OK | os.X_OK):
        raise StoreError(f"{label}: {directory} is not writable; give a writable directory")
    return directory


@contextlib.contextmanager
def directory_lock(directory):
    """Hold the exclusive lock of a results directory (``store.lock``): its manifest, its records' renames and
    its finished results change only under it. The kernel drops it if the holder dies."""
    descriptor = os.open(Path(directory) / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


class Claim:
    """An exclusive claim on computing one record, held until :meth:`release` (or the process ends)."""

    def __init__(self, descriptor: int):
        self._descriptor = descriptor

    def release(self) -> None:
        if self._descriptor is not None:
            os.close(self._descriptor)  # closing drops the flock
            self._descriptor = None

    def __enter__(self) -> "Claim":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


class Store:
    """A results directory (module docstring): records with a manifest, atomic writes, claims.

    directory : created if missing.
    identity : plain JSON values saying what every record depends on; a directory whose manifest holds another
        identity is a :class:`StoreMismatchError` (``mismatch_error``: a subclass to raise instead) naming the keys
        that differ.
    label : how messages name the directory's contents ("TVB table", "gmm-tvb replications").
    """

    def __init__(self, directory, identity: dict, label: str = "results",
                 mismatch_error: type = StoreMismatchError):
        self.directory = prepare_directory(directory, label)
        self.label = label
        self.identity = json.loads(json.dumps(identity))  # as it reads back from the manifest
        self._mismatch_error = mismatch_error
        with self.locked():
            records = self._read_manifest()
            if records is None:
                self._records = {}
                self._write_manifest()
            else:
                self._records = records
            self._sweep_temporaries()

    def _sweep_temporaries(self) -> None:
        """Delete the temporary files of writers that died mid-write (their process no longer exists)."""
        for path in self.directory.rglob(".*.tmp"):
            try:
                pid = int(path.name.rsplit(".", 3)[-3])
            except (ValueError, IndexError):
                continue
            if pid != os.getpid() and not _alive(pid):
                path.unlink(missing_ok=True)

    # ------------------------------------------------------------------------------------------ manifest
    def locked(self):
        """Hold the store's exclusive lock (:func:`directory_lock`)."""
        return directory_lock(self.directory)

    def _read_manifest(self) -> dict | None:
        """The manifest's records (None when there is no manifest yet); another identity raises; an unreadable
        manifest is reported, set aside, and read as none."""
        path = self.directory / MANIFEST
        try:
            content = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            manifest = json.loads(content.decode())
            if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
                raise ValueError("not an fgraph store manifest")
            identity, records = manifest["identity"], manifest["records"]
            if not isinstance(records, dict):
                raise ValueError("its records are not a mapping")
        except (UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
            aside = path.with_name(f"{MANIFEST}.corrupt-{secrets.token_hex(3)}")
            os.replace(path, aside)
            warnings.warn(f"{self.label}: the manifest {path} is unreadable ({error}); set aside as {aside.name}, "
                          "and every record of the directory will be recomputed", CorruptRecordWarning, stacklevel=4)
            return None
        if identity != self.identity:
            changed = sorted(key for key in set(identity) | set(self.identity)
                             if identity.get(key) != self.identity.get(key))
            raise self._mismatch_error(
                f"{self.label}: {self.directory} holds results of other data or settings (differing: "
                f"{', '.join(changed) or 'the format'}); give another directory, or delete this one to start again")
        return records

    def _write_manifest(self) -> None:
        write_json(self.directory / MANIFEST, {"format": FORMAT, "version": VERSION, "identity": self.identity,
                                               "records": self._records})

    def refresh(self) -> None:
        """Read the manifest again (other writers may have added records)."""
        with self.locked():
            records = self._read_manifest()
            self._records = {} if records is None else records

    def names(self) -> list:
        """The records the manifest lists, sorted."""
        return sorted(self._records)

    # ----------------------------------------------------------------------------------------------- records
    def get(self, name: str, key=None):
        """The record ``name`` (arrays for ``.npz``, plain values for ``.json``), or None if it is not finished.

        ``key``: the description of what the record must hold (:func:`key_of`); a record that holds something else
        is foreign. A record the manifest does not list, that is missing, truncated, altered or foreign is
        reported by name (:class:`CorruptRecordWarning`, except a record simply not written yet), dropped from the
        manifest, and None is returned, so that the caller recomputes it."""
        entry = self._records.get(name)
        if entry is None:
            return None
        path = self.directory / name
        problem = None
        try:
            content = path.read_bytes()
        except FileNotFoundError:
            content, problem = None, "is listed in the manifest but missing"
        if content is not None:
            if hashlib.sha256(content).hexdigest() != entry.get("sha256"):
                problem = "is truncated or altered (its content hash differs from the manifest's)"
            elif key is not None and entry.get("key") != key_of(key):
                problem = "holds other results than the ones asked for (its key differs)"
            else:
                try:
                    return _decode(name, content)
                except ValueError as error:
                    problem = f"cannot be read ({error})"
        warnings.warn(f"{self.label}: {path} {problem}; it is ignored and recomputed", CorruptRecordWarning,
                      stacklevel=2)
        self._forget(name)
        return None

    def put(self, name: str, value, key=None):
        """Write the record ``name`` (``value``: arrays for ``.npz``, JSON values — numpy scalars and arrays
        converted — for ``.json``) and enter it in the manifest with its content hash and ``key``. Returns the value
        as it reads back (a JSON record decoded again), so that a fresh and a resumed run see the same form."""
        content = _encode(name, value)
        path = self.directory / name
        temporary = None
        try:
            temporary = _write_temporary(path, content)  # the slow part, outside the lock
            with self.locked():
                records = self._read_manifest()
                self._records = {} if records is None else records
                os.replace(temporary, path)
                _fsync_directory(path.parent)
                self._records[name] = {"sha256": hashlib.sha256(content).hexdigest(),
                                       "key": None if key is None else key_of(key)}
                self._write_manifest()
        except OSError as error:
            raise StoreError(f"{self.label}: cannot write {path} ({error.strerror or error}); check the free space "
                             "and permissions of the directory") from None
        finally:
            if temporary is not None:
                temporary.unlink(missing_ok=True)
        return value if name.endswith(".npz") else _decode(name, content)

    def adopt(self, name: str, key=None) -> None:
        """Enter a file already in the directory as the record ``name`` (its bytes as they are: results written
        elsewhere, or before the directory had a manifest); ``StoreError`` if it is not a readable record."""
        path = self.directory / name
        try:
            content = path.read_bytes()
            _decode(name, content)
        except (OSError, ValueError) as error:
            raise StoreError(f"{self.label}: {path} cannot be adopted as a record ({error})") from None
        with self.locked():
            records = self._read_manifest()
            self._records = {} if records is None else records
            self._records[name] = {"sha256": hashlib.sha256(content).hexdigest(),
                                   "key": None if key is None else key_of(key)}
            self._write_manifest()

    def remove(self, names) -> None:
        """Drop records from the manifest and delete their files (a finished result that replaces them)."""
        with self.locked():
            records = self._read_manifest()
            self._records = {} if records is None else records
            for name in names:
                self._records.pop(name, None)
            self._write_manifest()
            for name in names:
                (self.directory / name).unlink(missing_ok=True)
            for folder in sorted({(self.directory / name).parent for name in names}, key=lambda p: -len(p.parts)):
                if folder != self.directory:
                    try:
                        folder.rmdir()  # only when emptied
                    except OSError:
                        pass

    def _forget(self, name: str) -> None:
        with self.locked():
            records = self._read_manifest()
            self._records = {} if records is None else records
            if self._records.pop(name, None) is not None:
                self._write_manifest()

    # ------------------------------------------------------------------------------------------------ claims
    def _claim_path(self, name: str) -> Path:
        return self.directory / CLAIMS / (name.replace("/", "__") + ".lock")

    def claim(self, name: str) -> Claim | None:
        """A :class:`Claim` on computing ``name``, or None if another live process holds one."""
        path = self._claim_path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            return None
        return Claim(descriptor)

    def wait(self, name: str) -> None:
        """Block until no process holds a claim on ``name`` (it finished, or died), then read the manifest again."""
        path = self._claim_path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
        finally:
            os.close(descriptor)
        self.refresh()

    def compute_once(self, name: str, key, compute):
        """The record ``name``: read if finished, else computed by ``compute()`` and written — by exactly one of
        the processes that ask for it at once (the others wait for it and read it)."""
        while True:
            value = self.get(name, key)
            if value is not None:
                return value
            claim = self.claim(name)
            if claim is None:
                self.wait(name)
                continue
            with claim:
                self.refresh()
                value = self.get(name, key)
                if value is None:
                    value = self.put(name, compute(), key)
                return value

    def fill(self, wanted: dict, execute, on_value=None, stop=None) -> dict | None:
        """Every record of ``wanted`` ({name: key}), read when finished and computed when not — many at once, shared
        with any other process filling the same store: ``execute(names)`` computes the records this process has
        claimed and yields (name, value) as each finishes (in this process, a pool, a cluster); each is written at
        once. Records claimed by another live process are waited for once nothing else is left (if it dies, its
        claims lapse and they are computed here). ``on_value(name, value, computed)`` is called for every record
        (a progress bar); ``stop()``, asked between rounds, ends the filling early (returns None), e.g. when
        another process has finished the whole result. Returns {name: value}."""
        results, todo = {}, list(wanted)
        while todo:
            self.refresh()
            for name in todo:
                value = self.get(name, wanted[name])
                if value is not None:
                    results[name] = value
                    if on_value is not None:
                        on_value(name, value, False)
            todo = [name for name in todo if name not in results]
            if not todo:
                break
            if stop is not None and stop():
                return None
            claims = {name: claim for name in todo if (claim := self.claim(name)) is not None}
            if not claims:  # every record left is being computed by another process
                self.wait(todo[0])
                continue
            try:
                for name, value in execute(list(claims)):
                    results[name] = self.put(name, value, wanted[name])
                    claims.pop(name).release()
                    if on_value is not None:
                        on_value(name, results[name], True)
            finally:
                for claim in claims.values():
                    claim.release()
            todo = [name for name in todo if name not in results]
        return results

    def clear_claims(self) -> None:
        """Delete the claim files (after the directory's work is finished; a live claim is unaffected)."""
        shutil.rmtree(self.directory / CLAIMS, ignore_errors=True)


# ------------------------------------------------------------------------------------------- one file a store
def pack(directory, path) -> Path:
    """The records of the store in ``directory`` and its manifest as one compressed npz file ``path``: the
    records' bytes as they are (so their hashes still hold), one after the other in one array ``records`` (so
    that deflate finds what thousands of small records share), ``index`` [[name, start, length], ...] and
    ``manifest`` as JSON bytes. Only records the manifest lists, each verified first; returns ``path``."""
    directory = Path(directory)
    try:
        manifest = json.loads((directory / MANIFEST).read_text())
        records = manifest["records"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise StoreError(f"pack: {directory} holds no readable store manifest ({error})") from None
    contents, index, start = [], [], 0
    for name, entry in sorted(records.items()):
        content = (directory / name).read_bytes()
        if hashlib.sha256(content).hexdigest() != entry.get("sha256"):
            raise StoreError(f"pack: {directory / name} differs from its manifest entry; it would not unpack")
        contents.append(content)
        index.append([name, start, len(content)])
        start += len(content)
    as_bytes = lambda content: np.frombuffer(content, dtype=np.uint8)  # noqa: E731
    buffer = io.BytesIO()
    np.savez_compressed(buffer, manifest=as_bytes(_json_bytes(manifest)), index=as_bytes(_json_bytes(index)),
                        records=as_bytes(b"".join(contents)))
    _write_bytes_atomically(Path(path), buffer.getvalue())
    return Path(path)


def unpack(path, directory) -> Path:
    """The store packed by :func:`pack` written out into ``directory`` (created; it must hold no other store):
    every record checked against the manifest's hash, then the manifest; a resumable run reads it as it left
    it. Returns ``directory``."""
    path, directory = Path(path), Path(directory)
    try:
        with np.load(path, allow_pickle=False) as packed:
            manifest = json.loads(packed["manifest"].tobytes().decode())
            index = json.loads(packed["index"].tobytes().decode())
            blob = packed["records"].tobytes()
        records = manifest["records"]
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, UnicodeDecodeError) as error:
        raise StoreError(f"unpack: {path} is not a packed store ({type(error).__name__}: {error})") from None
    directory = prepare_directory(directory, "unpack")
    if (directory / MANIFEST).exists():
        raise StoreError(f"unpack: {directory} already holds a store; unpack into a new directory")
    for name, start, length in index:
        content = blob[start:start + length]
        if hashlib.sha256(content).hexdigest() != records.get(name, {}).get("sha256"):
            raise StoreError(f"unpack: the record {name} of {path} differs from its manifest entry")
        _write_bytes_atomically(directory / name, content)
    _write_bytes_atomically(directory / MANIFEST, _json_bytes(manifest))
    return directory


def _main(argv=None) -> int:
    """``python -m fgraph.store pack DIR FILE.npz`` / ``unpack FILE.npz DIR``."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m fgraph.store",
                                     description="Pack a results store into one npz file, or unpack one.")
    commands = parser.add_subparsers(dest="command", required=True)
    packing = commands.add_parser("pack", help="the store in DIR as one compressed npz FILE")
    packing.add_argument("directory", metavar="DIR")
    packing.add_argument("file", metavar="FILE")
    unpacking = commands.add_parser("unpack", help="a packed FILE written out into DIR (a new directory)")
    unpacking.add_argument("file", metavar="FILE")
    unpacking.add_argument("directory", metavar="DIR")
    arguments = parser.parse_args(argv)
    try:
        if arguments.command == "pack":
            pack(arguments.directory, arguments.file)
        else:
            unpack(arguments.file, arguments.directory)
    except StoreError as error:
        print(f"fgraph.store: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())

