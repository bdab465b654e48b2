"""The first ``fg.infer`` in a fresh process: what a script pays before its first answer, with numba and without.

Workload: the README's two models on its 50 draws of N(2, 0.5²) — an unknown mean under BP (exact: the posterior
mean and ``log p(y)``) and an unknown mean and precision under mean-field VMP (``tol=1e-12``, at most 50
iterations: the final free energy, the number of iterations, E[mu] and E[tau]).

Ours: a fresh interpreter imports numpy, fgraph and its nodes, builds both models, runs ``fg.infer`` on each and
reads the answers (``first_s``: from the child's first statement to the answers, so the interpreter's own start is
left out; ``import_s`` of it is the imports). It then builds and runs both models again in the same process
(``second_s``): the first call's price beyond a steady call is ``first_s − second_s``. Three settings of numba
(the ``fast`` extra), each in its own processes:

* ``no_numba``: numba hidden from the child (``sys.modules["numba"] = None``), as where it is not installed;
* ``numba_cold``: numba installed, fgraph's and numba's on-disk caches empty (a new ``FGRAPH_CACHE_DIR`` and
  ``NUMBA_CACHE_DIR`` per run): a first run after installation;
* ``numba_warm``: the same caches, filled by an earlier run.

Peer: the same numbers computed in a fresh interpreter by the most direct script a numpy user would write —
numpy and ``scipy.special`` (digamma, gammaln) imported, the conjugate posterior and the closed-form evidence of the
first model, and the mean-field coordinate updates with the free energy of the second, stopped by the same rule
(change of F below 1e-12). It is not the same work (no model, no compilation, no rule dispatch): it is the floor
under any library's first answer, so the ratio says how much a user pays for fgraph's generality at start-up.
``agree``: both give the same answers to 1e-9 (relative) and the same number of iterations; a disagreement exits
non-zero.

Timing: ``time.process_time`` (CPU seconds of the child) for ``ours_s``, ``peer_s`` and ``ratio``, which a
machine shared with other work disturbs less than the clock; the wall-clock times inside the child and of the
whole process (interpreter start to exit, from the parent) are reported beside them. Runs alternate between the
settings and the peer; medians over ``repeats`` (full 7, quick 3). Python's bytecode is cached as on a user's
machine (one untimed run first; the cache in a temporary ``PYTHONPYCACHEPREFIX``, whatever
``PYTHONDONTWRITEBYTECODE`` says in the calling shell); ``no_bytecode_s`` is the first call when every module is
compiled from its source (``PYTHONDONTWRITEBYTECODE=1``, as the first import after a checkout without a cache).

Run from the repository root, pinned to one core::

    OPENBLAS_NUM_THREADS=1 taskset -c 1 python -m benchmarks.first_call            # full
    OPENBLAS_NUM_THREADS=1 taskset -c 1 python -m benchmarks.first_call --quick    # under a minute
    python -m benchmarks.first_call --profile     # where the first call's time goes: imports, then cProfile

The last line printed is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RELATIVE_TOLERANCE = 1e-9
SETTINGS = ("no_numba", "numba_cold", "numba_warm")

_HIDE_NUMBA = "import sys; sys.modules['numba'] = None  # as if numba were not installed\n"

#: the child of ours: prints one JSON object (timings, answers, what was imported)
_OURS = """
import time
start_cpu, start_wall = time.process_time(), time.perf_counter()
{hide}import json, sys
import numpy as np
import fgraph as fg
from fgraph.nodes import Gamma, Normal
imported_cpu, imported_wall = time.process_time(), time.perf_counter()


def answers():
    y = np.random.default_rng(2023).normal(2.0, 0.5, size=50)
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=10.0)
        Normal("y", mean=mu, var=0.25, observed=y)
    result = fg.infer(model, algorithm="bp")
    bp = [float(result.marginal("mu").mean), float(result.log_evidence)]
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=10.0)
        tau = Gamma("tau", shape=2.0, rate=0.5)
        Normal("y", mean=mu, precision=tau, observed=y)
    result = fg.infer(model, algorithm="vmp", iterations=50, tol=1e-12, init={{"tau": fg.Gamma(2.0, 0.5)}})
    vmp = [float(result.free_energy[-1]), float(result.marginal("mu").mean), float(result.marginal("tau").mean)]
    return bp + vmp, result.iterations


first, iterations = answers()
first_cpu, first_wall = time.process_time(), time.perf_counter()
answers()
print(json.dumps({{"import_s": imported_cpu - start_cpu, "first_s": first_cpu - start_cpu,
                  "first_wall_s": first_wall - start_wall, "second_s": time.process_time() - first_cpu,
                  "answers": first, "iterations": iterations, "numba_imported": sys.modules.get("numba") is not None,
                  "scipy_imported": "scipy" in sys.modules}}))
"""

#: the peer's child: the same answers in numpy and scipy.special
_PEER = """
import time
start_cpu, start_wall = time.process_time(), time.perf_counter()
import json, math
import numpy as np
from scipy.special import digamma, gammaln

y = np.random.default_rng(2023).normal(2.0, 0.5, size=50)
n, total, squares = y.size, float(y.sum()), float(y @ y)
LOG_2PI = math.log(2 * math.pi)

# unknown mean, known variance 0.25, prior N(0, 10): conjugate posterior and log p(y)
noise, prior_var = 0.25, 10.0
post_var = 1.0 / (1.0 / prior_var + n / noise)
post_mean = post_var * total / noise
log_evidence = (-0.5 * n * math.log(2 * math.pi * noise) - 0.5 * math.log(prior_var / post_var)
                - 0.5 * (squares / noise - post_mean ** 2 / post_var))

# unknown mean and precision, mu ~ N(0, 10), tau ~ Gamma(2, 0.5): mean-field VMP, q(tau) started at its prior
a0, b0 = 2.0, 0.5
a, b = a0, b0
trace = []
for _ in range(50):
    e_tau = a / b
    v = 1.0 / (1.0 / prior_var + n * e_tau)
    m = v * e_tau * total
    a = a0 + n / 2
    spread = squares - 2 * m * total + n * (m * m + v)  # sum of E[(y_n - mu)^2]
    b = b0 + 0.5 * spread
    e_tau, e_log_tau = a / b, digamma(a) - math.log(b)
    energy = -(0.5 * n * (e_log_tau - LOG_2PI) - 0.5 * e_tau * spread                       # E log p(y | mu, tau)
               - 0.5 * math.log(2 * math.pi * prior_var) - (m * m + v) / (2 * prior_var)    # E log p(mu)
               + a0 * math.log(b0) - gammaln(a0) + (a0 - 1) * e_log_tau - b0 * e_tau)      # E log p(tau)
    entropy = 0.5 * math.log(2 * math.pi * math.e * v) + a - math.log(b) + gammaln(a) + (1 - a) * digamma(a)
    trace.append(float(energy - entropy))
    if len(trace) >= 2 and abs(trace[-1] - trace[-2]) < 1e-12:
        break
answers = [post_mean, log_evidence, trace[-1], m, a / b]
print(json.dumps({"first_s": time.process_time() - start_cpu, "first_wall_s": time.perf_counter() - start_wall,
                  "answers": [float(x) for x in answers], "iterations": len(trace)}))
"""


def _child(source: str, environment: dict) -> dict:
    """Run ``source`` in a fresh interpreter (from the repository root); its JSON line, and the process's wall time."""
    start = time.perf_counter()
    completed = subprocess.run([sys.executable, "-c", source], cwd=ROOT, env=environment, capture_output=True,
                               text=True)
    wall = time.perf_counter() - start
    if completed.returncode != 0:
        raise RuntimeError(f"the child failed:\n{completed.stderr}")
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    report["process_wall_s"] = wall
    return report


def _environment(scratch: Path, setting: str | None, run: int, bytecode: bool = True) -> dict:
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    environment["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
    if not bytecode:
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        environment["PYTHONPYCACHEPREFIX"] = str(scratch / f"no-pycache-{run}")  # empty: nothing cached to read
    caches = scratch / ("warm" if setting == "numba_warm" else f"cold-{run}")
    environment["FGRAPH_CACHE_DIR"] = str(caches / "fgraph")
    environment["NUMBA_CACHE_DIR"] = str(caches / "numba")
    return environment


def _source(setting: str) -> str:
    return _OURS.format(hide=_HIDE_NUMBA if setting == "no_numba" else "")


def agrees(ours: dict, peer: dict) -> bool:
    close = all(abs(a - b) <= RELATIVE_TOLERANCE * max(abs(b), 1.0) for a, b in zip(ours["answers"], peer["answers"]))
    return close and ours["iterations"] == peer["iterations"] and len(ours["answers"]) == len(peer["answers"])


def _median(reports: list, key: str) -> float:
    return round(statistics.median(report[key] for report in reports), 4)


def run(quick: bool, repeats: int | None = None) -> dict:
    repeats = repeats or (3 if quick else 7)
    with tempfile.TemporaryDirectory(prefix="fgraph-first-call-") as directory:
        scratch = Path(directory)
        for setting in SETTINGS:  # untimed: bytecode cached, the warm caches filled
            _child(_source(setting), _environment(scratch, setting, -1))
        _child(_PEER, _environment(scratch, None, -1))
        reports: dict = {setting: [] for setting in (*SETTINGS, "peer")}
        for repeat in range(repeats):
            for setting in SETTINGS:
                reports[setting].append(_child(_source(setting), _environment(scratch, setting, repeat)))
            reports["peer"].append(_child(_PEER, _environment(scratch, None, repeat)))
        no_bytecode = [_child(_source("no_numba"), _environment(scratch, "no_numba", repeat, bytecode=False))
                       for repeat in range(max(1, repeats // 2))]
    peer = reports["peer"]
    agree = all(agrees(report, peer[0]) for setting in SETTINGS for report in reports[setting])
    settings = {
        setting: {"first_s": _median(runs, "first_s"), "import_s": _median(runs, "import_s"),
                  "second_s": _median(runs, "second_s"), "first_wall_s": _median(runs, "first_wall_s"),
                  "process_wall_s": _median(runs, "process_wall_s"),
                  "numba_imported": any(report["numba_imported"] for report in runs),
                  "scipy_imported": all(report["scipy_imported"] for report in runs)}
        for setting, runs in reports.items() if setting != "peer"
    }
    ours_s, peer_s = settings["no_numba"]["first_s"], _median(peer, "first_s")
    return {
        "benchmark": "first_call",
        "ours_s": ours_s,
        "peer": "numpy + scipy.special closed forms and mean-field loop in a fresh interpreter",
        "peer_s": peer_s,
        "ratio": round(ours_s / peer_s, 2),
        "agree": agree,
        "settings": settings,
        "peer_wall_s": _median(peer, "first_wall_s"),
        "peer_process_wall_s": _median(peer, "process_wall_s"),
        "no_bytecode_s": _median(no_bytecode, "first_s"),
        "quality": {"ours": reports["no_numba"][0]["answers"], "peer": peer[0]["answers"],
                    "iterations": [reports["no_numba"][0]["iterations"], peer[0]["iterations"]]},
        "params": {
            "repeats": repeats, "python": sys.version.split()[0],
            "answers": "BP: E[mu], log p(y); VMP: F, E[mu], E[tau] (and the iterations)",
            "timing": "CPU seconds in the child from its first statement to the answers of both models (ours: import "
                      "numpy, fgraph, fgraph.nodes + build + infer + read; peer: import numpy, scipy.special + "
                      "compute); second_s = both models again in the same process; ratio = ours (no numba) / peer",
        },
    }


def profile_first_call(top: int = 25) -> None:
    """The first call's imports by cumulative time (``python -X importtime``), then a cProfile of the whole child."""
    with tempfile.TemporaryDirectory(prefix="fgraph-first-call-") as directory:
        scratch = Path(directory)
        environment = _environment(scratch, "no_numba", 0)
        source = _source("no_numba")
        _child(source, environment)  # bytecode cached
        completed = subprocess.run([sys.executable, "-X", "importtime", "-c", source], cwd=ROOT, env=environment,
                                   capture_output=True, text=True, check=True)
        rows = []
        for line in completed.stderr.splitlines():
            parts = line.removeprefix("import time:").split("|")
            if len(parts) == 3 and parts[1].strip().isdigit():
                rows.append((int(parts[1]), int(parts[0]), parts[2].rstrip()))
        print(f"imports by cumulative time (microseconds), top {top}")
        print("| cumulative | self | module |\n|---:|---:|---|")
        for cumulative, own, module in sorted(rows, reverse=True)[:top]:
            print(f"| {cumulative} | {own} | `{module.strip()}` |")
        script, statistics_file = scratch / "first_call_child.py", scratch / "first_call.prof"
        script.write_text(source)
        subprocess.run([sys.executable, "-m", "cProfile", "-o", str(statistics_file), str(script)], cwd=ROOT,
                       env=environment, capture_output=True, text=True, check=True)
        import pstats

        print(f"\ncProfile of the child (imports, first and second call), top {top} by cumulative time")
        pstats.Stats(str(statistics_file)).sort_stats("cumulative").print_stats(top)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats instead of 7")
    parser.add_argument("--profile", action="store_true", help="profile the first call instead of timing it")
    arguments = parser.parse_args(argv)
    if arguments.profile:
        profile_first_call()
        return
    report = run(arguments.quick)
    print(json.dumps(report))
    if not report["agree"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
