"""`fgraph run bmlr-tvb`: the quick run's files and aggregates, one replication recomputed independently (the data
simulated again from the paper's formula, λ by numpy least squares, the stored posteriors a fixed point of
Algorithm 4 written out here, the intervals by scipy), resuming, options and named errors."""
import json

import numpy as np
import pytest
from scipy import stats
from scipy.special import digamma

from fgraph.cli import main
from fgraph_experiments import bmlr_tvb


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("bmlr-tvb")
    summary = bmlr_tvb.run(quick=True, out=out)
    return summary, out


def wilson(successes, n, z=stats.norm.ppf(0.975)):
    p = successes / n
    centre, half = p + z * z / (2 * n), z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def test_quick_run_writes_its_files_and_its_aggregates_are_the_rows(quick):
    summary, out = quick
    for name in summary["files"]:
        assert (out / name).exists(), name
    assert {"results.md", "coverage.png", "summary.json"} <= set(summary["files"])
    settings = json.loads((out / "summary.json").read_text())["settings"]
    assert settings["sizes"] == [50, 100] and settings["n_data_sets"] == 40 and settings["noise_precision"] == "estimated"
    rows = [json.loads(p.read_text()) for p in sorted((out / "replications").glob("j*_r*.json"))]
    assert len(rows) == 2 * 3
    text = (out / "results.md").read_text()
    results = {(r["j"], r["method"]): r for r in summary["results"]}
    grid = np.exp(np.linspace(np.log(0.1), 0.0, 6))
    for J in (50, 100):
        mine = [row for row in rows if row["j"] == J]
        for method, label in bmlr_tvb.LABELS.items():
            r = results[J, method]
            covers = sum(row[method]["covers"] for row in mine)
            assert r["replications"] == 3 and r["coverage"] == pytest.approx(covers / 3)
            np.testing.assert_allclose(r["coverage_ci"], wilson(covers, 3), atol=1e-12)
            assert r["mean_length"] == pytest.approx(np.mean([row[method]["length"] for row in mine]))
            assert r["mean_omega"] == pytest.approx(np.mean([row[method]["omega"] for row in mine]))
            assert f"| {J} | {label} | {r['coverage']:.3f} |" in text
        assert all(np.isclose(grid, row["tvb_grid"]["omega"], rtol=1e-13).any() for row in mine)


def simulate_again(N, J, seed, replication):
    """§6.2 as written, data set by data set: y_i = X_iβ_k + (‖X_iβ_k‖² / SNR) ε_k / ‖ε_k‖²."""
    rng = np.random.default_rng([seed, N, J, replication])
    beta = rng.standard_normal((2, 2))
    first = rng.random(N) < 0.65
    epsilon = rng.standard_normal((2, J))
    X = rng.standard_normal((N, J, 2))
    y = np.empty((N, J))
    for i in range(N):
        k = 0 if first[i] else 1
        signal = X[i] @ beta[k]
        y[i] = signal + (signal @ signal / 0.1) * epsilon[k] / (epsilon[k] @ epsilon[k])
    return X, y, beta


def test_one_replication_recomputed_independently(quick):
    """Replication 0 at J = 100 (TVB at ω < 1): the truth, λ, and for VB and TVB the interval Σm ∓ z (ΣS)^{1/2} of the stored
    q(β), whether it covers the truth, and q a fixed point of Algorithm 4 at its ω on the raw data (the fits stop
    on an ELBO tolerance of 1e-6 nats: 1e-4 relative)."""
    _, out = quick
    row = json.loads((out / "replications" / "j100_r0000.json").read_text())
    X, y, beta = simulate_again(40, 100, 0, 0)
    assert row["truth"] == pytest.approx(beta.sum(), rel=1e-12)
    rss = sum(np.sum((y[n] - X[n] @ np.linalg.lstsq(X[n], y[n], rcond=None)[0]) ** 2) for n in range(40))
    lam = 40 * (100 - 2) / rss
    assert row["noise_precision"] == pytest.approx(lam, rel=1e-9)
    # the noise of §6.2 has a per-response sd of about 10 ‖β_k‖²
    noise_sd = np.sqrt(row["cluster_noise_variance"])
    np.testing.assert_allclose(noise_sd, 10 * np.sum(beta ** 2, axis=1), rtol=0.25)
    z = stats.norm.ppf(0.975)
    for method in ("vb", "tvb_grid"):
        entry = row[method]
        m, S, alpha = (np.array(entry[key]) for key in ("coefficient_mean", "coefficient_cov", "alpha"))
        centre, sd = m.sum(), np.sqrt(S.sum())
        assert [entry["lower"], entry["upper"]] == pytest.approx([centre - z * sd, centre + z * sd], rel=1e-12)
        assert entry["covers"] == bool(centre - z * sd <= beta.sum() <= centre + z * sd)
        assert min(abs(entry["lower"] - beta.sum()), abs(entry["upper"] - beta.sum())) > 1e-3
        omega = entry["omega"]
        # one sweep of Algorithm 4 from the stored q
        log_rho = np.stack([digamma(alpha[k]) - digamma(alpha.sum()) - 0.5 * lam * (
            np.sum((y - X @ m[k]) ** 2, axis=1) + np.einsum("njp,pq,njq->n", X, S[k], X)) for k in range(2)], axis=1)
        r = np.exp(log_rho - log_rho.max(1, keepdims=True))
        r /= r.sum(1, keepdims=True)
        tau = np.array([(1 + 1.0) / (1 + 0.5 * (m[k] @ m[k] + np.trace(S[k]))) for k in range(2)])
        np.testing.assert_allclose(alpha, 1 + omega * r.sum(0), rtol=1e-4)
        for k in range(2):
            S_new = np.linalg.inv(tau[k] * np.eye(2) + omega * lam * np.einsum("n,njp,njq->pq", r[:, k], X, X))
            m_new = omega * lam * S_new @ np.einsum("n,njp,nj->p", r[:, k], X, y)
            np.testing.assert_allclose(S[k], S_new, rtol=1e-4)
            np.testing.assert_allclose(m[k], m_new, rtol=1e-4, atol=1e-6)
    assert row["vb"]["omega"] == 1.0 and 0.1 - 1e-12 <= row["tvb_grid"]["omega"] < 1.0
    # every row's intervals are those of the q it stores
    for path in (out / "replications").glob("j*_r*.json"):
        other = json.loads(path.read_text())
        for method in ("vb", "tvb_grid"):
            m, S = np.array(other[method]["coefficient_mean"]), np.array(other[method]["coefficient_cov"])
            assert other[method]["upper"] == pytest.approx(m.sum() + z * np.sqrt(S.sum()), rel=1e-12)


def test_the_usual_snr_reading_sets_the_signal_to_noise_ratio_of_every_data_set():
    """``noise="snr"``: ε̃ = ‖Xβ‖/√SNR · ε/‖ε‖, so ‖Xβ‖² / ‖ε̃‖² = 0.1 for every data set; the same X, β and
    labels as the printed reading (the same draws), with the noise rescaled; an unknown reading is a named error."""
    printed = bmlr_tvb.simulate(30, 40, 3, 1)
    usual = bmlr_tvb.simulate(30, 40, 3, 1, noise="snr")
    np.testing.assert_array_equal(printed["beta"], usual["beta"])
    np.testing.assert_array_equal(printed["labels"], usual["labels"])
    rng = np.random.default_rng([3, 30, 40, 1])
    beta = rng.standard_normal((2, 2))
    first = rng.random(30) < 0.65
    epsilon = rng.standard_normal((2, 40))
    X = rng.standard_normal((30, 40, 2))
    stats_ = usual["statistics"]
    for i in range(30):
        k = 0 if first[i] else 1
        signal = X[i] @ beta[k]
        noise = np.sqrt(signal @ signal / 0.1) * epsilon[k] / np.sqrt(epsilon[k] @ epsilon[k])
        assert (signal @ signal) / (noise @ noise) == pytest.approx(0.1, rel=1e-12)
        y = signal + noise
        np.testing.assert_allclose(stats_.cross[i], X[i].T @ y, rtol=1e-10, atol=1e-10)
        assert stats_.square[i] == pytest.approx(y @ y, rel=1e-12)
    with pytest.raises(bmlr_tvb.ReplicationsMismatchError, match="--noise must be one of"):
        bmlr_tvb.simulate(30, 40, 3, 1, noise="loud")


def _cheap(out, replications, **options):
    return bmlr_tvb.run(quick=True, out=out, replications=replications, sizes=[30], data_sets=16, **options)


def test_an_interrupted_run_resumes_and_a_rerun_skips_finished_rows(tmp_path, monkeypatch):
    original = bmlr_tvb.replicate
    calls = []

    def failing(J, r, settings):
        calls.append(r)
        if r == 1:
            raise KeyboardInterrupt
        return original(J, r, settings)

    monkeypatch.setattr(bmlr_tvb, "replicate", failing)
    with pytest.raises(KeyboardInterrupt):
        _cheap(tmp_path, 3)
    assert sorted(p.name for p in (tmp_path / "replications").glob("j*.json")) == ["j30_r0000.json"]
    calls.clear()
    monkeypatch.setattr(bmlr_tvb, "replicate", lambda J, r, settings: calls.append(r) or original(J, r, settings))
    resumed = _cheap(tmp_path, 3)
    assert calls == [1, 2] and resumed["fitted_this_run"] == 2
    fresh = tmp_path / "fresh"
    _cheap(fresh, 3)
    for r in range(3):
        a = json.loads((tmp_path / "replications" / f"j30_r{r:04d}.json").read_text())
        b = json.loads((fresh / "replications" / f"j30_r{r:04d}.json").read_text())
        a.pop("seconds"), b.pop("seconds")
        assert a == b
    calls.clear()
    again = _cheap(tmp_path, 4)  # one more replication: only that one is fitted
    assert calls == [3] and again["fitted_this_run"] == 1 and again["results"][0]["replications"] == 4


def test_other_settings_and_bad_options_are_named_errors(tmp_path):
    _cheap(tmp_path, 1)
    with pytest.raises(bmlr_tvb.ReplicationsMismatchError, match="noise_precision"):
        _cheap(tmp_path, 1, noise_precision=1.0)
    with pytest.raises(bmlr_tvb.ReplicationsMismatchError, match=r"differing: noise\)"):
        _cheap(tmp_path, 1, noise="snr")
    with pytest.raises(bmlr_tvb.ReplicationsMismatchError, match="--noise must be one of"):
        _cheap(tmp_path / "other", 1, noise="loud")
    with pytest.raises(bmlr_tvb.ReplicationsMismatchError, match="seed"):
        _cheap(tmp_path, 1, seed=5)
    with pytest.raises(bmlr_tvb.ReplicationsMismatchError, match="n_data_sets"):
        bmlr_tvb.run(quick=True, out=tmp_path, replications=1, sizes=[30], data_sets=20)
    with pytest.raises(bmlr_tvb.ReplicationsMismatchError, match="--noise-precision"):
        _cheap(tmp_path / "other", 1, noise_precision="guess")
    with pytest.raises(bmlr_tvb.ReplicationsMismatchError, match="sizes J > p"):
        bmlr_tvb.run(quick=True, out=tmp_path / "other", sizes=[2])


def test_command_line_options_reach_the_run(tmp_path):
    assert main(["run", "bmlr-tvb", "--quick", "--out", str(tmp_path), "--sizes", "25", "--replications", "2",
                 "--data-sets", "12", "--noise-precision", "1", "--noise", "snr", "--jobs", "2", "--seed", "4"]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    settings = summary["settings"]
    assert settings["sizes"] == [25] and settings["replications"] == 2 and settings["n_data_sets"] == 12
    assert settings["noise_precision"] == 1.0 and settings["seed"] == 4 and summary["jobs"] == 2
    assert settings["noise"] == "snr"
    rows = [json.loads(p.read_text()) for p in sorted((tmp_path / "replications").glob("j*.json"))]
    assert [row["noise_precision"] for row in rows] == [1.0, 1.0]
    # rows do not depend on the number of workers
    one = bmlr_tvb.replicate(25, 1, settings)
    one.pop("seconds"), rows[1].pop("seconds")
    assert one == rows[1]
    assert main(["run", "bmlr-tvb", "--quick", "--out", str(tmp_path), "--bogus"]) == 2
