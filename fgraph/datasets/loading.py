"""Named classification data sets: the bundled UCI CSV files and pinwheels."""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fgraph.errors import DatasetError

DATA_DIR = Path(__file__).resolve().parent / "data"

# name -> CSV file in DATA_DIR (header row; the last column is ``label``)
UCI_FILES = {
    "banknote": "banknote.csv",
    "rice": "rice.csv",
    "sonar": "sonar.csv",
    "vehicle": "vehicle.csv",
    "waveform": "waveform.csv",
    # scikit-learn's copies (sklearn/datasets/data), read here without importing scikit-learn (a second of start-up)
    "breast_cancer": "breast_cancer.csv",
    "iris": "iris.csv",
}
# classes in the order of their codes where that is not the sorted order of the labels: scikit-learn's target codes
CLASS_ORDER = {"breast_cancer": ("malignant", "benign")}
DATASET_NAMES = tuple(sorted([*UCI_FILES, "pinwheels"]))


@dataclass(frozen=True)
class Dataset:
    """A classification data set.

    ``X``: float64 (N, d) features; ``y``: int64 (N,) labels 0..L−1, where label ``j`` stands for
    ``classes[j]`` (the original label, e.g. ``"M"`` or ``"bus"``; classes are in sorted order of
    the original labels); ``feature_names``: d names; ``name``: the name it was loaded by.
    """

    X: np.ndarray
    y: np.ndarray
    classes: np.ndarray
    feature_names: tuple
    name: str

    @property
    def n_classes(self) -> int:
        return len(self.classes)


def _encode(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(classes in sorted order, int64 codes 0..L−1)."""
    classes, codes = np.unique(labels, return_inverse=True)
    return classes, codes.astype(np.int64).reshape(-1)


def _read_uci(name: str) -> Dataset:
    path = DATA_DIR / UCI_FILES[name]
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    header, body = rows[0], [row for row in rows[1:] if row]
    if header[-1] != "label":
        raise DatasetError(f"{path}: the last column must be 'label', found {header[-1]!r}")
    X = np.array([[float(value) for value in row[:-1]] for row in body], dtype=np.float64)
    raw = [row[-1].strip() for row in body]
    # numeric labels stay numbers (waveform's 0/1/2, banknote's 0/1), so ``classes`` reads naturally
    labels = np.array([int(value) for value in raw]) if all(v.lstrip("-").isdigit() for v in raw) else np.array(raw)
    if name in CLASS_ORDER:
        classes = np.array(CLASS_ORDER[name])
        y = np.array([CLASS_ORDER[name].index(label) for label in labels], dtype=np.int64)
    else:
        classes, y = _encode(labels)
    return Dataset(X=X, y=y, classes=classes, feature_names=tuple(header[:-1]), name=name)


def load_dataset(name: str, **options) -> Dataset:
    """The data set called ``name`` (one of :data:`DATASET_NAMES`).

    ``options`` are passed to :func:`make_pinwheels` for ``"pinwheels"`` (e.g. ``n=2100,
    random_state=0``); the other data sets take none.
    """
    if not isinstance(name, str):
        raise DatasetError(f"load_dataset: the name must be a string, got {type(name).__name__}")
    key = name.strip().lower().replace("-", "_")
    if key not in DATASET_NAMES:
        raise DatasetError(f"load_dataset: unknown data set {name!r}; choose one of {', '.join(DATASET_NAMES)}")
    if key == "pinwheels":
        from fgraph.datasets.pinwheels import make_pinwheels

        X, y = make_pinwheels(**options)
        # every arm is a class, drawn or not (a tiny n may leave some arms empty)
        classes = np.arange(options.get("n_classes", 5))
        return Dataset(X=X, y=y, classes=classes, feature_names=("x1", "x2"), name=key)
    if options:
        raise DatasetError(f"load_dataset({key!r}) takes no options, got {sorted(options)}")
    return _read_uci(key)
