"""The pinwheel data set of Johnson et al. (2016), "Composing graphical models with neural
networks for structured representations and fast inference" (NeurIPS).

The arithmetic follows ``make_pinwheel_data`` in the authors' code (github.com/mattjj/svae,
``experiments/gmm_svae_synth.py``): for class c of C, a point starts at
(1 + radial_std·ε₁, tangential_std·ε₂) with ε ~ N(0, I), and is rotated by the angle
2πc/C + rate·exp(1 + radial_std·ε₁) (row vector times the rotation matrix
[[cos θ, −sin θ], [sin θ, cos θ]]), then scaled by 10; the points are returned in a random order.
Two deliberate differences: the randomness comes from a ``numpy.random.Generator`` seeded by
``random_state`` (so draws differ from the original's global-state ``npr.randn``), and the labels
are returned with the points (the original returns the points only).
"""
from __future__ import annotations

import numbers

import numpy as np

from fgraph.errors import DatasetError


def make_pinwheels(
    n: int | None = None,
    n_classes: int = 5,
    radial_std: float = 0.7,
    tangential_std: float = 0.3,
    rate: float = 0.2,
    random_state=None,
    *,
    n_per_class: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Pinwheel points ``X`` (float64, (n, 2)) and labels ``y`` (int64, (n,), 0..n_classes−1).

    Give the size either as ``n`` (total; the classes get ``n // n_classes`` points each, the
    first ``n % n_classes`` classes one more) or as ``n_per_class``. The defaults are the paper's
    (Appendix C.1): 5 arms, radial std 0.7, tangential std 0.3, rate 0.2.
    """
    if (n is None) == (n_per_class is None):
        raise DatasetError("make_pinwheels: give exactly one of n (total points) or n_per_class")
    for label, value in (("n", n), ("n_per_class", n_per_class), ("n_classes", n_classes)):
        if value is not None and (not isinstance(value, numbers.Integral) or value < 1):
            raise DatasetError(f"make_pinwheels: {label} must be a positive whole number, got {value!r}")
    for label, value in (("radial_std", radial_std), ("tangential_std", tangential_std)):
        if not np.isfinite(value) or value < 0:
            raise DatasetError(f"make_pinwheels: {label} must be finite and ≥ 0, got {value!r}")
    if not np.isfinite(rate):
        raise DatasetError(f"make_pinwheels: rate must be finite, got {rate!r}")
    if n_per_class is not None:
        counts = np.full(n_classes, int(n_per_class))
    else:
        counts = np.full(n_classes, int(n) // n_classes)
        counts[: int(n) % n_classes] += 1
    rng = np.random.default_rng(random_state)
    labels = np.repeat(np.arange(n_classes), counts)
    rads = np.linspace(0.0, 2.0 * np.pi, n_classes, endpoint=False)
    features = rng.standard_normal((labels.size, 2)) * np.array([radial_std, tangential_std])
    features[:, 0] += 1.0
    angles = rads[labels] + rate * np.exp(features[:, 0])
    rotations = np.stack([np.cos(angles), -np.sin(angles), np.sin(angles), np.cos(angles)])
    rotations = np.reshape(rotations.T, (-1, 2, 2))
    points = 10.0 * np.einsum("ti,tij->tj", features, rotations)
    order = rng.permutation(labels.size)
    return points[order], labels[order].astype(np.int64)
