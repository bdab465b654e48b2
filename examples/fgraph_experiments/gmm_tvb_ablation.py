"""Which of Liu & Li's choices moves the coverage of TVB in the §6.1 study: an ablation at one N.

``fgraph run gmm-tvb`` under our defaults covers π = 0.65 in about 0.88–0.91 of replications at N = 1000, not
0.95. Where our setup differs from the authors' code is a named option of that study
(:data:`fgraph_experiments.gmm_tvb.OPTIONS`: priors, resampling, start, stopping, steps, ties; and B). This study
runs the same replications — the same data and the same split seeds — under several *arms*, each our defaults
with one of the authors' choices (:data:`ARMS`), and the authors' choices all at once, and reports per arm the
coverage of VB, grid-search TVB and sequential TVB with Wilson intervals, and against ours the replications it
covers that ours misses and the other way round (paired: the arms share their data).

* ``ties`` needs no fits of its own: every row keeps its coverage curve, and the ``ours`` rows are read again with
  the authors' tie rule (:func:`fgraph_experiments.gmm_tvb.grid_choice`).
* Which choice moves the coverage is read off grid-search TVB: the arms of one choice fit the table alone; the
  sequential update runs in ``ours``, ``authors``, ``port`` and ``steps`` (which changes it alone, and fits no
  table). That halves the cost of an arm, and the sequential update of the winning setting is measured in the
  study that follows.
* ``port`` is the authors' code itself (:mod:`fgraph_experiments.baselines.tvb_authors_gmm`, a numpy port of
  their ``vb_gmm``, ``boot_tvb`` and ``update_omega_pi``), on the same data, with its own random numbers (seeded by
  the replication's split seed): their update of W_k as printed, their priors from each fit's own data, their
  ELBO deciding when a fit stops. ``port-derived`` is the same with the derived update of W_k (the only
  difference), so that the pair measures what the printed update changes; ``port-whole`` takes the priors of the
  whole data for every fit (as the engine's table does).
* ``priors-x4`` and ``priors-x0.25`` are the ``priors`` arm on the same data times 4 and times 1/4 (the same
  data in other units, π unchanged): the authors' W₀ = cov(X) puts a covariance where the Wishart has a scale of
  the precision, so how strongly their prior pulls depends on the units of the data; ours is the same in any
  units (a test holds ``ours`` to that), so these arms are paired with ``ours`` as the others are.
* To keep it affordable the arms use a coarser grid (:data:`GRID_SIZE` ω over the same range) and B = 100; the
  authors' B = 500 and the paper's grid are for the setting that wins. ``--fine DIR`` compares the ``ours`` arm
  with the rows of a run of ``gmm-tvb`` on the full grid at the same N and seed (a ``replications`` directory, e.g.
  ``results/gmm-tvb/replications`` unpacked), replication by replication.

Besides coverage, every arm reports the mean point estimate π̂ of the whole-data fit at several ω: grid-search TVB
covers less than its bootstrap says when π̂ drifts from the truth as ω falls, a bias the bootstrap cannot see (it
compares fits at the same ω).

**Resumable, in rounds.** Every arm's rows are a results store of their own (``out/arms/<arm>/``), as
``gmm-tvb`` writes them; the arms run in rounds of ``--round`` replications (every arm up to 10, then every arm
up to 20, ...), so that a study stopped at any point has about as many replications in every arm, and a rerun
reads what is finished and fits the rest. ``--jobs`` worker processes (default one per CPU).

``--quick``: N = 200, 2 replications, 4 ω in [0.1, 1], B = 4, short sequential runs: seconds, to show the
pipeline works.

Outputs in ``out``: ``results.md`` (the tables), ``summary.json`` and ``arms/``.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from fgraph.examples import OptionError, whole_number, worker_processes, write_summary
from fgraph.models.tvb import omega_grid
from fgraph.store import write_text
from fgraph_experiments import _replications, gmm_tvb

__all__ = ["ARMS", "UNITS", "TIE_ARMS", "PORT_ARMS", "GRID_SIZE", "add_arguments", "arm_settings", "port_settings",
           "replicate_port", "run"]

DESCRIPTION = ("TVB paper §6.1: which of the authors' choices (priors, resampling, starts, stopping, steps, ties) "
               "moves the coverage of TVB, arm by arm on the same replications")

#: arm -> (the options on the authors' side, whether it runs the table, whether it runs the sequential update)
ARMS = {
    "ours": ({}, True, True),
    "priors": ({"priors": "authors"}, True, False),
    "resampling": ({"resampling": "authors"}, True, False),
    "start": ({"start": "authors"}, True, False),
    "stopping": ({"stopping": "authors"}, True, False),
    "steps": ({"steps": "authors"}, False, True),
    "authors": ({name: "authors" for name in gmm_tvb.OPTIONS}, True, True),
    "priors-x4": ({"priors": "authors"}, True, False),
    "priors-x0.25": ({"priors": "authors"}, True, False),
}
#: arms whose data are the replications' in other units: arm -> the factor (``gmm-tvb --units``); our priors give
#: the same fits in any units, the authors' do not
UNITS = {"priors-x4": 4.0, "priors-x0.25": 0.25}
#: arms read off the rows of another arm with the authors' tie rule: arm -> the arm whose rows
TIE_ARMS = {"ties": "ours"}
#: arms of the port of the authors' code: arm -> (their update of W_k, where their priors come from, whether it runs
#: the sequential update)
PORT_ARMS = {"port": ("printed", "cell", True), "port-derived": ("derived", "cell", False),
             "port-whole": ("printed", "whole", False)}
GRID_SIZE = 25
FULL = {"size": 1000, "replications": 200, "grid_size": GRID_SIZE, "grid_low": 0.001, "n_bootstrap": 100,
        "round": 10}
QUICK = {"size": 200, "replications": 2, "grid_size": 4, "grid_low": 0.1, "n_bootstrap": 4, "round": 1,
         "max_iter": 3}
#: the order the arms run in within a round: ours, the authors' code and setting first
ORDER = ("ours", "port", "authors", "priors", "start", "stopping", "resampling", "steps", "port-derived",
         "port-whole", "priors-x4", "priors-x0.25")
#: ω at which the mean point estimate of the whole-data fit is reported (the nearest grid values)
BIAS_OMEGAS = (1.0, 0.3, 0.1, 0.03)


def add_arguments(parser) -> None:
    """The options of ``fgraph run gmm-tvb-ablation``."""
    parser.add_argument("--replications", type=whole_number(1), default=None,
                        help=f"replications per arm (default {FULL['replications']}; --quick: 2)")
    parser.add_argument("--arms", nargs="+", choices=tuple(ARMS) + tuple(TIE_ARMS) + tuple(PORT_ARMS), default=None,
                        help="the arms to run (default all; 'ties' reads the 'ours' rows)")
    parser.add_argument("--round", dest="round_size", type=whole_number(1), default=None,
                        help="replications every arm gets before the next round (default 10)")
    parser.add_argument("--jobs", type=worker_processes, default=None,
                        help="worker processes (-1 or default: one per CPU; --quick: 1)")
    parser.add_argument("--fine", type=Path, default=None, metavar="DIR",
                        help="a gmm-tvb replications directory on the full grid (same N and seed) to compare "
                             "the 'ours' arm with")
    parser.add_argument("--seed", type=whole_number(0), default=0, help="the seed of the data and the splits")


def arm_settings(arm: str, scope: dict, replications: int, seed: int) -> dict:
    """The ``gmm-tvb`` settings of one arm (``scope``: :data:`FULL` or :data:`QUICK`) up to ``replications``."""
    sides, table, sequential = ARMS[arm]
    quick = scope is QUICK
    settings = gmm_tvb.study_settings(quick, replications, [scope["size"]], "ours", scope["n_bootstrap"],
                                      scope["grid_size"], sides, UNITS.get(arm))
    settings["grid_low"] = scope["grid_low"]
    if "max_iter" in scope:
        settings["max_iter"] = scope["max_iter"]
    settings.update(sequential=sequential, seed=int(seed), level=gmm_tvb.LEVEL, weight=gmm_tvb.WEIGHT,
                    means=gmm_tvb.MEANS.tolist(), functional=gmm_tvb.FUNCTIONAL)
    if not table:
        settings["grid"] = False
    return settings


def port_settings(arm: str, scope: dict, replications: int, seed: int) -> dict:
    """The settings of a port arm (the identity of its rows' store)."""
    scale_update, priors_from, sequential = PORT_ARMS[arm]
    return {"sizes": [scope["size"]], "replications": int(replications), "grid_size": scope["grid_size"],
            "grid_low": scope["grid_low"], "n_bootstrap": scope["n_bootstrap"],
            "max_iter": scope.get("max_iter", 100), "seed": int(seed), "scale_update": scale_update,
            "priors_from": priors_from, "sequential": sequential, "level": gmm_tvb.LEVEL, "weight": gmm_tvb.WEIGHT}


def _port_entry(X, omega: float, rng, settings: dict, **extra) -> dict:
    """The whole-data fit of the port at ``omega`` and its interval of the larger weight."""
    from fgraph_experiments.baselines import tvb_authors_gmm as port

    whole = X if settings["priors_from"] == "whole" else None
    fit = port.fit_vb_gmm(X[None], omega, [int(rng.integers(0, 2 ** 63))], settings["scale_update"], whole)
    lower, upper = port.interval(fit["lambda"][0], settings["level"])
    lam = fit["lambda"][0]
    return dict(gmm_tvb.interval_entry(lower, upper), omega=float(omega), point=float(lam[0] / lam.sum()),
                alpha=[float(a) for a in lam], **extra)


def replicate_port(N: int, replication: int, settings: dict) -> dict:
    """One replication by the port of the authors' code: VB, grid-search TVB (their dictionary and choice) and
    their sequential update, each reported by the whole-data fit at its ω; the random numbers from the
    replication's split seed."""
    from fgraph_experiments.baselines import tvb_authors_gmm as port

    start = time.perf_counter()
    X = gmm_tvb.simulate(N, settings["seed"], replication)
    split_seed = gmm_tvb.table_seed(N, settings["seed"], replication)
    rng = np.random.default_rng(split_seed)
    grid = omega_grid(settings["grid_size"], settings["grid_low"])
    options = dict(B=settings["n_bootstrap"], scale_update=settings["scale_update"],
                   priors_from=settings["priors_from"], level=settings["level"])
    coverages = port.grid_coverages(X, grid, rng, **options)
    index = port.grid_choice(grid, coverages, settings["level"])
    row = {"n": int(N), "replication": int(replication), "data_seed": [int(settings["seed"]), int(N),
                                                                       int(replication)],
           "split_seed": split_seed,
           "vb": _port_entry(X, 1.0, rng, settings, bootstrap_coverage=float(coverages[-1])),
           "tvb_grid": _port_entry(X, float(grid[index]), rng, settings,
                                   reached=bool(coverages[index] >= settings["level"] - 1e-12),
                                   bootstrap_coverage=float(coverages[index])),
           "curve": {"omega": grid.tolist(), "coverage": coverages.tolist()}}
    if settings["sequential"]:
        omega, converged, iterations = port.sequential_omega(X, rng, max_iter=settings["max_iter"], **options)
        row["tvb_sequential"] = _port_entry(X, omega, rng, settings, reached=bool(converged), iterations=iterations)
    # the whole-data fits at every ω: how π̂ moves with ω (one batch)
    whole = X if settings["priors_from"] == "whole" else None
    fits = port.fit_vb_gmm(np.repeat(X[None], grid.size, axis=0), grid,
                           [int(seed) for seed in rng.integers(0, 2 ** 63, size=grid.size)], settings["scale_update"],
                           whole)
    lower, upper = port.interval(fits["lambda"], settings["level"])
    row["curve"].update(lower=lower.tolist(), upper=upper.tolist(),
                        point=(fits["lambda"][:, 0] / fits["lambda"].sum(1)).tolist())
    row["seconds"] = time.perf_counter() - start
    return row


def _port_row_name(N: int, replication: int) -> str:
    return f"n{N}_r{replication:04d}.json"


def _coverage(rows: list, method: str) -> dict:
    """The study's aggregate of one method over ``rows`` (:func:`fgraph_experiments._replications.aggregate`: coverage,
    its Wilson interval, mean length and ω) and the mean point estimate."""
    found = _replications.aggregate(rows, [rows[0]["n"]], (method,), "n")[0]
    return dict(found, mean_point=float(np.mean([row[method]["point"] for row in rows if method in row])))


def _paired(mine: dict, ours: dict, method: str) -> dict:
    """Replications (in both) that this arm covers and ours misses, and the other way round."""
    common = sorted(set(mine) & set(ours))
    gained = sum(mine[r][method]["covers"] and not ours[r][method]["covers"] for r in common)
    lost = sum(ours[r][method]["covers"] and not mine[r][method]["covers"] for r in common)
    return {"common": len(common), "gained": int(gained), "lost": int(lost)}


def _bias(rows: list) -> dict:
    """The mean whole-data point estimate π̂ at the grid values nearest :data:`BIAS_OMEGAS`."""
    if not rows or "curve" not in rows[0]:
        return {}
    grid = np.asarray(rows[0]["curve"]["omega"])
    points = np.array([row["curve"]["point"] for row in rows])
    result = {}
    for omega in BIAS_OMEGAS:
        index = int(np.argmin(np.abs(np.log(grid) - np.log(omega))))
        result[f"{grid[index]:.3g}"] = float(points[:, index].mean())
    return result


def _rows_by_replication(rows: list) -> dict:
    return {row["replication"]: row for row in rows}


def _read_fine(directory: Path, size: int) -> dict:
    rows = {}
    for path in sorted(Path(directory).glob(f"n{size}_r*.json")):
        try:
            row = json.loads(path.read_text())
        except (OSError, ValueError) as error:
            raise OptionError(f"gmm-tvb-ablation: --fine: {path} is not a replication row ({error})") from None
        rows[row["replication"]] = row
    if not rows:
        raise OptionError(f"gmm-tvb-ablation: --fine: {directory} holds no rows of N = {size} (n{size}_r*.json); "
                          "give a gmm-tvb replications directory (python -m fgraph.store unpack ... to unpack one)")
    return rows


def run(quick: bool = False, out: Path = Path("out/gmm-tvb-ablation"), progress: bool = False,
        replications: int | None = None, arms: list | None = None, round_size: int | None = None,
        jobs: int | None = None, fine: Path | None = None, seed: int = 0) -> dict:
    """Run the arms in rounds (module docstring) and write the report into ``out``."""
    out = Path(out)
    scope = QUICK if quick else FULL
    total = int(replications or scope["replications"])
    step = int(round_size or scope["round"])
    chosen = list(arms or (*ARMS, *TIE_ARMS, *PORT_ARMS))
    fitted_arms = [arm for arm in ORDER if arm in chosen or any(TIE_ARMS.get(a) == arm for a in chosen)]
    if "ours" not in fitted_arms:
        fitted_arms.insert(0, "ours")  # every arm is compared with ours
    fine_rows = _read_fine(fine, scope["size"]) if fine is not None else None
    n_jobs = _replications.worker_jobs(quick, jobs, "gmm-tvb-ablation")
    start = time.perf_counter()
    rows, fitted = {}, 0
    for upto in list(range(step, total, step)) + [total]:
        for arm in fitted_arms:
            if arm in PORT_ARMS:
                rows[arm], now = _replications.run_replications(
                    out / "arms" / arm, port_settings(arm, scope, upto, seed), replicate_port, _port_row_name,
                    "sizes", f"gmm-tvb-ablation {arm}", n_jobs, progress)
            else:
                rows[arm], now = gmm_tvb.run_replications(out / "arms" / arm, arm_settings(arm, scope, upto, seed),
                                                          jobs=n_jobs, progress=progress)
            fitted += now
    seconds = time.perf_counter() - start
    results = _aggregate(rows, chosen, fine_rows)
    lines = _report_lines(results, scope, total, fitted, seconds)
    write_text(out / "results.md", "\n".join(lines) + "\n")
    print("\n".join(lines))
    summary = {"example": "gmm-tvb-ablation", "quick": quick, "scope": scope, "replications": total,
               "arms": {arm: {"authors": sorted(ARMS[arm][0]) if arm in ARMS else ["ties"] if arm in TIE_ARMS
                              else ["port: " + ", ".join(PORT_ARMS[arm][:2])],
                              **({"units": UNITS[arm]} if arm in UNITS else {})} for arm in chosen},
               "jobs": n_jobs, "fitted_this_run": fitted, "seconds": seconds, "results": results,
               "files": ["results.md", "summary.json", "arms"]}
    write_summary(out, summary)
    return summary


def _aggregate(rows: dict, chosen: list, fine_rows: dict | None) -> dict:
    ours = _rows_by_replication(rows["ours"])
    results = {}
    for arm in chosen:
        source = TIE_ARMS.get(arm, arm)
        mine = _rows_by_replication(rows[source])
        if arm in TIE_ARMS:
            rule = gmm_tvb.OPTIONS["ties"]["authors"]["ties"]
            mine = {r: dict(row, tvb_grid=gmm_tvb.grid_choice(row["curve"], rule)) for r, row in mine.items()}
        entry = {"bias": _bias(list(mine.values()))}
        for method in gmm_tvb.METHODS:
            entries = [row[method] for row in mine.values() if method in row]
            if not entries or (method == "vb" and arm not in ("ours", "priors", "start", "stopping", "authors",
                                                              *UNITS, *PORT_ARMS)) \
                    or (arm in TIE_ARMS and method != "tvb_grid"):
                continue
            entry[method] = dict(_coverage(list(mine.values()), method), paired=_paired(mine, ours, method))
        results[arm] = entry
    if fine_rows is not None:
        common = sorted(set(fine_rows) & set(ours))
        results["fine_grid_check"] = {
            "replications": len(common),
            **{method: {"coarse": float(np.mean([ours[r][method]["covers"] for r in common])) if common else None,
                        "fine": float(np.mean([fine_rows[r][method]["covers"] for r in common])) if common else None,
                        "agree": int(sum(ours[r][method]["covers"] == fine_rows[r][method]["covers"]
                                         for r in common))}
               for method in ("vb", "tvb_grid", "tvb_sequential")
               if all(method in fine_rows[r] and method in ours[r] for r in common)}}
    return results


def _report_lines(results: dict, scope: dict, total: int, fitted: int, seconds: float) -> list:
    lines = ["# TVB §6.1 ablation: which of the authors' choices moves the coverage", "",
             (f"N = {scope['size']}, up to {total} replications per arm (the same data and splits in every arm); "
              f"{scope['grid_size']} ω log-spaced in [{scope['grid_low']:g}, 1], B = {scope['n_bootstrap']}. "
              f"Each arm is our defaults with the authors' choice it names ('authors': all of them; "
              "'priors-x4', 'priors-x0.25': their priors on the data times 4 and 1/4). "
              f"{fitted} replications fitted in this run, {seconds:.1f} s. Paired: replications this arm covers "
              "and ours misses (+), and the other way round (−)."), "",
             "| arm | method | coverage | 95% CI | paired +/− | mean length | mean ω | mean π̂ | replications |",
             "|---|---|---|---|---|---|---|---|---|"]
    for arm, entry in results.items():
        if arm == "fine_grid_check":
            continue
        for method in gmm_tvb.METHODS:
            if method not in entry:
                continue
            r = entry[method]
            paired = f"+{r['paired']['gained']} / −{r['paired']['lost']}" if arm != "ours" else ""
            lines.append(f"| {arm} | {gmm_tvb.LABELS[method]} | {r['coverage']:.3f} | "
                         f"[{r['coverage_ci'][0]:.3f}, {r['coverage_ci'][1]:.3f}] | {paired} | "
                         f"{r['mean_length']:.4f} | {r['mean_omega']:.4f} | {r['mean_point']:.4f} | "
                         f"{r['replications']} |")
    omegas = next((list(entry["bias"]) for entry in results.values() if isinstance(entry, dict) and
                   entry.get("bias")), [])
    if omegas:
        lines += ["", "Mean point estimate π̂ of the whole-data fit (truth 0.65) at ω:", "",
                  "| arm | " + " | ".join(f"ω = {omega}" for omega in omegas) + " |",
                  "|---|" + "---|" * len(omegas)]
        for arm, entry in results.items():
            if isinstance(entry, dict) and entry.get("bias") and arm not in TIE_ARMS:
                lines.append(f"| {arm} | " + " | ".join(f"{entry['bias'][omega]:.4f}" for omega in omegas) + " |")
    check = results.get("fine_grid_check")
    if check:
        lines += ["", f"Coarse ({scope['grid_size']} ω) against the full grid, ours, on the same "
                      f"{check['replications']} replications:", "",
                  "| method | coverage, coarse grid | coverage, full grid | replications alike |", "|---|---|---|---|"]
        for method, r in check.items():
            if method != "replications":
                lines.append(f"| {gmm_tvb.LABELS[method]} | {r['coarse']:.3f} | {r['fine']:.3f} | {r['agree']} |")
    return lines
