"""The conditional mixture network on pinwheels by CAVI, against MLE, BBVI and NUTS, and its runtime scaling
(Heins et al., §4.1, Figure 2, and §4.3, Figure 4).

Data: pinwheels (5 arms, radial std 0.7, tangential std 0.3, rate 0.2; Appendix C.1), nested stratified
training sets of 50, 100, …, 1600 points and 500 test points, z-scored by the training statistics.
Model: the CMN of :mod:`fgraph.models.cmn` with K = 10 experts and h = L − 1 = 4, fitted by CAVI with
16 restarts as copies of one graph. The metrics, runtime, WAIC and baselines are those of
``fgraph run cmn-uci`` (:mod:`fgraph_experiments._cmn_experiment`).

Runtime scaling (Figure 4): seconds per CAVI iteration on synthetic data (N(0, I) inputs, labels of a
random linear classifier) as the input dimension d, the number of experts K and the latent dimension h
grow one at a time from a base model, measured as (t(i₂) − t(i₁)) / (i₂ − i₁) over two fits so that
set-up costs cancel (each t the fastest of three fits); with the baselines extra, MLE and BBVI seconds per compiled step beside it (their
latent dimension is L − 1, so for them h grows with the number of classes). Written to
``runtime_scaling.png`` and the summary's ``runtime_scaling``.

Outputs in ``out``: ``pinwheels.json``, ``pinwheels_traces.npz``, ``pinwheels.png``,
``pinwheels_reliability.png``, ``runtime_scaling.png``, ``results.md`` and ``summary.json``. ``--quick``
runs two small training sizes with 2 restarts and no baselines, and a two-point scaling grid.
"""
from __future__ import annotations

from pathlib import Path

from fgraph_experiments._cmn_experiment import ExperimentConfig, plot_runtime_scaling, runtime_scaling
from fgraph_experiments.cmn_uci import run_experiment

DESCRIPTION = "conditional mixture network by CAVI on pinwheels vs MLE/BBVI/NUTS, and runtime scaling in d, K, h (paper Fig. 2, 4)"

FULL = ExperimentConfig(datasets=("pinwheels",), n_experts=10, n_restarts=16, iterations=200, predictive_samples=128,
                        waic_draws=100, waic_inner=32, mle_steps=20000, bbvi_steps=20000,
                        nuts_datasets=("pinwheels",))
# the configuration measured in docs/cmn-experiments.md (the first three training sizes, fewer steps, no NUTS)
MEDIUM = ExperimentConfig(datasets=("pinwheels",), n_experts=10, n_restarts=16, iterations=100, max_sizes=3,
                          predictive_samples=64, waic_draws=50, waic_inner=16, mle_steps=2000, bbvi_steps=1000)
QUICK = ExperimentConfig(datasets=("pinwheels",), n_experts=10, n_restarts=2, iterations=8,
                         sizes={"pinwheels": ((25, 50), 100)}, predictive_samples=16, waic_draws=20, waic_inner=8,
                         baselines=False)

SCALING_BASE = {"n": 500, "d": 4, "K": 4, "h": 2, "L": 3}
SCALING_GRID = {"d": (2, 4, 8, 16, 32), "K": (2, 4, 8, 16, 32), "h": (1, 2, 4, 8, 16)}
SCALING_ITERATIONS = (5, 15)
SCALING_BASELINE_STEPS = 500
MEDIUM_SCALING = dict(grid={"d": (2, 8, 32), "K": (2, 8, 32), "h": (1, 4, 16)}, base=SCALING_BASE,
                      iterations=SCALING_ITERATIONS, baseline_steps=300)
QUICK_SCALING_BASE = {"n": 60, "d": 2, "K": 2, "h": 1, "L": 2}
QUICK_SCALING_GRID = {"d": (2, 4), "K": (2, 4), "h": (1, 2)}
QUICK_SCALING_ITERATIONS = (2, 8)


def run(quick: bool = False, out: Path = Path("out/cmn-pinwheels"), progress: bool = False,
        config: ExperimentConfig | None = None, scaling: dict | None = None) -> dict:
    """Run the pinwheels experiment (``config``, default :data:`QUICK` or :data:`FULL`) and the scaling study
    (``scaling``: keyword arguments of :func:`~fgraph_experiments._cmn_experiment.runtime_scaling`; ``{}`` skips it)."""
    out = Path(out)
    config = config or (QUICK if quick else FULL)
    if scaling is None:
        scaling = (dict(grid=QUICK_SCALING_GRID, base=QUICK_SCALING_BASE, iterations=QUICK_SCALING_ITERATIONS,
                        baseline_steps=0) if quick else
                   dict(grid=SCALING_GRID, base=SCALING_BASE, iterations=SCALING_ITERATIONS,
                        baseline_steps=SCALING_BASELINE_STEPS))
    extra = {}
    if scaling:
        found = runtime_scaling(progress=progress, **scaling)
        extra["runtime_scaling"] = found
        for parameter in ("d", "K", "h"):
            if parameter in found:
                series = found[parameter]
                times = ", ".join(f"{v}: {1e3 * t:.1f}" for v, t in zip(series["values"], series["cavi"]))
                print(f"CAVI ms per iteration as {parameter} grows ({times})")
    summary = run_experiment("cmn-pinwheels", config, quick, out, progress, extra)
    if scaling and plot_runtime_scaling(extra["runtime_scaling"], out / "runtime_scaling.png"):
        summary["files"].append("runtime_scaling.png")
        from fgraph.examples import write_summary

        write_summary(out, summary)
    return summary
