"""What the CMN experiments share (``fgraph run cmn-uci``, ``fgraph run cmn-pinwheels``): Heins et al., §4.

For one data set (:func:`run_dataset`):

* nested stratified training sets of doubling size and one stratified test set, z-scored by the
  training statistics (:func:`fgraph.datasets.train_test_splits`, sizes from
  :data:`fgraph.datasets.DEFAULT_SPLITS`);
* per training size one CAVI fit of the CMN with R restarts as copies of one graph
  (:func:`fgraph.models.cmn.graph.build_cmn` with ``n_restarts=R``, one :func:`~fgraph.models.cmn.graph.fit_cmn`),
  and for every restart its own predictive at the test inputs
  (:func:`fgraph.models.cmn.predictive.predictive_log_proba`), scored by test accuracy, log predictive
  density (LPD) and expected calibration error (20 bins): means and standard deviations over restarts;
* runtime: wall-clock seconds per iteration (the whole fit, all R restarts at once, divided by its
  iterations) and iterations to 95 % of the final ELBO per restart
  (:func:`fgraph.models.convergence.iterations_to_fraction`, Appendix E), and their product;
* WAIC on the full data set (z-scored as a whole): one more CAVI fit on all rows, M draws of the
  parameters from each restart's q, their pointwise log-likelihoods
  (:func:`fgraph.models.cmn.predictive.pointwise_log_likelihood`) and ``arviz.waic`` per restart
  (ArviZ pools chains, so restarts are not passed as chains); skipped with a note without ArviZ;
* baselines, when the ``baselines`` extra is importable and the configuration asks for them:
  maximum likelihood (:func:`~fgraph_experiments.baselines.mle.fit_mle`) and black-box VI
  (:func:`~fgraph_experiments.baselines.bbvi.fit_bbvi`) with the same R restarts, NUTS
  (:func:`~fgraph_experiments.baselines.nuts.fit_nuts`) on the data sets listed for it; the same metrics and
  WAIC (MLE has no posterior: its training log-likelihood is reported instead), and CAVI's agreement
  with NUTS: the mean total-variation distance ½ Σ_y |p_CAVI(y | x) − p_NUTS(y | x)| over the test
  points and the difference of LPDs, per restart.

Each data set's results go to ``<out>/<name>.json`` as soon as it is done, with the ELBO and loss
traces in ``<name>_traces.npz`` (the baselines' loss traces thinned to :data:`TRACE_POINTS` steps) and the
figures ``<name>.png`` (metrics and runtime vs training
size) and ``<name>_reliability.png`` (reliability diagrams at the largest training size). A run
that finds ``<name>.json`` written under the same configuration reuses it; within a data set each
finished training size is kept in ``<name>_sizes/`` and reused likewise, so an interrupted run resumes
at the next training size. :func:`runtime_scaling` times one iteration on synthetic data as the
input dimension d, the number of experts K and the latent dimension h grow (the paper's Figure 4).
"""
from __future__ import annotations

import dataclasses
import importlib.util
import json
import shutil
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fgraph.datasets import DEFAULT_SPLITS, load_dataset, train_test_splits
from fgraph.errors import ConvergenceWarning, FgraphError
from fgraph.examples import to_json, progress_bar, pyplot
from fgraph.metrics import accuracy, expected_calibration_error, log_predictive_density, reliability_diagram
from fgraph.models.cmn import CMNPriors, build_cmn, fit_cmn, pointwise_log_likelihood, predictive_log_proba
from fgraph.models.convergence import iterations_to_fraction
from fgraph.store import Store, StoreMismatchError, write_figure, write_json, write_npz

#: the model these studies reproduce: eq. (4) as the paper writes it (zero prior means) from drawn coefficients,
#: for CAVI and the baselines alike; the library's defaults are the authors' choices instead
#: (docs/cmn-experiments.md, "Held-out: which setting is the better model")
PRIORS = CMNPriors(stick_bias=False)
INITIAL = "draws"

__all__ = ["PRIORS", "INITIAL", "ExperimentConfig", "baselines_available", "arviz_available", "run_dataset", "runtime_scaling",
           "results_table", "METHODS"]

METHODS = ("cavi", "mle", "bbvi", "nuts")
ECE_BINS = 20
FRACTION = 0.95  # of the ELBO's rise (Appendix E)


class ExperimentError(FgraphError, ValueError):
    """A CMN experiment was configured with something it cannot run."""


@dataclass(frozen=True)
class ExperimentConfig:
    """What one CMN experiment runs.

    ``datasets`` names (:data:`fgraph.datasets.DATASET_NAMES`); ``n_experts`` K for every data set, or
    per data set in ``experts_by_dataset``; ``n_restarts`` R (copies of one graph); ``iterations`` CAVI
    sweeps at most (``tol`` nats: stop once every restart's ELBO changes by less); ``max_sizes`` keeps the
    first that many training sizes (None: all); ``sizes`` overrides them per data set as
    ``{name: (train sizes, test size)}``; ``predictive_samples`` draws of x1 per restart and expert for the
    predictive; ``waic`` on/off with ``waic_draws`` parameter draws and ``waic_inner`` draws of x1;
    ``baselines`` on/off (used only when importable) with ``mle_steps``, ``bbvi_steps`` and NUTS's
    ``nuts_warmup``, ``nuts_samples``, ``nuts_chains`` on ``nuts_datasets``; ``seed`` for splits, initial
    states and Monte Carlo; ``n_jobs`` worker processes for the restarts of the CAVI fits
    (:func:`fgraph.models.cmn.graph.fit_cmn`: the same fits when ``tol`` is None, and their seconds per
    iteration are wall seconds with that many workers).
    """

    datasets: tuple
    n_experts: int = 20
    experts_by_dataset: dict = field(default_factory=dict)
    n_restarts: int = 16
    iterations: int = 200
    tol: float | None = None
    max_sizes: int | None = None
    sizes: dict = field(default_factory=dict)
    predictive_samples: int = 128
    waic: bool = True
    waic_draws: int = 100
    waic_inner: int = 32
    baselines: bool = True
    mle_steps: int = 20000
    bbvi_steps: int = 20000
    nuts_datasets: tuple = ()
    nuts_warmup: int = 800
    nuts_samples: int = 64
    nuts_chains: int = 16
    seed: int = 0
    n_jobs: int | None = None

    def experts(self, name: str) -> int:
        return int(self.experts_by_dataset.get(name, self.n_experts))

    def split_sizes(self, name: str) -> tuple:
        """(train sizes, test size) of data set ``name``."""
        if name in self.sizes:
            train, test = self.sizes[name]
            return tuple(int(s) for s in train), int(test)
        if name not in DEFAULT_SPLITS:
            raise ExperimentError(f"no training sizes for data set {name!r}; give them in sizes={{name: (train, test)}}")
        split = DEFAULT_SPLITS[name]
        train = split.train_sizes
        return (train[: self.max_sizes] if self.max_sizes else train), split.test_size

    def for_dataset(self, name: str) -> dict:
        """The settings that decide data set ``name``'s results (what a resumed run must match), as JSON."""
        settings = dataclasses.asdict(self)
        for key in ("datasets", "experts_by_dataset", "sizes", "nuts_datasets", "max_sizes"):
            settings.pop(key)
        train, test = self.split_sizes(name)
        settings.update(dataset=name, n_experts=self.experts(name), train_sizes=list(train), test_size=test,
                        nuts=name in self.nuts_datasets, baselines=self.baselines and baselines_available())
        return settings


def baselines_available() -> bool:
    """Whether the ``baselines`` extra (JAX, optax, NumPyro, ArviZ) can be imported."""
    return all(importlib.util.find_spec(name) is not None for name in ("jax", "optax", "numpyro", "arviz"))


def arviz_available() -> bool:
    return importlib.util.find_spec("arviz") is not None


# ----------------------------------------------------------------------------- scores
def scores(probabilities, y) -> dict:
    """Accuracy, LPD and ECE of each restart's predictive ``probabilities`` (R, N*, L): arrays (R,)."""
    p = np.asarray(probabilities, dtype=float)
    p = p / p.sum(axis=-1, keepdims=True)  # exp of log-probabilities: sums to 1 up to round-off
    return {
        "accuracy": np.array([accuracy(row, y) for row in p]),
        "lpd": np.array([log_predictive_density(row, y) for row in p]),
        "ece": np.array([expected_calibration_error(row, y, ECE_BINS) for row in p]),
    }


def spread(values) -> dict:
    """Mean and standard deviation (over restarts) of ``values`` (R,), NaNs left out; and the values."""
    values = np.asarray(values, dtype=float)
    finite = values[np.isfinite(values)]
    return {"mean": float(finite.mean()) if finite.size else float("nan"),
            "std": float(finite.std()) if finite.size else float("nan"),
            "values": values}


def agreement(probabilities, reference, y) -> dict:
    """Per restart: mean total-variation distance to ``reference`` (1, N*, L) over the points, and LPD − LPD_ref."""
    p = np.asarray(probabilities, dtype=float)
    p = p / p.sum(axis=-1, keepdims=True)
    q = np.asarray(reference, dtype=float)[0]
    q = q / q.sum(axis=-1, keepdims=True)
    distance = 0.5 * np.abs(p - q[None]).sum(axis=-1).mean(axis=-1)
    lpd_difference = np.array([log_predictive_density(row, y) for row in p]) - log_predictive_density(q, y)
    return {"total_variation": spread(distance), "lpd_difference": spread(lpd_difference)}


def convergence_steps(traces) -> np.ndarray:
    """Steps to 95 % of each curve's rise (R, T) → (R,), NaN where the exponential fit does not get there."""
    traces = np.asarray(traces, dtype=float)
    if traces.shape[1] < 4:
        return np.full(traces.shape[0], np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy's covariance warning on flat curves
        return np.asarray(iterations_to_fraction(traces, FRACTION), dtype=float)


def waic_per_restart(log_likelihood) -> dict:
    """``arviz.waic`` of each restart's (M, N) pointwise log-likelihoods in (R, M, N): elpd_waic, p_waic, se (R,)."""
    import arviz

    from fgraph.arviz_export import inference_data

    rows = {"elpd_waic": [], "p_waic": [], "se": []}
    for values in np.asarray(log_likelihood, dtype=float):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # ArviZ's "posterior variance > 0.4" note, kept as p_waic
            result = arviz.waic(inference_data({}, {"y": values[None]}))
        for key in rows:
            rows[key].append(float(getattr(result, key)))
    return {key: spread(values) for key, values in rows.items()}


# ----------------------------------------------------------------------------- fits
def _cavi(X, y, n_classes: int, config: ExperimentConfig, K: int, seed: int) -> tuple:
    """One CAVI fit with R restarts: (fit, seconds)."""
    network = build_cmn(X, y, K, n_restarts=config.n_restarts, n_classes=n_classes, priors=PRIORS)
    started = time.perf_counter()
    fit = fit_cmn(network, iterations=config.iterations, tol=config.tol, seed=seed, n_jobs=config.n_jobs,
                  initial=INITIAL)
    return fit, time.perf_counter() - started


def _runtime(steps, seconds_per_step: float) -> dict:
    steps = spread(steps)
    return {"steps_to_95": steps, "seconds_per_step": float(seconds_per_step),
            "seconds_to_95": float(steps["mean"] * seconds_per_step)}


def _baseline_entry(fit, y_test, reference=None) -> dict:
    entry = {metric: spread(values) for metric, values in scores(fit.probabilities, y_test).items()}
    steps = convergence_steps(fit.trace) if fit.trace is not None else np.array([np.nan])
    entry["runtime"] = {**_runtime(steps, fit.seconds_per_step), "compile_seconds": fit.compile_seconds,
                        "run_seconds": fit.run_seconds}
    if reference is not None:
        entry["agreement_with_nuts"] = agreement(fit.probabilities, reference, y_test)
    if "divergences" in fit.extra:
        entry["divergences"] = np.asarray(fit.extra["divergences"]).tolist()
    return entry


def _run_baselines(split, n_classes: int, K: int, config: ExperimentConfig, seed: int, nuts: bool, traces: dict,
                   tag: str, bar) -> dict:
    """MLE, BBVI (and NUTS) on one split: entries by method (the CAVI entry is made by the caller)."""
    from fgraph_experiments.baselines.bbvi import fit_bbvi
    from fgraph_experiments.baselines.mle import fit_mle
    from fgraph_experiments.baselines.nuts import fit_nuts

    found, fits = {}, {}
    common = dict(n_experts=K, n_classes=n_classes, seed=seed, x_test=split.X_test)
    bar.set_postfix_str(f"N = {split.train_size}: MLE")
    fits["mle"] = fit_mle(split.X_train, split.y_train, steps=config.mle_steps, n_restarts=config.n_restarts, **common)
    bar.set_postfix_str(f"N = {split.train_size}: BBVI")
    fits["bbvi"] = fit_bbvi(split.X_train, split.y_train, steps=config.bbvi_steps, n_restarts=config.n_restarts,
                            priors=PRIORS, **common)
    if nuts:
        bar.set_postfix_str(f"N = {split.train_size}: NUTS")
        fits["nuts"] = fit_nuts(split.X_train, split.y_train, num_warmup=config.nuts_warmup,
                                num_samples=config.nuts_samples, num_chains=config.nuts_chains, priors=PRIORS,
                                **common)
    reference = fits["nuts"].probabilities if nuts else None
    for method, fit in fits.items():
        found[method] = _baseline_entry(fit, split.y_test, reference if method != "nuts" else None)
        found[method]["probabilities"] = fit.probabilities
        if fit.trace is not None:
            traces[f"{method}_{tag}"] = thin_trace(fit.trace)
    return found


# Loss traces of the baselines (one value per optimiser step, 20,000 steps) are kept at this many points:
# enough to draw them, a thousandth of the disk (the steps to 95 % are computed from the whole trace).
TRACE_POINTS = 200


def thin_trace(trace) -> np.ndarray:
    """``trace`` (R, S) at S ≤ :data:`TRACE_POINTS` evenly spaced steps, the first and the last kept."""
    trace = np.asarray(trace)
    if trace.shape[-1] <= TRACE_POINTS:
        return trace
    steps = np.unique(np.linspace(0, trace.shape[-1] - 1, TRACE_POINTS).round().astype(int))
    return trace[..., steps]


def _reliability(probabilities, y) -> dict:
    """The reliability diagram of all restarts' predictions pooled (R·N* points)."""
    p = np.asarray(probabilities, dtype=float)
    p = p / p.sum(axis=-1, keepdims=True)
    diagram = reliability_diagram(p.reshape(-1, p.shape[-1]), np.tile(y, p.shape[0]), ECE_BINS)
    return {"edges": diagram.edges, "confidence": diagram.confidence, "accuracy": diagram.accuracy,
            "count": diagram.count, "ece": diagram.expected_calibration_error}


def _checkpoints(directory: Path, settings: dict, name: str) -> Store:
    """The store of a data set's finished training sizes; the sizes of a run of other settings are removed (a
    rerun with other settings starts the data set again, as its result file is replaced too)."""
    try:
        return Store(directory, settings, f"{name}: training sizes")
    except StoreMismatchError:
        shutil.rmtree(directory)
        return Store(directory, settings, f"{name}: training sizes")


def _save_size(store: Store, row: dict, traces: dict) -> None:
    """Keep one training size's finished row (with its test probabilities) and traces, so that an
    interrupted data set resumes at its next size: records ``<size>.npz`` and ``<size>.json`` of the data set's
    store (``<name>_sizes/``), the row last, so that a row on disk always has its traces."""
    size = row["train_size"]
    store.put(f"{size}.npz", traces, key=size)
    store.put(f"{size}.json", {"config": store.identity, "row": row}, key=size)


def _load_size(store: Store, size: int):
    """(row, traces) of training size ``size`` kept in ``store``, else None."""
    record, traces = store.get(f"{size}.json", size), store.get(f"{size}.npz", size)
    if record is None or traces is None:
        return None
    row = record["row"]
    for entry in row["methods"].values():
        if "probabilities" in entry:
            entry["probabilities"] = np.asarray(entry["probabilities"], dtype=float)
    return row, traces


def _load(name: str, config: ExperimentConfig, rows_needed: int):
    if name == "pinwheels":
        return load_dataset("pinwheels", n=rows_needed, random_state=config.seed)
    return load_dataset(name)


def run_dataset(name: str, config: ExperimentConfig, out: Path, progress: bool = False) -> dict:
    """Run data set ``name`` (module docstring); write and return its results (``resumed`` True if reused)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    settings = json.loads(json.dumps(config.for_dataset(name), default=to_json))
    if path.exists():
        try:
            previous = json.loads(path.read_text())
        except json.JSONDecodeError:
            previous = {}
        if previous.get("config") == settings:
            previous["resumed"] = True
            return previous
    train_sizes, test_size = config.split_sizes(name)
    data = _load(name, config, train_sizes[-1] + test_size)
    L, K = data.n_classes, config.experts(name)
    splits = train_test_splits(data.X, data.y, train_sizes, test_size, random_state=config.seed)
    with_baselines = config.baselines and baselines_available()
    nuts = with_baselines and name in config.nuts_datasets
    traces, rows = {}, []
    steps = len(splits) + (1 if config.waic else 0)
    checkpoints = _checkpoints(out / f"{name}_sizes", settings, name)
    with progress_bar(steps, f"{name}: fits", progress) as bar:
        for i, split in enumerate(splits):
            seed = config.seed + i
            done = _load_size(checkpoints, split.train_size)
            if done is not None:
                row, row_traces = done
                rows.append(row)
                traces.update(row_traces)
                bar.update()
                continue
            size_traces = {}
            bar.set_postfix_str(f"N = {split.train_size}: CAVI")
            fit, seconds = _cavi(split.X_train, split.y_train, L, config, K, seed)
            log_p = predictive_log_proba(fit.posteriors(), split.X_test, config.predictive_samples, seed,
                                         n_jobs=config.n_jobs)
            probabilities = np.exp(log_p)
            size_traces[f"cavi_{split.train_size}"] = fit.elbo
            cavi = {metric: spread(values) for metric, values in scores(probabilities, split.y_test).items()}
            cavi["runtime"] = {**_runtime(convergence_steps(fit.elbo.T), seconds / fit.iterations),
                               "iterations": fit.iterations, "seconds": seconds}
            cavi["best_restart"] = fit.best_restart
            cavi["probabilities"] = probabilities
            methods = {"cavi": cavi}
            if with_baselines:
                methods.update(_run_baselines(split, L, K, config, seed, nuts, size_traces, str(split.train_size),
                                              bar))
                if nuts:
                    cavi["agreement_with_nuts"] = agreement(probabilities, methods["nuts"]["probabilities"],
                                                            split.y_test)
            row = {"train_size": split.train_size, "methods": methods}
            _save_size(checkpoints, row, size_traces)
            rows.append(row)
            traces.update(size_traces)
            bar.update()
        waic = _waic(data, L, K, config, nuts, with_baselines, bar) if config.waic else {"skipped": "waic=False"}
    largest = rows[-1]
    reliability = {method: _reliability(entry.pop("probabilities"), splits[-1].y_test)
                   for method, entry in largest["methods"].items()}
    for row in rows[:-1]:
        for entry in row["methods"].values():
            entry.pop("probabilities", None)
    result = {
        "dataset": name, "config": settings, "n_rows": int(data.X.shape[0]), "n_features": int(data.X.shape[1]),
        "n_classes": L, "n_experts": K, "test_size": test_size, "methods": [m for m in METHODS if m in
                                                                              largest["methods"]],
        "baselines": "run" if with_baselines else ("off" if not config.baselines else
                                                   "skipped: the baselines extra (jax, optax, numpyro, arviz) "
                                                   "is not installed"),
        "rows": rows, "waic": waic, "reliability": reliability, "resumed": False,
    }
    write_npz(out / f"{name}_traces.npz", traces)
    result["files"] = [path.name, f"{name}_traces.npz"]
    write_json(path, result)  # kept even if a figure fails
    result["files"] += plot_dataset(result, out)
    write_json(path, result)
    return json.loads(path.read_text())


def _waic(data, L: int, K: int, config: ExperimentConfig, nuts: bool, with_baselines: bool, bar) -> dict:
    """WAIC of each method fitted to the whole data set (z-scored as a whole)."""
    bar.set_postfix_str(f"WAIC, N = {len(data.y)}")
    if not arviz_available():
        bar.update()
        return {"skipped": "ArviZ is not installed (pip install -e 'examples[baselines]')"}
    scale = data.X.std(axis=0)
    X = (data.X - data.X.mean(axis=0)) / np.where(scale > 0, scale, 1.0)
    seed = config.seed + 1000
    fit, seconds = _cavi(X, data.y, L, config, K, seed)
    log_likelihood = pointwise_log_likelihood(fit.posteriors(), X, data.y, config.waic_draws, config.waic_inner,
                                              seed)
    found = {"n": int(len(data.y)), "cavi": {**waic_per_restart(log_likelihood), "best_restart": fit.best_restart,
                                             "fit_seconds": seconds}}
    if with_baselines:
        from fgraph_experiments.baselines.bbvi import fit_bbvi
        from fgraph_experiments.baselines.mle import fit_mle
        from fgraph_experiments.baselines.nuts import fit_nuts

        common = dict(n_experts=K, n_classes=L, seed=seed)
        bar.set_postfix_str(f"WAIC, N = {len(data.y)}: baselines")
        mle = fit_mle(X, data.y, steps=config.mle_steps, n_restarts=config.n_restarts, **common)
        found["mle"] = {"train_log_likelihood": spread(mle.log_likelihood[:, 0].sum(axis=-1)),
                        "note": "a point estimate has no posterior draws: its WAIC is undefined; "
                                "this is Σ_n log p(y_n | x_n, θ̂)"}
        bbvi = fit_bbvi(X, data.y, steps=config.bbvi_steps, n_restarts=config.n_restarts,
                        posterior_draws=config.waic_draws, priors=PRIORS, **common)
        found["bbvi"] = waic_per_restart(bbvi.log_likelihood)
        if nuts:
            sampled = fit_nuts(X, data.y, num_warmup=config.nuts_warmup, num_samples=config.nuts_samples,
                               num_chains=config.nuts_chains, priors=PRIORS, **common)
            pooled = sampled.log_likelihood.reshape(1, -1, sampled.log_likelihood.shape[-1])
            found["nuts"] = waic_per_restart(pooled)
    bar.update()
    return found


# ----------------------------------------------------------------------------- runtime scaling (Fig. 4)
def synthetic_data(n: int, d: int, n_classes: int, seed: int) -> tuple:
    """Inputs N(0, I) (n, d) and labels from a random linear softmax classifier (classes 0..L−1 all present)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    logits = X @ rng.standard_normal((d, n_classes)) * 2.0
    y = np.array([rng.choice(n_classes, p=np.exp(row - row.max()) / np.exp(row - row.max()).sum()) for row in logits])
    y[:n_classes] = np.arange(n_classes)
    return X, y


def time_per_iteration(X, y, K: int, h: int, n_classes: int, iterations: tuple, seed: int, repeats: int = 3) -> float:
    """Seconds per CAVI iteration (one restart): (t(i₂) − t(i₁)) / (i₂ − i₁), so the set-up cost cancels; each
    t the fastest of ``repeats`` fits (on a shared machine the fastest is the least disturbed)."""
    low, high = iterations
    times = []
    for count in (low, high):
        network = build_cmn(X, y, K, latent_dim=h, n_classes=n_classes, priors=PRIORS)
        fastest = np.inf
        for _ in range(repeats):
            started = time.perf_counter()
            fit_cmn(network, iterations=count, seed=seed, initial=INITIAL)
            fastest = min(fastest, time.perf_counter() - started)
        times.append(fastest)
    return max(times[1] - times[0], 0.0) / (high - low)


def runtime_scaling(grid: dict, base: dict, iterations: tuple, baseline_steps: int, progress: bool = False) -> dict:
    """Seconds per iteration as d, K or h grows (the others at ``base``), for CAVI and, if importable, MLE/BBVI.

    ``grid``: {"d": values, "K": values, "h": values}; ``base``: {"n", "d", "K", "h", "L"}. CAVI is one
    restart; MLE and BBVI one restart of ``baseline_steps`` compiled steps (their compile time excluded).
    Returns {parameter: {"values", "cavi", "mle", "bbvi"}} with seconds per step, and ``relative``
    (each method's times over its time at the smallest value: the paper's Figure 4).
    """
    with_baselines = baseline_steps > 0 and baselines_available()
    total = sum(len(values) for values in grid.values())
    found = {"base": base, "iterations": list(iterations), "baseline_steps": baseline_steps if with_baselines else 0}
    with progress_bar(total, "runtime scaling", progress) as bar:
        for parameter, values in grid.items():
            series = {"values": list(values), "cavi": []}
            if with_baselines:
                series.update(mle=[], bbvi=[])
            for value in values:
                sizes = {**base, parameter: value}
                X, y = synthetic_data(sizes["n"], sizes["d"], sizes["L"], seed=0)
                series["cavi"].append(time_per_iteration(X, y, sizes["K"], sizes["h"], sizes["L"], iterations, 0))
                if with_baselines:
                    from fgraph_experiments.baselines.bbvi import fit_bbvi
                    from fgraph_experiments.baselines.mle import fit_mle

                    # the baselines' latent dimension is L − 1, so h is varied through L for them
                    L = sizes["L"] if parameter != "h" else value + 1
                    Xb, yb = (X, y) if L == sizes["L"] else synthetic_data(sizes["n"], sizes["d"], L, seed=0)
                    series["mle"].append(fit_mle(Xb, yb, sizes["K"], L, steps=baseline_steps).seconds_per_step)
                    series["bbvi"].append(fit_bbvi(Xb, yb, sizes["K"], L, steps=baseline_steps,
                                                   posterior_draws=4, x1_draws=2, priors=PRIORS).seconds_per_step)
                bar.update()
            series["relative"] = {method: (np.asarray(series[method]) / series[method][0]).tolist()
                                  for method in ("cavi", "mle", "bbvi") if method in series}
            found[parameter] = series
    return found


def plot_runtime_scaling(scaling: dict, path: Path) -> bool:
    plt = pyplot()
    if plt is None:
        return False
    labels = {"d": "input dimension d", "K": "number of experts K", "h": "latent dimension h"}
    parameters = [p for p in ("d", "K", "h") if p in scaling]
    figure, axes = plt.subplots(1, len(parameters), figsize=(3.6 * len(parameters), 3.2), squeeze=False)
    for axis, parameter in zip(axes[0], parameters):
        series = scaling[parameter]
        for method, relative in series["relative"].items():
            axis.plot(series["values"], relative, "o-", color=COLOURS[method], label=LABELS[method])
        axis.set_xscale("log", base=2)
        axis.set_xticks(series["values"], [str(value) for value in series["values"]])
        axis.minorticks_off()
        axis.set_xlabel(labels[parameter])
        axis.set_ylabel("time per step / smallest")
        axis.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8, frameon=False)
    figure.tight_layout()
    write_figure(path, figure, dpi=80)
    plt.close(figure)
    return True


# ----------------------------------------------------------------------------- tables and figures
COLOURS = {"cavi": "tab:blue", "mle": "tab:red", "bbvi": "tab:green", "nuts": "tab:purple"}
LABELS = {"cavi": "CAVI (fgraph)", "mle": "MLE", "bbvi": "BBVI", "nuts": "NUTS"}


def plot_dataset(result: dict, out: Path) -> list:
    """``<name>.png`` (accuracy, LPD, ECE, steps to 95 %, seconds per step, time to 95 % vs training size) and
    ``<name>_reliability.png``; returns the file names written (none without matplotlib)."""
    plt = pyplot()
    if plt is None:
        return []
    name, rows = result["dataset"], result["rows"]
    sizes = [row["train_size"] for row in rows]
    panels = [("accuracy", "test accuracy"), ("lpd", "log predictive density"), ("ece", "ECE (20 bins)"),
              ("steps_to_95", "steps to 95 % of final objective"), ("seconds_per_step", "seconds per step"),
              ("seconds_to_95", "seconds to 95 %")]
    figure, axes = plt.subplots(2, 3, figsize=(11, 6))
    for axis, (metric, title) in zip(axes.flat, panels):
        for method in result["methods"]:
            present = [(size, row["methods"][method]) for size, row in zip(sizes, rows) if method in row["methods"]]
            xs = [size for size, _ in present]
            if metric in ("accuracy", "lpd", "ece", "steps_to_95"):
                source = [e[metric] if metric != "steps_to_95" else e["runtime"][metric] for _, e in present]
                means = [s["mean"] for s in source]
                stds = [s["std"] for s in source]
                axis.errorbar(xs, means, yerr=stds, fmt="o-", color=COLOURS[method], label=LABELS[method], capsize=2)
            else:
                axis.plot(xs, [e["runtime"][metric] for _, e in present], "o-", color=COLOURS[method],
                          label=LABELS[method])
        axis.set_xscale("log", base=2)
        axis.set_xticks(sizes, [str(size) for size in sizes])
        axis.minorticks_off()
        plotted = np.concatenate([np.asarray(line.get_ydata(), dtype=float) for line in axis.get_lines()] or [[]])
        if metric in ("seconds_per_step", "seconds_to_95", "steps_to_95") and np.any(plotted > 0):
            axis.set_yscale("log")
        axis.set_xlabel("training size")
        axis.set_title(title, fontsize=10)
        axis.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8, frameon=False)
    figure.suptitle(f"{name}: K = {result['n_experts']}, {result['config']['n_restarts']} restarts, "
                    f"test size {result['test_size']}", fontsize=11)
    figure.tight_layout()
    write_figure(out / f"{name}.png", figure, dpi=80)
    plt.close(figure)

    methods = list(result["reliability"])
    figure, axes = plt.subplots(1, len(methods), figsize=(3.2 * len(methods), 3.3), squeeze=False)
    for axis, method in zip(axes[0], methods):
        diagram = result["reliability"][method]
        edges = np.asarray(diagram["edges"], dtype=float)
        filled = np.asarray(diagram["count"]) > 0
        centres = 0.5 * (edges[1:] + edges[:-1])
        axis.bar(centres[filled], np.asarray(diagram["accuracy"], dtype=float)[filled], width=np.diff(edges)[filled],
                 color=COLOURS[method], alpha=0.6, edgecolor="black", linewidth=0.5)
        axis.plot([0, 1], [0, 1], "k--", linewidth=1)
        axis.set_xlim(0, 1)
        axis.set_ylim(0, 1)
        axis.set_xlabel("confidence")
        axis.set_ylabel("accuracy")
        axis.set_title(f"{LABELS[method]}: ECE {diagram['ece']:.3f}", fontsize=9)
    figure.suptitle(f"{name}, training size {sizes[-1]} (all restarts pooled)", fontsize=10)
    figure.tight_layout()
    write_figure(out / f"{name}_reliability.png", figure, dpi=80)
    plt.close(figure)
    return [f"{name}.png", f"{name}_reliability.png"]


def _cell(entry: dict) -> str:
    return f"{entry['mean']:.3f} ± {entry['std']:.3f}" if np.isfinite(entry["mean"]) else "–"


def results_table(results: list) -> str:
    """A markdown table: per data set, training size and method, the metrics (mean ± std over restarts) and runtime."""
    lines = ["| data set | N train | method | accuracy | LPD | ECE | s / step | steps to 95 % | TV to NUTS |",
             "|---|---:|---|---|---|---|---:|---:|---|"]
    for result in results:
        for row in result["rows"]:
            for method in result["methods"]:
                entry = row["methods"].get(method)
                if entry is None:
                    continue
                runtime = entry["runtime"]
                tv = entry.get("agreement_with_nuts", {}).get("total_variation")
                lines.append(
                    f"| {result['dataset']} | {row['train_size']} | {LABELS[method]} | {_cell(entry['accuracy'])} | "
                    f"{_cell(entry['lpd'])} | {_cell(entry['ece'])} | {runtime['seconds_per_step']:.3g} | "
                    f"{_cell(runtime['steps_to_95']).split(' ±')[0]} | {_cell(tv) if tv else '–'} |")
    lines += ["", "| data set | N | method | WAIC (elpd, mean ± std over restarts) | p_waic |", "|---|---:|---|---|---|"]
    for result in results:
        waic = result["waic"]
        if "skipped" in waic:
            lines.append(f"| {result['dataset']} | – | – | skipped: {waic['skipped']} | – |")
            continue
        for method in METHODS:
            if method not in waic:
                continue
            entry = waic[method]
            if "elpd_waic" in entry:
                lines.append(f"| {result['dataset']} | {waic['n']} | {LABELS[method]} | {_cell(entry['elpd_waic'])} | "
                             f"{_cell(entry['p_waic'])} |")
            else:
                lines.append(f"| {result['dataset']} | {waic['n']} | {LABELS[method]} | training log-likelihood "
                             f"{_cell(entry['train_log_likelihood'])} (no posterior) | – |")
    return "\n".join(lines) + "\n"


def print_result(result: dict) -> None:
    """A few lines per data set: CAVI's metrics at each size, and the WAIC."""
    resumed = " (reused from an earlier run)" if result.get("resumed") else ""
    print(f"{result['dataset']}: N = {result['n_rows']}, d = {result['n_features']}, L = {result['n_classes']}, "
          f"K = {result['n_experts']}, {result['config']['n_restarts']} restarts, baselines {result['baselines']}"
          f"{resumed}")
    for row in result["rows"]:
        parts = []
        for method in result["methods"]:
            entry = row["methods"].get(method)
            if entry is not None:
                parts.append(f"{method} acc {entry['accuracy']['mean']:.3f} lpd {entry['lpd']['mean']:.3f} "
                             f"ece {entry['ece']['mean']:.3f}")
        print(f"  N = {row['train_size']:5d}: " + "; ".join(parts))
    waic = result["waic"]
    if "skipped" in waic:
        print(f"  WAIC skipped: {waic['skipped']}")
    else:
        found = [f"{m} {waic[m]['elpd_waic']['mean']:.2f}" for m in METHODS if m in waic and "elpd_waic" in waic[m]]
        print(f"  WAIC (elpd, full data N = {waic['n']}): " + ", ".join(found))
