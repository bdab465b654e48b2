"""fgraph.datasets: the bundled files against their recorded hashes and counts, the pinwheel
generator against a point-by-point transcription of Johnson et al.'s code, and the splits."""
import hashlib
import itertools
import re

import numpy as np
import pytest

from fgraph.datasets import (
    DATASET_NAMES,
    DEFAULT_SPLITS,
    PAPER_SPLITS,
    DatasetError,
    doubling_sizes,
    load_dataset,
    make_pinwheels,
    train_test_splits,
)
from fgraph.datasets.loading import DATA_DIR, UCI_FILES
from fgraph.errors import FgraphError

# rows, features and class counts (in the order of `classes`), from the provenance README / UCI
EXPECTED = {
    "banknote": (1372, 4, {0: 762, 1: 610}),
    "sonar": (208, 60, {"M": 111, "R": 97}),
    "rice": (3810, 7, {"Cammeo": 1630, "Osmancik": 2180}),
    "vehicle": (846, 18, {"bus": 218, "opel": 212, "saab": 217, "van": 199}),
    "waveform": (5000, 21, {0: 1657, 1: 1647, 2: 1696}),
    "breast_cancer": (569, 30, {"malignant": 212, "benign": 357}),
    "iris": (150, 4, {"setosa": 50, "versicolor": 50, "virginica": 50}),
}


def recorded_hashes():
    text = (DATA_DIR / "README.md").read_text()
    section = text.split("## SHA-256 of the written files", 1)[1]
    return dict(re.findall(r"\| `([\w.]+)` \| `([0-9a-f]{64})` \|", section))


def test_every_bundled_file_matches_its_recorded_sha256():
    hashes = recorded_hashes()
    assert sorted(hashes) == sorted(UCI_FILES.values())
    for name, digest in hashes.items():
        assert hashlib.sha256((DATA_DIR / name).read_bytes()).hexdigest() == digest, name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_loaded_data_sets_have_the_recorded_shapes_and_class_counts(name):
    data = load_dataset(name)
    rows, features, counts = EXPECTED[name]
    assert data.name == name
    assert data.X.shape == (rows, features) and data.X.dtype == np.float64
    assert data.y.shape == (rows,) and data.y.dtype == np.int64
    assert len(data.feature_names) == features
    assert np.all(np.isfinite(data.X))
    assert {c.item() if hasattr(c, "item") else c: int(n) for c, n in zip(data.classes, np.bincount(data.y))} == counts


def test_labels_keep_their_original_meaning():
    sonar = load_dataset("sonar")
    first_line = (DATA_DIR / "sonar.csv").read_text().splitlines()[1].split(",")
    assert sonar.classes[sonar.y[0]] == first_line[-1]
    np.testing.assert_array_equal(sonar.X[0], [float(v) for v in first_line[:-1]])


@pytest.mark.parametrize("name, loader", [("breast_cancer", "load_breast_cancer"), ("iris", "load_iris")])
def test_scikit_learns_sets_load_as_scikit_learn_loads_them(name, loader):
    datasets = pytest.importorskip("sklearn.datasets")
    theirs, ours = getattr(datasets, loader)(), load_dataset(name)
    np.testing.assert_array_equal(ours.X, theirs.data)
    np.testing.assert_array_equal(ours.y, theirs.target)  # their class codes, not the sorted order
    assert list(ours.classes) == list(theirs.target_names)
    assert list(ours.feature_names) == list(theirs.feature_names)


def test_unknown_names_and_stray_options_are_named_errors():
    with pytest.raises(DatasetError, match="unknown data set 'mnist'.*banknote"):
        load_dataset("mnist")
    with pytest.raises(DatasetError, match="takes no options"):
        load_dataset("sonar", n=10)
    with pytest.raises(DatasetError, match="string"):
        load_dataset(3)
    assert issubclass(DatasetError, FgraphError) and issubclass(DatasetError, ValueError)
    assert load_dataset("Breast-Cancer").name == "breast_cancer"
    assert set(DATASET_NAMES) == set(EXPECTED) | {"pinwheels"}


# ----------------------------------------------------------------------------- pinwheels
def transcribed_pinwheels(radial_std, tangential_std, num_classes, num_per_class, rate, seed):
    """``make_pinwheel_data`` of github.com/mattjj/svae (experiments/gmm_svae_synth.py) written
    out point by point, with its normal draws and permutation taken from the same Generator."""
    rng = np.random.default_rng(seed)
    eps = rng.standard_normal((num_classes * num_per_class, 2))
    order = rng.permutation(num_classes * num_per_class)
    points, labels = [], []
    for t in range(num_classes * num_per_class):
        label = t // num_per_class
        f0, f1 = 1.0 + radial_std * eps[t, 0], tangential_std * eps[t, 1]
        angle = 2 * np.pi * label / num_classes + rate * np.exp(f0)
        # row vector (f0, f1) times [[cos, −sin], [sin, cos]]
        points.append([10 * (f0 * np.cos(angle) + f1 * np.sin(angle)), 10 * (-f0 * np.sin(angle) + f1 * np.cos(angle))])
        labels.append(label)
    return np.array(points)[order], np.array(labels)[order]


def test_pinwheels_follow_the_original_generator():
    X, y = make_pinwheels(n_per_class=40, random_state=5)
    X_expected, y_expected = transcribed_pinwheels(0.7, 0.3, 5, 40, 0.2, seed=5)
    np.testing.assert_allclose(X, X_expected, rtol=1e-13, atol=1e-12)
    np.testing.assert_array_equal(y, y_expected)
    X, y = make_pinwheels(n_per_class=30, n_classes=3, radial_std=0.3, tangential_std=0.05, rate=0.25, random_state=1)
    X_expected, y_expected = transcribed_pinwheels(0.3, 0.05, 3, 30, 0.25, seed=1)
    np.testing.assert_allclose(X, X_expected, rtol=1e-13, atol=1e-12)
    np.testing.assert_array_equal(y, y_expected)


def test_pinwheel_arms_sit_at_their_angles():
    # without noise and rate, class c lies at radius 10 and angle −2πc/C (row vector times R(θ))
    X, y = make_pinwheels(n=10, radial_std=0.0, tangential_std=0.0, rate=0.0, random_state=0)
    np.testing.assert_allclose(np.hypot(X[:, 0], X[:, 1]), 10.0)
    np.testing.assert_allclose(np.arctan2(X[:, 1], X[:, 0]) % (2 * np.pi), (-2 * np.pi * y / 5) % (2 * np.pi), atol=1e-12)


def test_pinwheel_sizes_and_errors():
    _, y = make_pinwheels(n=7, random_state=0)
    np.testing.assert_array_equal(np.bincount(y), [2, 2, 1, 1, 1])
    assert load_dataset("pinwheels", n=2100, random_state=0).X.shape == (2100, 2)
    np.testing.assert_array_equal(load_dataset("pinwheels", n=3, n_classes=4).classes, [0, 1, 2, 3])
    with pytest.raises(DatasetError, match="exactly one"):
        make_pinwheels(n=10, n_per_class=2)
    with pytest.raises(DatasetError, match="n_classes"):
        make_pinwheels(n=10, n_classes=0)
    with pytest.raises(DatasetError, match="radial_std"):
        make_pinwheels(n=10, radial_std=-1.0)


# ----------------------------------------------------------------------------- splits
def test_paper_split_sizes():
    assert PAPER_SPLITS["breast_cancer"].train_sizes == (25, 50, 100, 200, 400)
    assert PAPER_SPLITS["pinwheels"].train_sizes == (50, 100, 200, 400, 800, 1600)
    assert PAPER_SPLITS["vehicle"].train_sizes[-1] == 640
    assert doubling_sizes(8, 128) == (8, 16, 32, 64, 128)
    for name, sizes in DEFAULT_SPLITS.items():
        if name != "pinwheels":
            assert sizes.train_sizes[-1] + sizes.test_size <= load_dataset(name).X.shape[0], name


def test_splits_are_nested_stratified_and_share_one_test_set():
    data = load_dataset("vehicle")
    sizes = PAPER_SPLITS["vehicle"]
    splits = train_test_splits(data.X, data.y, sizes.train_sizes, sizes.test_size, random_state=3)
    assert [s.train_size for s in splits] == list(sizes.train_sizes)
    frequencies = np.bincount(data.y) / data.y.size
    for smaller, larger in itertools.pairwise(splits):
        assert set(smaller.train_index) <= set(larger.train_index)
    for split in splits:
        np.testing.assert_array_equal(split.test_index, splits[0].test_index)
        assert not set(split.train_index) & set(split.test_index)
        for index in (split.train_index, split.test_index):
            counts = np.bincount(data.y[index], minlength=4)
            assert np.all(counts >= 1)
            assert np.all(np.abs(counts - frequencies * index.size) < 1.0 + 1e-9), (counts, frequencies * index.size)
        np.testing.assert_array_equal(split.y_train, data.y[split.train_index])
        np.testing.assert_array_equal(split.y_test, data.y[split.test_index])


def test_every_class_appears_in_every_training_set_when_it_fits():
    # 90 / 8 / 2 points: proportional rounding alone would give the rare class no point among 10
    y = np.repeat([0, 1, 2], [90, 8, 2])
    X = np.arange(100.0)[:, None]
    for split in train_test_splits(X, y, [5, 10], 40, random_state=1):
        np.testing.assert_array_equal(np.bincount(split.y_train, minlength=3) > 0, True)
    assert np.array_equal(np.bincount(train_test_splits(X, y, [10], 40, random_state=1)[0].y_train), [8, 1, 1])


def test_features_are_z_scored_by_the_training_statistics():
    data = load_dataset("sonar")
    split = train_test_splits(data.X, data.y, [16, 32], 80, random_state=0)[0]
    raw_train, raw_test = data.X[split.train_index], data.X[split.test_index]
    np.testing.assert_allclose(split.mean, raw_train.mean(0))
    np.testing.assert_allclose(split.scale, raw_train.std(0))
    np.testing.assert_allclose(split.X_train.mean(0), 0.0, atol=1e-12)
    np.testing.assert_allclose(split.X_train.std(0), 1.0)
    np.testing.assert_allclose(split.X_test, (raw_test - raw_train.mean(0)) / raw_train.std(0))


def test_constant_features_map_to_zero():
    X = np.column_stack([np.arange(20.0), np.full(20, 3.0)])
    split = train_test_splits(X, np.arange(20) % 2, [10], 4, random_state=0)[0]
    np.testing.assert_array_equal(split.X_train[:, 1], 0.0)
    assert split.scale[1] == 1.0


def test_splits_are_reproducible():
    data = load_dataset("iris")
    first = train_test_splits(data.X, data.y, [6, 12], 50, random_state=7)
    second = train_test_splits(data.X, data.y, [6, 12], 50, random_state=7)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a.train_index, b.train_index)
        np.testing.assert_array_equal(a.test_index, b.test_index)


@pytest.mark.parametrize("sizes, test_size, match", [
    ([100, 200], 20, "need 220 rows, but the data set has 150"),
    ([20, 10], 20, "increasing"),
    ([0, 10], 20, "positive"),
    ([10], 0, "test_size"),
])
def test_impossible_splits_are_named_errors(sizes, test_size, match):
    data = load_dataset("iris")
    with pytest.raises(DatasetError, match=match):
        train_test_splits(data.X, data.y, sizes, test_size)


def test_bad_arrays_are_named_errors():
    X = np.ones((10, 2))
    with pytest.raises(DatasetError, match="NaN"):
        train_test_splits(np.where(np.eye(10, 2) > 0, np.nan, X), np.arange(10) % 2, [4], 2)
    with pytest.raises(DatasetError, match="shape"):
        train_test_splits(X, np.arange(9) % 2, [4], 2)
    with pytest.raises(DatasetError, match="whole-number labels"):
        train_test_splits(X, np.linspace(0, 1, 10), [4], 2)
