"""Programs the fault tests run as separate processes (``python tests/faults/children.py <job> <json arguments>``):
writers of a store and builders of TVB tables, optionally killed with SIGKILL at the k-th call of ``os.replace`` or
``os.fsync`` — the two steps of an atomic write — so that a test can stop a writer at any point of it."""
from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402


def kill_at(function_name: str, call: int) -> None:
    """SIGKILL this process at the ``call``-th (1-based) call of ``os.<function_name>``, before it runs."""
    original = getattr(os, function_name)
    count = [0]

    def dying(*arguments, **keywords):
        count[0] += 1
        if count[0] == call:
            os.kill(os.getpid(), signal.SIGKILL)
        return original(*arguments, **keywords)

    setattr(os, function_name, dying)


def two_clusters(N=40, seed=0):
    rng = np.random.default_rng(seed)
    first = rng.random(N) < 0.65
    return np.where(first[:, None], rng.normal(0.0, 1.0, (N, 2)), rng.normal(3.0, 1.0, (N, 2)))


def bmlr_data(N=12, J=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, J, 2))
    beta = np.where((np.arange(N) % 2 == 0)[:, None], [1.0, -1.0], [-1.0, 2.0])
    return X, np.einsum("njp,np->nj", X, beta) + 0.3 * rng.normal(size=(N, J))


def build_table(kind: str, path, **options):
    """The small GMM ("gmm") or BMLR ("bmlr") table of the fault tests, in ``path`` (None: in memory)."""
    if kind == "gmm":
        from fgraph.models.mixtures import GMMPriors
        from fgraph.models.tvb import build_tvb_table

        settings = dict(grid=[0.3, 1.0], n_bootstrap=3, priors=GMMPriors(weight_concentration=1.0), block_size=2,
                        iterations=30, tol=None, n_jobs=1, progress=False)
        settings.update(options)
        return build_tvb_table(two_clusters(), 2, path=path, **settings)
    from fgraph.models.mixtures import BMLRPriors
    from fgraph.models.tvb import build_bmlr_tvb_table

    settings = dict(grid=[0.3, 1.0], n_bootstrap=3, priors=BMLRPriors(weight_concentration=1.0), block_size=2,
                    iterations=20, tol=None, n_jobs=1, progress=False)
    settings.update(options)
    return build_bmlr_tvb_table(bmlr_data(), 2, path=path, **settings)


def write_records(path, count: int, log) -> None:
    """Compute-once ``count`` records into the store at ``path``, logging every computation to ``log``."""
    from fgraph.store import Store

    store = Store(path, {"job": "records"}, "records")
    for i in range(count):
        def compute(i=i):
            with open(log, "a") as handle:
                handle.write(f"{i} {os.getpid()}\n")
            time.sleep(0.1)  # long enough that concurrent writers overlap on every record they would duplicate
            return {"values": np.arange(1000.0) * i, "index": np.array(i)}
        store.compute_once(f"records/r{i:03d}.npz", {"i": i}, compute)


def main() -> None:
    job, arguments = sys.argv[1], json.loads(sys.argv[2])
    if arguments.get("kill_at"):
        kill_at(*arguments["kill_at"])
    if job == "table":
        build_table(arguments["kind"], arguments["path"], **arguments.get("options", {}))
    elif job == "records":
        write_records(arguments["path"], arguments["count"], arguments["log"])
    elif job == "hold-claim":
        from fgraph.store import Store

        store = Store(arguments["path"], {"job": "records"}, "records")
        claim = store.claim("records/r000.npz")
        print("claimed" if claim is not None else "refused", flush=True)
        sys.stdin.readline()  # hold the claim until killed
    else:
        raise SystemExit(f"unknown job {job!r}")


if __name__ == "__main__":
    main()
