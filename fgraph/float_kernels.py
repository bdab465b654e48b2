"""Runs on floats compiled by numba (the ``fast`` extra), cached on disk per structure.

A run on floats (:mod:`fgraph.floats`) is the source of one function over float locals, written in the
subset of Python that numba compiles: its messages and energies in arrays, its rules' and energies' float
twins called by name. In Python each rule or energy call costs about a third of a microsecond; compiled,
some nanoseconds. The first compile of a structure takes about a second, so it is made only for a
structure that is hot (:data:`fgraph.floats.HOT_WORK`) and kept:

* in memory, per source and twins, for the rest of the process;
* on disk, as a module file named by a hash of the source, of the twins' code and of numba's version,
  with numba's own cache beside it (``cache=True``): a later process loads the compiled kernel in about
  0.2 s, most of it importing numba. The directory is ``FGRAPH_CACHE_DIR``, else
  ``$XDG_CACHE_HOME/fgraph``, else ``~/.cache/fgraph``. A module file is written to a temporary name and
  renamed (a killed or concurrent writer leaves either no file or the whole file); files damaged outside
  fgraph are reported by name, removed and the kernel compiled again; a directory that cannot be written keeps the kernel
  in memory only.

The twins are compiled as copies whose globals name compiled copies of the plain functions they call
(:func:`compiled_copy`), so a twin is written once, in plain Python, and serves both forms. A twin that
numba cannot compile is reported (a warning naming the model) and its run stays in Python.

The kernel runs at most :data:`CALLS_PER_CHUNK` calls per entry (:func:`run`): numba's code does not see
Ctrl-C, so a long run returns to Python that often and an interruption keeps the last complete sweep, as
in Python.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import math
import os
import sys
import tempfile
import types
import warnings
from pathlib import Path

from fgraph import float_math

#: The rule and energy calls of one kernel entry: some milliseconds, the longest a Ctrl-C waits.
CALLS_PER_CHUNK = 1_000_000

_KERNELS: dict = {}  # (source, twins) -> numba dispatcher, or None when it could not be compiled
_COPIES: dict = {}  # plain function -> its compiled copy


class FloatKernelWarning(RuntimeWarning):
    """A run on floats that numba could not compile: it runs in Python."""


class DamagedCacheWarning(RuntimeWarning):
    """A compiled run on disk that could not be read: named, removed and compiled again."""


def cache_directory() -> Path:
    """Where compiled runs are kept (see the module docstring)."""
    given = os.environ.get("FGRAPH_CACHE_DIR")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "fgraph"


def loaded(source: str, twins: tuple) -> bool:
    """Whether the kernel of this source and these twins is in memory (its later runs cost no compile)."""
    return _KERNELS.get((source, twins)) is not None


def kernels_in_memory() -> int:
    """How many compiled runs this process holds."""
    return sum(found is not None for found in _KERNELS.values())


def kernel(source: str, twins: tuple, model_name: str):
    """The numba kernel of a run's ``source`` calling ``twins`` (``((name, function), ...)``), compiled or
    loaded once per process; None (with a :class:`FloatKernelWarning`) when numba cannot compile it.

    A cache on disk that cannot be read (a file damaged outside fgraph) is reported by name
    (:class:`DamagedCacheWarning`), removed and the kernel compiled again; one that cannot be written leaves
    the kernel in memory only."""
    key = (source, twins)
    if key in _KERNELS:
        return _KERNELS[key]
    try:
        cached = _CachedRun.of(source, twins)
        function = None
        if cached is not None:
            try:
                function = _compiled(cached.run_function(), on_disk=True)
            except Exception as error:  # noqa: BLE001 — damaged cache files fail in pickle, import or numba alike
                warnings.warn(f"the compiled run cached in {cached.path} (or numba's files beside it) could not be "
                              f"read ({type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}); "
                              f"removed and compiled again", DamagedCacheWarning, stacklevel=2)
                cached.remove()
                cached = _CachedRun.of(source, twins)
                function = _compiled(cached.run_function(), on_disk=True) if cached is not None else None
        if function is None:  # a twin not importable by name, or no cache directory to write
            namespace = _namespace(twins)
            exec(compile(source, "<fgraph run on floats, compiled>", "exec"), namespace)
            function = _compiled(namespace["run"], on_disk=False)
    except Exception as error:  # noqa: BLE001 — numba's typing errors have no common public base
        warnings.warn(f"the run on floats of model {model_name!r} could not be compiled by numba "
                      f"({type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}); it runs "
                      f"in Python", FloatKernelWarning, stacklevel=2)
        function = None
    _KERNELS[key] = function
    return function


def _compiled(run_function, on_disk: bool):
    """``run_function`` compiled now for the argument types every run passes (a failure is seen here, not
    mid-run), cached on disk by numba (``on_disk``)."""
    import numba

    function = numba.njit(nogil=True, cache=on_disk)(run_function)
    function.compile((numba.float64[::1], numba.float64[::1], numba.int64[::1], numba.int64, numba.boolean,
                      numba.float64, numba.boolean, numba.float64[::1]))
    return function


def run(kernel_function, statements: int, state, energies, progress, iterations: int, free_energy: bool,
        tol: float, final: bool, parameters) -> tuple:
    """``iterations`` sweeps of a compiled run, in entries of at most :data:`CALLS_PER_CHUNK` calls (the
    arguments as the run's, as arrays: state, energies, parameters float64, progress int64): ``(met,
    failed)``."""
    chunk = max(1, CALLS_PER_CHUNK // statements)
    start = int(progress[0])
    met = failed = False
    while not (met or failed):
        left = iterations - (int(progress[0]) - start)
        if left <= 0:
            break
        now = min(left, chunk)
        met, failed = kernel_function(state, energies, progress, now, free_energy, tol, final and now == left,
                                      parameters)
    return bool(met), bool(failed)


def compiled_copy(function):
    """``function`` compiled by numba, as a copy whose globals name compiled copies of the plain Python
    functions it calls (so that a float twin and the helpers it shares with its rule compile unchanged)."""
    found = _COPIES.get(function)
    if found is None:
        import numba

        names = dict(function.__globals__)
        for name in function.__code__.co_names:
            value = names.get(name)
            if isinstance(value, types.FunctionType) and value is not function:
                names[name] = compiled_copy(value)
        copy = types.FunctionType(function.__code__, names, function.__name__, function.__defaults__,
                                  function.__closure__)
        found = _COPIES[function] = numba.njit(nogil=True)(copy)
    return found


def compiled_by_name(module: str, qualname: str):
    """The compiled copy of the function ``module.qualname`` (what a cached run's module file calls)."""
    return compiled_copy(_imported(module, qualname))


def _imported(module: str, qualname: str):
    """The object ``module.qualname``, imported (ImportError or AttributeError where it is not there)."""
    value = importlib.import_module(module)
    for part in qualname.split("."):
        value = getattr(value, part)
    return value


#: The names a run's source reads besides its twins: compiled special functions (module, name) and constants.
_SPECIAL_FUNCTIONS = (("digamma", "fgraph.float_math"), ("lgamma", "fgraph.float_math"))
_HEADER = ["# A run on floats of fgraph (fgraph.floats), compiled by numba (fgraph.float_kernels).",
           "import math",
           "from math import log",
           "from fgraph.float_kernels import compiled_by_name",
           "from fgraph.float_math import LOG_2PI",
           "INF = math.inf"]


def _namespace(twins: tuple) -> dict:
    """The globals of a run compiled in memory: what a cached module's header makes (:data:`_HEADER`)."""
    namespace = {"log": math.log, "LOG_2PI": float_math.LOG_2PI, "INF": math.inf}
    namespace.update((name, compiled_by_name(module, name)) for name, module in _SPECIAL_FUNCTIONS)
    namespace.update((name, compiled_copy(function)) for name, function in twins)
    return namespace


def _by_name(function) -> tuple | None:
    """``(module, qualname)`` under which ``function`` is imported again, or None."""
    module, qualname = getattr(function, "__module__", None), getattr(function, "__qualname__", "")
    if not module or "<" in qualname:
        return None
    try:
        value = _imported(module, qualname)
    except (ImportError, AttributeError):
        return None
    return (module, qualname) if value is function else None


def _code_text(function, seen: set) -> str:
    """The source of ``function`` and of the plain functions it calls (what its compiled copy is made of)."""
    if function in seen:
        return ""
    seen.add(function)
    try:
        text = inspect.getsource(function)
    except (OSError, TypeError):
        text = repr(function.__code__.co_code)
    for name in function.__code__.co_names:
        value = function.__globals__.get(name)
        if isinstance(value, types.FunctionType):
            text += _code_text(value, seen)
    return text


class _CachedRun:
    """The module file of one run in the cache directory (named by the digest of what it is made of) and the
    files numba keeps beside it."""

    def __init__(self, path: Path, text: str):
        self.path, self.text = path, text

    @classmethod
    def of(cls, source: str, twins: tuple) -> "_CachedRun | None":
        """The run's module file, written (again) if missing or not what it should be; None when a twin cannot
        be imported by name or the directory cannot be written."""
        import numba

        named = [(name, _by_name(function)) for name, function in twins]
        if any(found is None for _, found in named):
            return None
        header = _HEADER + [f"{name} = compiled_by_name({module!r}, {name!r})" for name, module in _SPECIAL_FUNCTIONS]
        header += [f"{name} = compiled_by_name({module!r}, {qualname!r})" for name, (module, qualname) in named]
        text = "\n".join(header) + "\n\n\n" + source
        seen: set = set()
        # what the compiled kernel is made of: the module's text, the code of what it calls, numba's version
        fingerprint = "\n".join([text, numba.__version__]
                                + [_code_text(getattr(float_math, name), seen) for name, _ in _SPECIAL_FUNCTIONS]
                                + [_code_text(function, seen) for _, function in twins])
        digest = hashlib.sha256(fingerprint.encode()).hexdigest()[:24]
        cached = cls(cache_directory() / "runs" / f"run_{digest}.py", text)
        try:
            if not cached.path.exists():
                cached._write()
            elif cached.path.read_bytes() != text.encode():  # the file of this very text, changed outside fgraph
                warnings.warn(f"the compiled run cached in {cached.path} is not the text it was written with; "
                              f"written again", DamagedCacheWarning, stacklevel=3)
                cached.remove()
                cached._write()
        except OSError:
            return None
        return cached

    def _write(self) -> None:
        """Write the module whole or not at all (a temporary file renamed): a killed writer leaves no part of
        it, and concurrent writers of the same run write the same text."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".run_", suffix=".tmp")
        try:
            with os.fdopen(handle, "w") as file:
                file.write(self.text)
                file.flush()
                os.fsync(file.fileno())
            os.chmod(temporary, 0o644)  # (mkstemp makes it private; the cache is the user's, like numba's own)
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise

    def run_function(self):
        """The module's ``run`` (imported once per process)."""
        name = f"fgraph_{self.path.stem}"
        module = sys.modules.get(name)
        if module is None:
            spec = importlib.util.spec_from_file_location(name, self.path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            sys.modules[name] = module
        return module.run

    def remove(self) -> None:
        """Remove the module and numba's files of it (they could not be read)."""
        sys.modules.pop(f"fgraph_{self.path.stem}", None)
        for path in [self.path, *self.path.parent.glob(f"__pycache__/{self.path.stem}.*")]:
            with contextlib.suppress(OSError):
                path.unlink()
