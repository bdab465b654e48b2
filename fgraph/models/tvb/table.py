"""What every TVB table is, whatever its model: the roles of its cells, the coverage curve and the choice of ω of a
functional (Algorithm 2), and its files.

A table holds fractional VB posteriors for every ω of a grid (first axis, m values) and every role on the second
axis: ``FULL`` = 0, the whole data; ``SPLIT`` = 1, the half X₁; 2 … B + 1, the bootstrap resamples of the other half
X₂. :class:`Table` is the base of the Gaussian mixture's table (:class:`fgraph.models.tvb.gmm.TVBTable`) and of
the Bayesian mixture linear regression's (:class:`fgraph.models.tvb.bmlr.BMLRTVBTable`); a table is built by
:func:`fgraph.models.tvb.build.build_table`.

**Choosing ω.** :meth:`Table.select` with ``rule="closest"`` is eq. (6) of the TVB paper: the grid ω minimising
|ĉ(ω) − (1 − α)|, where ĉ(ω) = (1/B) Σ_b 1{h(θ̂_ω^{X₁}) ∈ C_ω(X₂^{(b)}; α)} is the bootstrap coverage (eq. 5); ties —
frequent, ĉ takes the values j/B — go (``ties="nominal"``, default) to coverage at or above the nominal level, then
to the largest ω (the least bent posterior), or (``ties="largest"``, Liu & Li's code) to the largest ω alone. ``rule="sequential"`` is Algorithm 1's stopping rule applied to the grid from ω = 1 down: the
largest ω with ĉ > 1 − α or (1 − α) − ĉ < ε. The reported interval is the whole-data fit's at that ω.

**On disk** a finished table is one npz (the arrays) and one JSON file (the settings and the npz's SHA-256, so that
a truncated or replaced npz is never read); no pickle.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fgraph.models.tvb.arguments import check_level
from fgraph.models.tvb.errors import CorruptTableError, TVBError
from fgraph.models.tvb.intervals import Intervals
from fgraph.store import prepare_directory, read_npz, write_json, write_npz

__all__ = ["FULL", "SPLIT", "TABLE_JSON", "TABLE_NPZ", "TIES", "choose_omega", "TVBSelection", "Table"]

FULL, SPLIT = 0, 1  # roles on the second axis of a table; the resamples are 2 .. B + 1
TABLE_JSON, TABLE_NPZ = "tvb_table.json", "tvb_table.npz"


def _coverage(intervals: Intervals, point: np.ndarray) -> np.ndarray:
    """The fraction of the resamples' intervals (second axis 2 ..) that cover ``point`` (one per ω)."""
    inside = (intervals.lower[:, 2:] <= point[:, None]) & (point[:, None] <= intervals.upper[:, 2:])
    return inside.mean(axis=1)


def _point_role(point: str) -> int:
    """The role whose point estimates the resamples' intervals are to cover: ``"split"`` (the fit on X₁) or
    ``"full"`` (the whole data)."""
    if point not in ("split", "full"):
        raise TVBError(f"TVB: point must be 'split' (the fit on X₁) or 'full' (the whole data), got {point!r}")
    return SPLIT if point == "split" else FULL


TIES = ("nominal", "largest")


def choose_omega(grid: np.ndarray, coverage: np.ndarray, level: float, rule: str = "closest",
                 tolerance: float = 1e-6, ties: str = "nominal") -> tuple:
    """(index, reached) of the ω of ``grid`` (m,) chosen by ``rule`` from the bootstrap coverage curve ``coverage``
    (m,), ties broken by ``ties`` (module docstring) — what :meth:`Table.select` does, for a curve kept apart
    from its table."""
    if ties not in TIES:
        raise TVBError(f"TVB: ties must be 'nominal' (coverage at or above the level first, then the largest ω) or "
                       f"'largest' (the largest ω), got {ties!r}")
    if rule == "closest":
        distance = np.round(np.abs(coverage - level), 12)
        below = coverage < level - 1e-12 if ties == "nominal" else np.zeros(coverage.shape, dtype=bool)
        order = np.lexsort((-grid, below, distance))  # the last key sorts first
        index = int(order[0])
        return index, bool(coverage[index] > level or level - coverage[index] < tolerance)
    if rule == "sequential":
        covered = (coverage > level) | (level - coverage < tolerance)
        candidates = np.flatnonzero(covered)
        if candidates.size == 0:
            return int(np.argmin(grid)), False
        return int(candidates[np.argmax(grid[candidates])]), True
    raise TVBError(f"TVB: unknown selection rule {rule!r}; use 'closest' (eq. 6) or 'sequential' (Algorithm 1's "
                   "stopping rule on the grid)")


@dataclass(frozen=True)
class TVBSelection:
    """The ω chosen for a functional: ``omega`` (= ``grid[index]``), the bootstrap coverage curve over the grid,
    whether the nominal level was reached, the credible interval on the whole data at ``omega`` and, when the grid
    has ω = 1, the plain VB interval (``vb``, else None)."""

    functional: str
    level: float
    rule: str
    grid: np.ndarray
    coverage: np.ndarray
    index: int
    omega: float
    reached: bool
    interval: Intervals
    vb: Intervals | None


class Table:
    """What the TVB tables share (:class:`fgraph.models.tvb.gmm.TVBTable`,
    :class:`fgraph.models.tvb.bmlr.BMLRTVBTable`): the sizes, the posteriors, the coverage curve and the choice of ω
    of any functional, and the files. A table is a dataclass with the fields ``grid`` (m,), ``alpha`` (m, B + 2, K),
    its posterior parameters (named by its class attribute ``parameters``), ``elbo``, ``iterations``,
    ``converged``, ``split``, ``holdout``, ``bootstrap``, ``start`` and ``metadata``; it says what it is
    (``table_format``, the ``format`` of its JSON file; ``kind``, its name in messages; ``builder``, the function
    that builds and resumes it), turns a spec into its functional (:meth:`functional`) and gives that functional's
    ``intervals`` in every cell."""

    parameters: tuple  # the names of the posterior parameters' arrays, set by every table
    table_format: str
    kind: str
    builder: str

    def functional(self, spec):
        """The table's functional named by ``spec`` (an object with ``name`` and ``intervals(posteriors, level)``)."""
        raise NotImplementedError

    @property
    def n_bootstrap(self) -> int:
        return self.alpha.shape[1] - 2

    @property
    def n_components(self) -> int:
        return self.alpha.shape[-1]

    def posteriors(self) -> dict:
        """Every cell's posterior parameters, arrays (m, B + 2, ...)."""
        return {key: getattr(self, key) for key in self.parameters}

    def coverage(self, spec, level: float = 0.95, point: str = "split") -> np.ndarray:
        """ĉ(ω) for every ω of the grid (eq. 5/9): the fraction of the B resamples whose ``level`` interval covers
        the point estimate of the fit on X₁ at the same ω (``point="split"``, the paper's), or of the fit on the
        whole data (``point="full"``: no sample splitting, the "overconfident" variant of §3.3)."""
        intervals = self.intervals(spec, level)
        return _coverage(intervals, intervals.point[:, _point_role(point)])

    def select(self, spec, level: float = 0.95, rule: str = "closest", tolerance: float = 1e-6,
               point: str = "split", ties: str = "nominal") -> TVBSelection:
        """Algorithm 2's choice of ω for a functional from the table, without refitting (module docstring for
        the rules and ``ties``), and the credible interval on the whole data at that ω; ``vb`` is the interval at
        ω = 1 when the grid has it."""
        level = check_level(level)
        h = self.functional(spec)
        intervals = self.intervals(h, level)
        coverage = _coverage(intervals, intervals.point[:, _point_role(point)])
        index, reached = choose_omega(self.grid, coverage, level, rule, tolerance, ties)
        ones = np.flatnonzero(self.grid == 1.0)
        vb = intervals[ones[0], FULL] if ones.size else None
        return TVBSelection(h.name, level, rule, self.grid, coverage, index, float(self.grid[index]), reached,
                            intervals[index, FULL], vb)

    # ------------------------------------------------------------------------------------------------ disk
    def _arrays(self) -> dict:
        arrays = {key: getattr(self, key) for key in ("grid", *self.parameters, "elbo", "iterations",
                                                      "converged", "split", "holdout", "bootstrap")}
        arrays.update({f"start_{key}": value for key, value in self.start.items()})
        return arrays

    def save(self, path) -> Path:
        """Write the table into the directory ``path``: ``tvb_table.npz`` (the arrays), then ``tvb_table.json`` (the
        settings and the npz file's SHA-256, so that a truncated or replaced npz is never read); no pickle. Each
        file is written atomically."""
        path = prepare_directory(path, self.kind)
        digest = write_npz(path / TABLE_NPZ, self._arrays())
        write_json(path / TABLE_JSON, dict(self.metadata, complete=True, npz_sha256=digest))
        return path

    @classmethod
    def load(cls, path):
        """The table written by :meth:`save` (or by its build function with a ``path``). A directory without a
        finished table is a :class:`TVBError`; files that are truncated, altered or unreadable are a
        :class:`CorruptTableError` naming the file."""
        path = Path(path)
        rebuild = f"{cls.builder}(..., path={str(path)!r}) with the same arguments rebuilds it"
        try:
            content = (path / TABLE_JSON).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            raise TVBError(f"TVB: {path} holds no {cls.kind} (no {TABLE_JSON}); {cls.builder} with this path "
                           "builds one") from None
        try:
            metadata = json.loads(content.decode())
            if not isinstance(metadata, dict):
                raise ValueError("not a JSON object")
        except (UnicodeDecodeError, ValueError) as error:
            raise CorruptTableError(f"TVB: {path / TABLE_JSON} is not a table's settings (unreadable JSON: "
                                    f"{error}); {rebuild}") from None
        if metadata.get("format") != cls.table_format or not metadata.get("complete"):
            raise TVBError(f"TVB: {path} holds no finished {cls.kind} ({cls.builder} with this path resumes it)")
        try:
            content = (path / TABLE_NPZ).read_bytes()
        except FileNotFoundError:
            raise CorruptTableError(f"TVB: {path / TABLE_NPZ} is missing; {rebuild}") from None
        if hashlib.sha256(content).hexdigest() != metadata.get("npz_sha256"):
            raise CorruptTableError(f"TVB: {path / TABLE_NPZ} is truncated or altered (its content hash differs "
                                    f"from the one in {TABLE_JSON}); {rebuild}")
        try:
            arrays = read_npz(content)
            start = {key[len("start_"):]: arrays.pop(key) for key in list(arrays) if key.startswith("start_")}
            return cls(**arrays, start=start, metadata=metadata)
        except (ValueError, TypeError) as error:
            raise CorruptTableError(f"TVB: {path / TABLE_NPZ} does not hold a {cls.kind} ({error}); {rebuild}") \
                from None

