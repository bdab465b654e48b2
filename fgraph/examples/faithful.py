"""Old Faithful, K = 2: VB and grid-search TVB 95 % credible intervals (the TVB paper, §7).

The Bayesian Gaussian mixture of :mod:`fgraph.models.mixtures.gmm` with K = 2 on the bundled Old Faithful data (272
eruptions; ``eruptions`` and ``waiting``, both in minutes; ``fgraph/examples/data/faithful.csv``, or any CSV of
the same format with ``--data``), and the TVB table of :func:`fgraph.models.tvb.gmm.build_tvb_table` over a grid of ω
(Algorithm 2). The paper does not say that it standardises the columns, and describes μ_ij as the coordinates of
the cluster means, so by default the columns are used as they are (minutes); ``--standardise`` fits the two
standardised columns instead (zero mean, unit variance; the intervals are then in standard units).

For π (the weight of the larger cluster, ``weight[largest]``, as the paper does against label switching), every
coordinate μ_ij of the two cluster means and the sums Σ_j μ_ij, the table gives the plain VB interval (ω = 1 on the
whole data) and the TVB interval at the ω chosen for that quantity (eq. 6: the grid ω whose bootstrap coverage is
closest to 95 %). Clusters are numbered by their VB mean eruption time (1: short eruptions, 2: long).

Full run: 100 ω log-spaced in [0.001, 1] and B = 100 resamples (the paper uses 500 ω values), the priors of
scikit-learn's ``BayesianGaussianMixture``. ``--quick``: every other row (136 points), 8 values of ω, B = 10.

Outputs in ``out``: ``results.md`` (the table), ``clusters.png`` (the data coloured by VB cluster),
``weight_posterior.png`` (the VB and TVB posteriors of π with their intervals), ``tvb-table/`` (the table, which
a second run with the same settings reads back instead of refitting) and ``summary.json``.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from fgraph.errors import DatasetError
from fgraph.examples import pyplot, worker_processes, write_summary
from fgraph.models.mixtures.gmm import log_responsibilities
from fgraph.models.tvb import FULL, build_tvb_table, omega_grid
from fgraph.models.tvb.gmm import PARAMETERS
from fgraph.store import write_figure, write_text

DESCRIPTION = ("Old Faithful, K = 2 Bayesian GMM (TVB paper §7): VB and grid-search TVB 95% intervals for the "
               "larger weight, each cluster-mean coordinate and their sums, with the selected omega")

DATA_FILE = Path(__file__).parent / "data" / "faithful.csv"
LEVEL = 0.95
FULL_GRID, FULL_BOOTSTRAP = 100, 100
QUICK_GRID, QUICK_BOOTSTRAP = 8, 10


def add_arguments(parser) -> None:
    """The options of ``fgraph run faithful``, each refused before the run if the run could not use it."""
    parser.add_argument("--data", type=data_file, default=None, metavar="FILE",
                        help="a CSV with a header row and two numeric columns (default: the bundled Old Faithful)")
    parser.add_argument("--standardise", action="store_true",
                        help="fit the standardised columns (zero mean, unit variance) instead of the raw ones")
    parser.add_argument("--jobs", type=worker_processes, default=None,
                        help="worker processes for the TVB table (-1 or default: one per CPU; --quick: 1)")


def data_file(text: str) -> Path:
    """``type`` of --data: a file :func:`load_faithful` reads, so that a bad one is refused before the run."""
    path = Path(text)
    try:
        load_faithful(path)
    except DatasetError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    except (OSError, ValueError) as error:  # unreadable, or not text (UnicodeDecodeError)
        raise argparse.ArgumentTypeError(f"{path} cannot be read as a CSV of two numeric columns ({error})") from None
    return path


def load_faithful(path=None) -> tuple[np.ndarray, list]:
    """The data (N, 2) and the column names of a CSV with a header row and two numeric columns (default: the
    bundled Old Faithful). A missing or malformed file is a :class:`~fgraph.errors.DatasetError` naming it."""
    path = DATA_FILE if path is None else Path(path)
    if not path.is_file():
        raise DatasetError(f"faithful: {path} does not exist or is not a file; give a CSV of two numeric columns")
    lines = [line.strip() for line in path.read_text().splitlines() if line.strip()]
    if len(lines) < 2:
        raise DatasetError(f"faithful: {path} has no data rows (a header row, then rows of two numbers)")
    names = [name.strip().strip('"') for name in lines[0].split(",")]
    if len(names) != 2:
        raise DatasetError(f"faithful: {path} must have two columns, its header has {len(names)}: {lines[0]!r}")
    try:
        X = np.array([[float(v) for v in line.split(",")] for line in lines[1:]], dtype=float)
    except ValueError as error:
        raise DatasetError(f"faithful: {path}: a data row is not two numbers ({error})") from None
    if X.ndim != 2 or X.shape[1] != 2:
        raise DatasetError(f"faithful: {path}: every data row must hold two numbers")
    if not np.all(np.isfinite(X)):
        raise DatasetError(f"faithful: {path}: the data have NaN or infinite values")
    return X, names


def quantities(order) -> list:
    """(label, functional spec) of every quantity of Table 1, clusters numbered 1, 2 in ``order``."""
    rows = [("π (larger weight)", "weight[largest]")]
    for i, k in enumerate(order, start=1):
        rows += [(f"μ_{i}{j + 1}", f"mean[{k}, {j}]") for j in range(2)]
    rows += [(f"μ_{i}1 + μ_{i}2", f"mean_sum[{k}]") for i, k in enumerate(order, start=1)]
    return rows


def run(quick: bool = False, out: Path = Path("out/faithful"), progress: bool = False, data: Path | None = None,
        standardise: bool = False, jobs: int | None = None) -> dict:
    """Run the analysis (module docstring) and write its files into ``out``."""
    out = Path(out)
    X, names = load_faithful(data)
    if quick:
        X = X[::2]
    if standardise:
        X = (X - X.mean(axis=0)) / X.std(axis=0)
    n_grid, n_bootstrap = (QUICK_GRID, QUICK_BOOTSTRAP) if quick else (FULL_GRID, FULL_BOOTSTRAP)
    n_jobs = (1 if quick else -1) if jobs is None else jobs
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    table = build_tvb_table(X, 2, path=out / "tvb-table", grid=omega_grid(n_grid), n_bootstrap=n_bootstrap,
                            n_jobs=n_jobs, progress=progress)
    build_seconds = time.perf_counter() - start
    vb = {key: getattr(table, key)[-1, FULL] for key in PARAMETERS}  # ω = 1 on the whole data: plain VB
    order = [int(k) for k in np.argsort(vb["mean"][:, 0])]  # cluster 1: the short eruptions

    rows = []
    for label, spec in quantities(order):
        s = table.select(spec, LEVEL)
        rows.append({"quantity": label, "functional": spec,
                     "vb": [float(s.vb.lower), float(s.vb.upper)], "vb_point": float(s.vb.point),
                     "vb_coverage": float(s.coverage[-1]),
                     "tvb": [float(s.interval.lower), float(s.interval.upper)], "tvb_point": float(s.interval.point),
                     "omega": s.omega, "tvb_coverage": float(s.coverage[s.index]), "reached": bool(s.reached),
                     "wider": bool(s.interval.length >= s.vb.length)})

    units = "standard units" if standardise else "minutes"
    lines = [f"# Old Faithful, K = 2: VB and grid-search TVB {LEVEL:.0%} credible intervals", "",
             f"N = {len(X)} ({'every other row, ' if quick else ''}columns {names[0]}, {names[1]}, {units}); "
             f"grid of {n_grid} ω log-spaced in [0.001, 1], B = {n_bootstrap} resamples; table built in "
             f"{build_seconds:.1f} s. Cluster 1 has the shorter VB mean eruption time; coordinate 1 is "
             f"{names[0]}, 2 is {names[1]}. Coverage: the bootstrap estimate ĉ(ω) (eq. 5).", "",
             "| quantity | VB interval | VB coverage | TVB interval | selected ω | TVB coverage |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['quantity']} | [{r['vb'][0]:.4f}, {r['vb'][1]:.4f}] | {r['vb_coverage']:.2f} | "
                     f"[{r['tvb'][0]:.4f}, {r['tvb'][1]:.4f}] | {r['omega']:.4f} | {r['tvb_coverage']:.2f} |")
    write_text(out / "results.md", "\n".join(lines) + "\n")
    print("\n".join(lines))

    files = ["results.md"]
    plt = pyplot()
    if plt is not None:
        files += _figures(plt, out, X, names, vb, order, table, rows[0])
    summary = {"example": "faithful", "quick": quick, "n": len(X), "columns": names, "standardised": standardise,
               "grid_size": n_grid, "n_bootstrap": n_bootstrap, "level": LEVEL, "cluster_order": order,
               "vb_posterior": vb, "build_seconds": build_seconds, "rows": rows,
               "files": files + ["tvb-table", "summary.json"]}
    write_summary(out, summary)
    return summary


def _figures(plt, out: Path, X, names, vb, order, table, weight_row) -> list:
    from scipy.stats import beta

    labels = np.argmax(log_responsibilities(vb, X), axis=-1)
    fig, ax = plt.subplots(figsize=(5.5, 4.5))
    for i, k in enumerate(order, start=1):
        mine = labels == k
        ax.scatter(X[mine, 0], X[mine, 1], s=12, alpha=0.7, label=f"cluster {i} ({mine.sum()} points)")
        ax.plot(*vb["mean"][k], "kx", markersize=10, mew=2)
    ax.set_xlabel(names[0])
    ax.set_ylabel(names[1])
    ax.set_title("Old Faithful clustered by VB, K = 2")
    ax.legend()
    fig.tight_layout()
    write_figure(out / "clusters.png", fig, dpi=120)
    plt.close(fig)

    index = int(np.flatnonzero(np.isclose(table.grid, weight_row["omega"]))[0])
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, alpha, interval, width in (("VB", vb["alpha"], weight_row["vb"], 3.0),
                                         (f"TVB, ω = {weight_row['omega']:.3g}", table.alpha[index, FULL],
                                          weight_row["tvb"], 1.5)):
        k = int(np.argmax(alpha))
        a, b = alpha[k], alpha.sum() - alpha[k]
        grid = np.linspace(beta.ppf(1e-4, a, b), beta.ppf(1 - 1e-4, a, b), 400)
        line, = ax.plot(grid, beta.pdf(grid, a, b), linewidth=width,
                        label=f"{name}: [{interval[0]:.3f}, {interval[1]:.3f}]")
        for end in interval:
            ax.axvline(end, color=line.get_color(), linestyle="--", linewidth=1)
    ax.set_xlabel("π (weight of the larger cluster)")
    ax.set_ylabel("posterior density")
    ax.set_title("VB and grid-search TVB posteriors of π, 95% intervals")
    ax.legend()
    fig.tight_layout()
    write_figure(out / "weight_posterior.png", fig, dpi=120)
    plt.close(fig)
    return ["clusters.png", "weight_posterior.png"]
