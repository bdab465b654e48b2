"""Runs on floats compiled by numba (:mod:`fgraph.float_kernels`) equal the same runs in Python and on objects.

Each model of ``test_floats`` is run three ways from the same data: its sweeps after the first compiled by
numba (every structure hot from its first run: ``HOT_WORK`` 0), in Python on floats, and on objects; then
what the compiled form promises beside its numbers: a kernel kept on disk for later processes, written so that
a killed writer leaves nothing half-written, an interruption between its entries, a twin numba cannot compile
reported and run in Python, and the compared mode checking the compiled form too.
"""
from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import fgraph as fg
import fgraph.codegen as codegen
import fgraph.float_kernels as float_kernels
import fgraph.float_twins as float_twins
import fgraph.floats as floats
import fgraph.float_math as float_math
from fgraph import jit
from tests.engine.test_floats import MODELS, Y, Z

pytest.importorskip("numba")
ROOT = Path(__file__).resolve().parents[2]
MODELS_DATA = (Y, Z)


@pytest.fixture(autouse=True)
def cache_directory(tmp_path, monkeypatch):
    """A cache of its own for each test, and every structure hot from its first run (unless a test says)."""
    monkeypatch.setenv("FGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(floats, "HOT_WORK", 0)
    return tmp_path / "cache"


def _spy_on_kernels(monkeypatch) -> list:
    """The kernels handed out during the test (None where a run stayed in Python)."""
    handed = []
    original = float_kernels.kernel

    def spy(*arguments):
        found = original(*arguments)
        handed.append(found)
        return found

    monkeypatch.setattr(float_kernels, "kernel", spy)
    return handed


def _run(monkeypatch, mode: str, build, init, **options):
    monkeypatch.setattr(codegen, "MODE", mode)
    return fg.infer(build(), algorithm="vmp", init=init, **options)


@pytest.mark.parametrize("name", MODELS)
def test_a_compiled_run_equals_the_run_in_python_and_on_objects(name, monkeypatch):
    """Equal to the bit to the run in Python, and to round-off to the run on objects."""
    build, init = MODELS[name]
    handed = _spy_on_kernels(monkeypatch)
    compiled = _run(monkeypatch, "auto", build, init, iterations=40)
    assert len(handed) == 1 and handed[0] is not None
    with jit.compiled_loops(False):  # the run on floats in Python
        in_python = _run(monkeypatch, "auto", build, init, iterations=40)
    assert len(handed) == 1
    on_objects = _run(monkeypatch, "interpreted", build, init, iterations=40)
    # the same operations in the same order (lgamma and digamma written out): the same bits
    assert compiled.free_energy == in_python.free_energy
    for variable, q in in_python.marginals.items():
        mine = compiled.marginal(variable)
        assert (float(mine.mean), float(mine.var)) == (float(q.mean), float(q.var))
    for other in (in_python, on_objects):
        assert compiled.iterations == other.iterations == 40
        np.testing.assert_allclose(compiled.free_energy, other.free_energy, rtol=1e-12)
        for variable, q in other.marginals.items():
            mine = compiled.marginal(variable)
            np.testing.assert_allclose([mine.mean, mine.var], [q.mean, q.var], rtol=1e-12)


def test_the_tolerance_stops_a_compiled_run_at_the_same_sweep(monkeypatch):
    build, init = MODELS["two groups, one precision"]
    compiled = _run(monkeypatch, "auto", build, init, iterations=500, tol=1e-10)
    on_objects = _run(monkeypatch, "interpreted", build, init, iterations=500, tol=1e-10)
    assert compiled.converged and on_objects.converged
    assert compiled.iterations == on_objects.iterations < 500
    last = _run(monkeypatch, "auto", build, init, iterations=9, free_energy="last")
    every = _run(monkeypatch, "interpreted", build, init, iterations=9)
    assert len(last.free_energy) == 1
    assert last.free_energy[0] == pytest.approx(every.free_energy[-1], rel=1e-12)


def _two_plates(first, second):
    """A structure no other test runs (its kernel is not in memory yet): two plates of one mean and precision."""
    def build():
        with fg.Model() as model:
            mu = fg.nodes.Normal("mu", mean=0.0, var=10.0)
            tau = fg.nodes.Gamma("tau", shape=1.0, rate=1.0)
            fg.nodes.Normal("y", mean=mu, precision=tau, observed=first)
            fg.nodes.Normal("z", mean=mu, precision=tau, observed=second)
        return model
    return build


def test_a_structure_is_compiled_once_it_is_hot(monkeypatch):
    """In the default mode a structure runs in Python until its calls on floats pass ``HOT_WORK``; every plan
    of the same structure (other data, other plate sizes) shares the compiled kernel after that."""
    init = {"tau": fg.Gamma(2.0, 0.5)}
    handed = _spy_on_kernels(monkeypatch)
    monkeypatch.setattr(floats, "HOT_WORK", 2_000)
    first = _run(monkeypatch, "auto", _two_plates(MODELS_DATA[0], MODELS_DATA[1]), init, iterations=20)
    assert first.iterations == 20 and handed == []  # 19 sweeps of a few calls: not hot
    _run(monkeypatch, "auto", _two_plates(MODELS_DATA[0], MODELS_DATA[1]), init, iterations=1_000)
    assert len(handed) == 1 and handed[0] is not None
    other = _run(monkeypatch, "auto", _two_plates(np.linspace(-1.0, 2.0, 37), MODELS_DATA[0]), init, iterations=20)
    assert len(handed) == 2 and handed[1] is handed[0]
    on_objects = _run(monkeypatch, "interpreted", _two_plates(np.linspace(-1.0, 2.0, 37), MODELS_DATA[0]), init,
                      iterations=20)
    np.testing.assert_allclose(other.free_energy, on_objects.free_energy, rtol=1e-12)


def test_a_compiled_kernel_is_kept_on_disk_for_a_later_process(cache_directory):
    """The first process compiles and writes the kernel's module and numba's cache; a second finds both.
    No temporary file is left behind."""
    script = textwrap.dedent("""
        import numpy as np, fgraph as fg
        import fgraph.codegen as codegen
        import fgraph.floats as floats
        floats.HOT_WORK = 0
        from tests.engine.test_floats import MODELS, Y, Z
        build, init = MODELS["normal-gamma"]
        result = fg.infer(build(), algorithm="vmp", init=init, iterations=30)
        print(repr(result.free_energy[-1]))
    """)
    environment = dict(os.environ, FGRAPH_CACHE_DIR=str(cache_directory), PYTHONPATH=str(ROOT))
    outputs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment,
                              cwd=ROOT, check=True)
        outputs.append(done.stdout.strip())
        runs = cache_directory / "runs"
        modules = sorted(path.name for path in runs.glob("run_*.py"))
        assert len(modules) == 1
        assert any(runs.glob("__pycache__/run_*.nbi")), "numba's index of the compiled kernel"
        assert not list(runs.glob(".run_*"))
    assert outputs[0] == outputs[1]


def _in_processes(cache_directory, count: int) -> list:
    """The normal-gamma run (hot from its first run) in ``count`` processes started together: their outputs,
    each the last free energy and the warnings it gave."""
    script = textwrap.dedent("""
        import warnings
        warnings.simplefilter("always")
        import fgraph as fg
        import fgraph.floats as floats
        floats.HOT_WORK = 0
        from tests.engine.test_floats import MODELS
        build, init = MODELS["normal-gamma"]
        with warnings.catch_warnings(record=True) as given:
            warnings.simplefilter("always")
            result = fg.infer(build(), algorithm="vmp", init=init, iterations=30)
        print(repr(result.free_energy[-1]))
        print(" | ".join(f"{w.category.__name__}: {w.message}" for w in given))
    """)
    environment = dict(os.environ, FGRAPH_CACHE_DIR=str(cache_directory), PYTHONPATH=str(ROOT))
    processes = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env=environment, cwd=ROOT) for _ in range(count)]
    outputs = []
    for process in processes:
        out, err = process.communicate(timeout=600)
        assert process.returncode == 0, err
        energy, _, warned = out.strip().partition("\n")
        outputs.append((energy, warned))
    return outputs


def test_processes_compiling_the_same_run_together_share_one_cache(cache_directory):
    outputs = _in_processes(cache_directory, 2)
    assert outputs[0] == outputs[1] and outputs[0][1] == ""  # the same numbers, no warning
    runs = cache_directory / "runs"
    assert len(list(runs.glob("run_*.py"))) == 1 and not list(runs.glob(".run_*"))


@pytest.mark.parametrize("damaged", ["the module", "every file"])
def test_a_damaged_cache_is_replaced(cache_directory, damaged):
    """Cache files damaged outside fgraph (truncated by a full disk, overwritten): the next process names them,
    removes them, compiles again and gives the same numbers; the one after reads the new cache without a word."""
    ((first, warned),) = _in_processes(cache_directory, 1)
    assert warned == ""
    runs = cache_directory / "runs"
    (module,) = runs.glob("run_*.py")
    for path in [module] + (list(runs.glob("__pycache__/run_*")) if damaged == "every file" else []):
        path.write_bytes(path.read_bytes()[:100])
    ((second, warned),) = _in_processes(cache_directory, 1)
    assert second == first
    assert "DamagedCacheWarning" in warned and str(module) in warned
    ((third, warned),) = _in_processes(cache_directory, 1)  # from the cache written again
    assert third == first and warned == ""


def test_a_cache_directory_that_cannot_be_written_keeps_the_kernel_in_memory(monkeypatch, tmp_path):
    blocked = tmp_path / "a file, not a directory"
    blocked.write_text("")
    monkeypatch.setenv("FGRAPH_CACHE_DIR", str(blocked))
    build, init = MODELS["hierarchical precision"]
    handed = _spy_on_kernels(monkeypatch)
    compiled = _run(monkeypatch, "auto", build, init, iterations=25)
    on_objects = _run(monkeypatch, "interpreted", build, init, iterations=25)
    assert handed and handed[0] is not None
    np.testing.assert_allclose(compiled.free_energy, on_objects.free_energy, rtol=1e-12)


def test_an_interrupted_compiled_run_keeps_its_complete_sweeps(monkeypatch):
    """Ctrl-C reaches a compiled run between its entries (one sweep each here): the result is the state after
    the last complete sweep, as a run of that many sweeps."""
    monkeypatch.setattr(float_kernels, "CALLS_PER_CHUNK", 1)
    original = float_kernels.kernel

    def interrupting(*arguments):
        compiled = original(*arguments)
        entries = {"count": 0}

        def entry(*kernel_arguments):
            entries["count"] += 1
            if entries["count"] == 12:
                raise KeyboardInterrupt
            return compiled(*kernel_arguments)

        return entry

    monkeypatch.setattr(float_kernels, "kernel", interrupting)
    build, init = MODELS["normal-gamma"]
    result = _run(monkeypatch, "auto", build, init, iterations=50)
    assert result.interrupted and result.iterations == 12  # the first sweep on objects, 11 compiled
    assert len(result.free_energy) == 12
    reference = _run(monkeypatch, "interpreted", build, init, iterations=12)
    np.testing.assert_allclose(result.free_energy, reference.free_energy, rtol=1e-12)
    np.testing.assert_allclose(result.marginal("mu").mean, reference.marginal("mu").mean, rtol=1e-12)


def test_a_twin_numba_cannot_compile_is_reported_and_runs_in_python(monkeypatch):
    from fgraph.rules.normal_mean_precision.precision import mean_field

    honest = float_twins.FLOAT_RULES[mean_field]

    def uncompilable(*expectations):  # a dict: not in numba's subset
        return {"twin": honest.function(*expectations)}["twin"]

    monkeypatch.setitem(float_twins.FLOAT_RULES, mean_field, float_twins.FloatTwin(uncompilable, honest.reads, honest.output))
    build, init = MODELS["normal-gamma"]
    with pytest.warns(float_kernels.FloatKernelWarning, match="could not be compiled by numba"):
        result = _run(monkeypatch, "auto", build, init, iterations=20)
    on_objects = _run(monkeypatch, "interpreted", build, init, iterations=20)
    np.testing.assert_allclose(result.free_energy, on_objects.free_energy, rtol=1e-12)


def test_the_compared_mode_checks_the_compiled_form(monkeypatch):
    """A kernel whose numbers differ from the Python run's (here: one message nudged after each entry) is
    caught by ``FGRAPH_SWEEPS=compared``, naming the compiled form."""
    build, init = MODELS["normal-gamma"]
    _run(monkeypatch, "compared", build, init, iterations=6)  # the honest kernel agrees
    original = float_kernels.kernel

    def nudged(*arguments):
        compiled = original(*arguments)

        def entry(state, *rest):
            outcome = compiled(state, *rest)
            state[-2] *= 1.0 + 1e-6
            return outcome

        return entry

    monkeypatch.setattr(float_kernels, "kernel", nudged)
    with pytest.raises(codegen.GeneratedSweepMismatch, match="compiled by numba"):
        _run(monkeypatch, "compared", build, init, iterations=6)


def test_every_float_twin_compiles(monkeypatch):
    """Every registered twin of a rule or an energy is in numba's subset, and its compiled copy returns the
    Python twin's floats (for expectations a message of its kind can have)."""
    arguments = {"mean": 0.7, "var": 0.3, "mean_log": -0.4, "mean_inverse": 1.6, "mean_log_gamma": 0.2,
                 "value": 1.3}
    for twin in list(float_twins.FLOAT_RULES.values()) + list(float_twins.FLOAT_ENERGIES.values()):
        values = [arguments[name] for _, wanted in twin.reads for name in wanted]
        compiled = float_kernels.compiled_copy(twin.function)
        np.testing.assert_allclose(np.array(compiled(*values), dtype=float),
                                   np.array(twin.function(*values), dtype=float), rtol=1e-14)


@pytest.mark.parametrize("x", [1e-25, 1e-3, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.99, 5.0, 7.25, 100.5, 1e6, 1e300])
def test_lgamma_on_floats_is_pythons_in_every_bit_compiled_or_not(x):
    assert float_math.lgamma(x) == math.lgamma(x)
    assert float_kernels.compiled_copy(float_math.lgamma)(x) == math.lgamma(x)
