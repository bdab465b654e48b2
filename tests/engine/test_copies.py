"""Copies of a whole model as leading batch axes of one graph: ``fg.Model(copies=R)``.

The oracle throughout: every copy of a batched run equals the same model run
alone with that copy's data, prior and initial values, to round-off — the
evidence, the marginals and the free energy of every iteration. Plates never
reduce over the copy axes, free energies and evidences are per copy, and the
VMP free energy of every copy never increases.
"""
import numpy as np
import pytest

import fgraph as fg
from fgraph.families import ExponentialFamily, PointMass
from fgraph.nodes import Categorical, Gamma, GaussMarkovChain, Mixture, MvNormal, Normal
from fgraph.nodes.logistic import Logistic
from fgraph.nodes.markov_chain import MarkovChain
from fgraph.nodes.stick_breaking_logistic import StickBreakingLogistic

R = 3
RNG = np.random.default_rng(20261123)
PRIOR_MEANS = np.array([0.0, 1.5, -2.0])  # one prior mean per copy
DATA = RNG.normal(1.0, 1.3, size=(R, 15))  # one data set per copy
SHARED = RNG.normal(0.5, 1.0, size=(2, 4))  # one data set, a plate of rank 2, shared by every copy


def assert_same(batched, alone, rtol=1e-10, atol=1e-12):
    """Two distributions of one family with the same parameters (natural parameters, or the point)."""
    assert type(batched) is type(alone) or batched.family() is alone.family()
    if isinstance(batched, ExponentialFamily):
        for a, b in zip(batched.natural_parameters(), alone.natural_parameters()):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    else:
        np.testing.assert_allclose(batched.mean, alone.mean, rtol=rtol, atol=atol)


# ------------------------------------------------------------------ BP on a tree
def tree(prior_mean, data):
    a = Normal("a", mean=prior_mean, var=4.0)
    b = Normal("b", mean=a, var=0.5)
    Normal("y", mean=b, var=0.8, observed=data)  # a plate of 15 observations
    Normal("w", mean=b, var=1.5, observed=SHARED)  # a plate of rank 2, declared after the plate of rank 1


@pytest.mark.parametrize("collapse_plates", [True, False], ids=["plate-rules", "element-wise"])
def test_bp_on_a_tree_equals_each_copy_alone(collapse_plates):
    with fg.Model(copies=R) as model:
        tree(fg.per_copy(PRIOR_MEANS), fg.per_copy(DATA))
    # a global variable keeps its copy axis; the plates of the model pad it (plate rank 2)
    assert model["a"].plate_shape == () and model["a"].batch_shape == (R, 1, 1)
    assert model["y"].batch_shape == (R, 1, 15) and model["w"].batch_shape == (R, 2, 4)
    result = fg.run(fg.compile(model, collapse_plates=collapse_plates), free_energy=True)
    assert result.plan.exact
    log_evidence = result.log_evidence
    assert log_evidence.shape == (R,)
    evidences = result.evidence_per_variable()
    for r in range(R):
        with fg.Model() as alone_model:
            tree(PRIOR_MEANS[r], DATA[r])
        alone = fg.infer(alone_model)
        assert log_evidence[r] == pytest.approx(alone.log_evidence, rel=1e-12)
        # on a tree every variable's belief carries the evidence of its copy
        assert evidences["a"][r] == pytest.approx(alone.log_evidence, rel=1e-12)
        assert evidences["b"][r] == pytest.approx(alone.log_evidence, rel=1e-12)
        assert result.free_energy[-1][r] == pytest.approx(-alone.log_evidence, rel=1e-10)
        for name in ("a", "b"):
            assert result.marginal(name).batch_shape == (R,)  # copies + plate, without the padding
            assert_same(result.marginal(name)[r], alone.marginal(name))
    # the copies differ (a plate that summed over the copy axis would make them equal)
    assert np.ptp(log_evidence) > 0.1


def test_a_copy_axis_of_length_one_equals_the_model_without_copies():
    with fg.Model(copies=1) as model:
        tree(0.3, DATA[0])
    with fg.Model() as plain:
        tree(0.3, DATA[0])
    batched, alone = fg.infer(model), fg.infer(plain)
    assert batched.log_evidence.shape == (1,)
    assert batched.log_evidence[0] == pytest.approx(alone.log_evidence, rel=1e-13)
    assert_same(batched.marginal("b")[0], alone.marginal("b"), rtol=1e-13)

    with fg.Model(copies=(1,)) as model:
        normal_gamma(0.3, DATA[0])
    with fg.Model() as plain:
        normal_gamma(0.3, DATA[0])
    init = {"tau": fg.Gamma(2.0, 1.0)}
    batched = fg.infer(model, algorithm="vmp", iterations=8, init=init)
    alone = fg.infer(plain, algorithm="vmp", iterations=8, init=init)
    np.testing.assert_allclose(np.array(batched.free_energy)[:, 0], alone.free_energy, rtol=1e-13)
    assert_same(batched.marginal("tau")[0], alone.marginal("tau"), rtol=1e-13)


# ------------------------------------------------------------------ VMP Normal–Gamma
def normal_gamma(prior_mean, data):
    mu = Normal("mu", mean=prior_mean, var=10.0)
    tau = Gamma("tau", shape=2.0, rate=1.0)
    Normal("y", mean=mu, precision=tau, observed=data)


@pytest.mark.parametrize("collapse_plates", [True, False], ids=["collapsed", "element-wise"])
def test_vmp_normal_gamma_equals_each_copy_alone_at_every_iteration(collapse_plates):
    starts = np.array([[0.5, 0.5], [2.0, 1.0], [8.0, 2.0]])  # a starting q(τ) per copy (restarts)
    with fg.Model(copies=R) as model:
        normal_gamma(fg.per_copy(PRIOR_MEANS), fg.per_copy(DATA))
    plan = fg.compile(model, algorithm="vmp", init={"tau": fg.Gamma(starts[:, 0], starts[:, 1])},
                      collapse_plates=collapse_plates)
    assert (plan.nodes["y"].copies > 1) == collapse_plates
    result = fg.run(plan, iterations=12)
    trace = np.array(result.free_energy)
    assert trace.shape == (12, R)
    assert np.all(np.diff(trace, axis=0) <= 1e-9 * np.abs(trace[1:]))  # per copy, never increasing
    for r in range(R):
        with fg.Model() as alone_model:
            normal_gamma(PRIOR_MEANS[r], DATA[r])
        alone = fg.infer(alone_model, algorithm="vmp", iterations=12, init={"tau": fg.Gamma(*starts[r])})
        np.testing.assert_allclose(trace[:, r], alone.free_energy, rtol=1e-12)
        for name in ("mu", "tau"):
            assert_same(result.marginal(name)[r], alone.marginal(name))
        copy = result.copy(r)
        assert copy.free_energy == pytest.approx(alone.free_energy, rel=1e-12)
        assert_same(copy.marginal("tau"), alone.marginal("tau"))


def test_data_shared_by_every_copy_and_a_per_copy_prior():
    """Shared data (N,) broadcasts over the copies; the collapsed plate reads its averages once."""
    with fg.Model(copies=R) as model:
        normal_gamma(fg.per_copy(PRIOR_MEANS), DATA[0])
    assert model.data["y"].shape == DATA[0].shape  # not copied R times
    result = fg.infer(model, algorithm="vmp", iterations=10, init={"tau": fg.Gamma(2.0, 1.0)})
    for r in range(R):
        with fg.Model() as alone_model:
            normal_gamma(PRIOR_MEANS[r], DATA[0])
        alone = fg.infer(alone_model, algorithm="vmp", iterations=10, init={"tau": fg.Gamma(2.0, 1.0)})
        np.testing.assert_allclose(np.array(result.free_energy)[:, r], alone.free_energy, rtol=1e-12)
        assert_same(result.marginal("mu")[r], alone.marginal("mu"))


def test_convergence_is_judged_on_every_copy():
    """With tol= the run stops once every copy's change is below it: as many sweeps as the slowest copy."""
    with fg.Model(copies=R) as model:
        normal_gamma(fg.per_copy(PRIOR_MEANS), fg.per_copy(DATA))
    init = {"tau": fg.Gamma(np.array([0.01, 2.0, 50.0]), 1.0)}
    result = fg.infer(model, algorithm="vmp", iterations=200, tol=1e-9, init=init)
    sweeps = []
    for r in range(R):
        with fg.Model() as alone_model:
            normal_gamma(PRIOR_MEANS[r], DATA[r])
        alone = fg.infer(alone_model, algorithm="vmp", iterations=200, tol=1e-9,
                         init={"tau": fg.Gamma(init["tau"].shape[r], 1.0)})
        assert alone.converged
        sweeps.append(alone.iterations)
    assert len(set(sweeps)) > 1  # the copies need different numbers of sweeps
    assert result.converged and result.iterations == max(sweeps)
    assert result.last_change == pytest.approx(np.max(np.abs(np.diff(np.array(result.free_energy)[-2:], axis=0))))
    assert result.last_change < 1e-9


# ------------------------------------------------------------------ model comparison (mixture node)
Y_COMPARISON = np.array([0.3, 1.2, -0.4, 0.9, 0.5])
MODEL_PRIORS = np.array([[0.2, 0.5, 0.3], [0.6, 0.2, 0.2], [1 / 3, 1 / 3, 1 / 3]])  # π per copy


def averaging(pi):
    z = Categorical("z", p=pi)
    h = Normal("h", mean=2.0, var=0.3)
    x = Mixture("x", z, [Normal("x1", mean=0.0, var=1.0), Normal("x2", mean=h, var=0.2),
                         Normal("x3", mean=-1.0, var=3.0)])
    Normal("y", mean=x, var=0.7, observed=Y_COMPARISON)


def test_model_averaging_with_a_prior_over_models_per_copy():
    with fg.Model(copies=R) as model:
        averaging(fg.per_copy(MODEL_PRIORS))
    result = fg.infer(model, free_energy=True)
    evidences = result.evidence_per_variable()
    for r in range(R):
        with fg.Model() as alone_model:
            averaging(MODEL_PRIORS[r])
        alone = fg.infer(alone_model)
        assert result.log_evidence[r] == pytest.approx(alone.log_evidence, rel=1e-12)
        assert evidences["z"][r] == pytest.approx(alone.log_evidence, rel=1e-12)
        assert result.free_energy[-1][r] == pytest.approx(-alone.log_evidence, rel=1e-10)
        np.testing.assert_allclose(result.marginal("z").probabilities[r], alone.marginal("z").probabilities,
                                   rtol=1e-12)
        np.testing.assert_allclose([result.marginal("x")[r].mean, result.marginal("x")[r].var],
                                   [alone.marginal("x").mean, alone.marginal("x").var], rtol=1e-12)
        assert_same(result.marginal("x2")[r], alone.marginal("x2"))
    # the inputs' beliefs carry log π_k p(y | m_k): per copy, through each copy's π
    assert np.ptp(evidences["x1"]) > 0.1


def test_model_selection_by_vmp_per_copy():
    """A variational switch: F = KL(q(m) ‖ π) + Σ_k q_k F_k, per copy."""
    with fg.Model(copies=R) as model:
        averaging(fg.per_copy(MODEL_PRIORS))
    constraints = {"factorization": {"x": "mf"}}
    result = fg.infer(model, constraints=constraints, iterations=6,
                      init={"z": fg.Categorical(np.full(3, 1 / 3))})
    trace = np.array(result.free_energy)
    assert np.all(np.diff(trace, axis=0) <= 1e-10)
    for r in range(R):
        with fg.Model() as alone_model:
            averaging(MODEL_PRIORS[r])
        alone = fg.infer(alone_model, constraints=constraints, iterations=6,
                         init={"z": fg.Categorical(np.full(3, 1 / 3))})
        np.testing.assert_allclose(trace[:, r], alone.free_energy, rtol=1e-12)
        np.testing.assert_allclose(result.marginal("z").probabilities[r], alone.marginal("z").probabilities,
                                   rtol=1e-10)


# ------------------------------------------------------------------ logistic regression (restarts, resamples)
def logistic_data(count=60, dimension=2):
    features = RNG.normal(size=(count, dimension))
    truth = np.array([1.2, -0.7, 0.3])
    logits = np.column_stack([features, np.ones(count)]) @ truth
    labels = (RNG.random(count) < 1 / (1 + np.exp(-logits))).astype(float)
    return features, labels


def logistic(features, labels, dimension=3):
    beta = MvNormal("beta", mean=np.zeros(dimension), cov=25.0 * np.eye(dimension))
    Logistic("y", beta, features, observed=labels)


def test_logistic_regression_on_bootstrap_resamples_with_restarts():
    features, labels = logistic_data()
    resamples = RNG.integers(0, labels.size, size=(R, labels.size))  # one bootstrap resample per copy
    starts = RNG.uniform(0.0, 3.0, size=(R, labels.size))  # a starting tilt ξ per copy and observation
    with fg.Model(copies=R) as model:
        logistic(fg.per_copy(features[resamples]), fg.per_copy(labels[resamples]))
    result = fg.infer(model, algorithm="vmp", iterations=15, init={"y_xi": PointMass(starts)})
    trace = np.array(result.free_energy)
    assert np.all(np.diff(trace, axis=0) <= 1e-9 * np.abs(trace[1:]))
    # the plate's message to β is given by its sums per copy: the N rank-one elements are never formed
    socket = result.plan.graph.node_sockets["y"]["coefficients"]
    assert not result._engine.state.outbound[socket.index].elements_formed()
    for r in range(R):
        with fg.Model() as alone_model:
            logistic(features[resamples[r]], labels[resamples[r]])
        alone = fg.infer(alone_model, algorithm="vmp", iterations=15, init={"y_xi": PointMass(starts[r])})
        np.testing.assert_allclose(trace[:, r], alone.free_energy, rtol=1e-11)
        assert_same(result.marginal("beta")[r], alone.marginal("beta"), rtol=1e-9)
    # the best restart read back
    best = int(np.argmin(result.free_energy[-1]))
    assert_same(result.copy(best).marginal("beta"), result.marginal("beta")[best])


def stick_breaking(features, labels, classes=3, dimension=3):
    sticks = [MvNormal(f"beta{k}", mean=np.zeros(dimension), cov=25.0 * np.eye(dimension)) for k in range(classes - 1)]
    StickBreakingLogistic("y", sticks, features, observed=labels)


def test_stick_breaking_regression_on_bootstrap_resamples_with_restarts():
    features = RNG.normal(size=(45, 2))
    labels = RNG.integers(0, 3, size=45)
    resamples = RNG.integers(0, labels.size, size=(R, labels.size))
    starts = RNG.uniform(0.0, 3.0, size=(R, labels.size, 2))  # a starting tilt per copy, observation and stick
    with fg.Model(copies=R) as model:
        stick_breaking(fg.per_copy(features[resamples]), fg.per_copy(labels[resamples]))
    result = fg.infer(model, algorithm="vmp", iterations=12, init={"y_xi": PointMass(starts, event_ndim=1)})
    trace = np.array(result.free_energy)
    assert np.all(np.diff(trace, axis=0) <= 1e-9 * np.abs(trace[1:]))
    for interface in ("coefficients1", "coefficients2"):  # given by their sums per copy: no N rank-one elements
        socket = result.plan.graph.node_sockets["y"][interface]
        assert not result._engine.state.outbound[socket.index].elements_formed()
    for r in range(R):
        with fg.Model() as alone_model:
            stick_breaking(features[resamples[r]], labels[resamples[r]])
        alone = fg.infer(alone_model, algorithm="vmp", iterations=12, init={"y_xi": PointMass(starts[r], event_ndim=1)})
        np.testing.assert_allclose(trace[:, r], alone.free_energy, rtol=1e-11)
        for k in range(2):
            assert_same(result.marginal(f"beta{k}")[r], alone.marginal(f"beta{k}"), rtol=1e-9)


# ------------------------------------------------------------------ compound chain nodes
def gauss_markov(data, precision=None):
    x = GaussMarkovChain("x", gain=0.9, var=0.5, initial_mean=0.0, initial_var=2.0, length=data.shape[-1]
                         if not isinstance(data, fg.PerCopy) else data.value.shape[-1])
    if precision is None:
        Normal("y", mean=x, var=0.3, observed=data)
    else:
        Normal("y", mean=x, precision=Gamma("tau", shape=2.0, rate=1.0), observed=data)


def test_gauss_markov_chain_per_copy_by_bp_and_vmp():
    series = RNG.normal(size=(R, 20)).cumsum(axis=1)
    with fg.Model(copies=R) as model:
        gauss_markov(fg.per_copy(series))
    exact = fg.infer(model)
    with fg.Model(copies=R) as model:
        gauss_markov(fg.per_copy(series), precision=True)
    variational = fg.infer(model, algorithm="vmp", iterations=10, init={"tau": fg.Gamma(2.0, 1.0)})
    trace = np.array(variational.free_energy)
    assert np.all(np.diff(trace, axis=0) <= 1e-9 * np.abs(trace[1:]))
    for r in range(R):
        with fg.Model() as alone_model:
            gauss_markov(series[r])
        alone = fg.infer(alone_model)
        assert exact.log_evidence[r] == pytest.approx(alone.log_evidence, rel=1e-12)
        assert_same(exact.marginal("x")[r], alone.marginal("x"))
        with fg.Model() as alone_model:
            gauss_markov(series[r], precision=True)
        alone = fg.infer(alone_model, algorithm="vmp", iterations=10, init={"tau": fg.Gamma(2.0, 1.0)})
        np.testing.assert_allclose(trace[:, r], alone.free_energy, rtol=1e-12)
        assert_same(variational.marginal("tau")[r], alone.marginal("tau"))


INITIAL = np.array([0.7, 0.3])
TRANSITION = np.array([[0.95, 0.1], [0.05, 0.9]])


def hidden_markov(sequences, chains):
    steps = sequences.shape[-1] if not isinstance(sequences, fg.PerCopy) else sequences.value.shape[-1]
    batch = (chains,) if chains else ()
    z = MarkovChain("z", INITIAL, TRANSITION, steps, batch_shape=batch)
    inputs = [Normal("quiet", mean=0.0, var=0.5, batch_shape=batch + (steps,)),
              Normal("loud", mean=0.0, var=9.0, batch_shape=batch + (steps,))]
    Mixture("y", z, inputs, observed=sequences)


def test_markov_chains_with_independent_sequences_behind_the_copies():
    """Copies in front of a chain node's own independent sequences (batch (R, B, T)): evidence per copy."""
    sequences = RNG.normal(0.0, 2.0, size=(R, 2, 12))
    with fg.Model(copies=R) as model:
        hidden_markov(fg.per_copy(sequences), chains=2)
    assert model["z"].batch_shape == (R, 2, 12)
    result = fg.infer(model, free_energy=True)
    for r in range(R):
        with fg.Model() as alone_model:
            hidden_markov(sequences[r], chains=2)
        alone = fg.infer(alone_model, free_energy=True)
        assert result.log_evidence[r] == pytest.approx(alone.log_evidence, rel=1e-12)
        assert result.free_energy[-1][r] == pytest.approx(alone.free_energy[-1], rel=1e-10)
        np.testing.assert_allclose(result.marginal("z").probabilities[r], alone.marginal("z").probabilities,
                                   atol=1e-12)


# ------------------------------------------------------------------ rebinding and bad input
def test_data_rebound_per_copy_or_shared_without_recompiling():
    with fg.Model(copies=R) as model:
        normal_gamma(0.0, fg.per_copy(DATA))
    plan = fg.compile(model, algorithm="vmp", init={"tau": fg.Gamma(2.0, 1.0)})
    per_copy = fg.run(plan, data={"y": DATA[::-1]}, iterations=5)  # (R, N): one data set per copy
    shared = fg.run(plan, data={"y": DATA[1]}, iterations=5)  # (N,): the same data for every copy
    for r in range(R):
        with fg.Model() as alone_model:
            normal_gamma(0.0, DATA[R - 1 - r])
        alone = fg.infer(alone_model, algorithm="vmp", iterations=5, init={"tau": fg.Gamma(2.0, 1.0)})
        np.testing.assert_allclose(np.array(per_copy.free_energy)[:, r], alone.free_energy, rtol=1e-12)
    np.testing.assert_allclose(np.ptp(np.array(shared.free_energy), axis=1), 0.0, atol=1e-9)


def test_bad_input_is_named():
    with pytest.raises(fg.ModelError, match=r"data for 'y'.*copy axes \(3,\) first.*\(4, 15\)"):
        with fg.Model(copies=R):
            normal_gamma(0.0, fg.per_copy(np.zeros((4, 15))))
    with pytest.raises(fg.ModelError, match=r"node 'mu', parameter 'mean'.*copy axes"):
        with fg.Model(copies=R):
            Normal("mu", mean=fg.per_copy(np.zeros(2)), var=1.0)
    with pytest.raises(fg.ModelError, match=r"per_copy\(\.\.\.\) needs a model with copies"):
        with fg.Model():
            Normal("mu", mean=fg.per_copy(np.zeros(3)), var=1.0)
    with pytest.raises(fg.ModelError, match=r"copies"):
        fg.Model(copies=0)
    with fg.Model(copies=R) as model:
        normal_gamma(0.0, fg.per_copy(DATA))
    with pytest.raises(fg.ModelError, match=r"init\['tau'\] has batch shape \(4,\).*\(3,\)"):
        fg.infer(model, algorithm="vmp", init={"tau": fg.Gamma(np.ones(4), 1.0)})
    with pytest.raises(fg.DataError, match=r"data for 'y' has shape \(2, 15\).*\(15,\).*\(3, 15\)"):
        fg.infer(model, algorithm="vmp", init={"tau": fg.Gamma(2.0, 1.0)}, data={"y": DATA[:2]})
    with pytest.raises(fg.ModelTypeError, match="per_copy takes an array"):
        fg.per_copy(fg.Gamma(1.0, 1.0))
    with fg.Model() as plain:
        normal_gamma(0.0, DATA[0])
    result = fg.infer(plain, algorithm="vmp", init={"tau": fg.Gamma(2.0, 1.0)}, iterations=2)
    with pytest.raises(fg.ModelError, match=r"has none"):
        result.copy(0)
    result = fg.infer(model, algorithm="vmp", init={"tau": fg.Gamma(2.0, 1.0)}, iterations=2)
    with pytest.raises(fg.ModelError, match=r"copy index \(3,\)"):
        result.copy(3)


def plates_around_constants(prior_mean, data, shift):
    """Plates of rank 2 observed around constants alone (the data shared by every copy; a constant per copy)
    beside a mean-field normal–gamma: their energies are constants of the run, per copy."""
    mu = Normal("mu", mean=prior_mean, var=4.0)
    tau = Gamma("tau", shape=2.0, rate=1.0)
    Normal("y", mean=mu, precision=tau, observed=data)
    Normal("w", mean=0.5, var=1.5, observed=SHARED)  # constants and shared data: one energy per element
    Normal("v", mean=shift, var=2.0, observed=SHARED)  # a per-copy constant: its energy differs per copy


def test_per_copy_free_energies_count_plates_observed_around_constants():
    """Every copy's free energy, the energies of plates of constants and data included, equals that copy's alone."""
    with fg.Model(copies=R) as model:
        plates_around_constants(fg.per_copy(PRIOR_MEANS), fg.per_copy(DATA), fg.per_copy(PRIOR_MEANS / 2))
    batched = fg.infer(model, algorithm="vmp", init={"tau": fg.Gamma(2.0, 1.0)}, iterations=6)
    for r in range(R):
        with fg.Model() as alone_model:
            plates_around_constants(PRIOR_MEANS[r], DATA[r], PRIOR_MEANS[r] / 2)
        alone = fg.infer(alone_model, algorithm="vmp", init={"tau": fg.Gamma(2.0, 1.0)}, iterations=6)
        np.testing.assert_allclose([trace[r] for trace in batched.free_energy], alone.free_energy, rtol=1e-12)


def test_per_copy_sums_of_energies_broadcast_over_a_plate():
    """An energy given once for elements that share it counts once per element, per copy (hand-summed). Direct:
    the nodes of today give such energies only where they are zero (a sum of known inputs), so no model's numbers
    would show a wrong count."""
    from fgraph.free_energy import _per_copy_sum_over_batch

    # one value for every copy and element of a batch (3, 1, 4): 4 elements per copy
    np.testing.assert_allclose(_per_copy_sum_over_batch(np.array(2.0), (3, 1, 4), (3,)), [8.0, 8.0, 8.0])
    # one value per copy, shared by the 2 x 4 elements of its plate
    np.testing.assert_allclose(_per_copy_sum_over_batch(np.array([[[1.0]], [[2.0]], [[3.0]]]), (3, 2, 4), (3,)),
                               [8.0, 16.0, 24.0])
    # one value per plate element, shared by the copies
    np.testing.assert_allclose(_per_copy_sum_over_batch(np.array([1.0, 2.0, 3.0, 4.0]), (3, 1, 4), (3,)),
                               [10.0, 10.0, 10.0])


# ------------------------------------------------------------------ node powers per copy (fractional VB grids)
POWERS = np.array([1.0, 0.6, 0.25])  # ω per copy: a grid of tempered likelihoods


@pytest.mark.parametrize("collapse_plates", [True, False], ids=["collapsed", "element-wise"])
def test_a_likelihood_power_per_copy_equals_each_power_alone(collapse_plates):
    with fg.Model(copies=R) as model:
        mu = Normal("mu", mean=0.0, var=10.0)
        tau = Gamma("tau", shape=2.0, rate=1.0)
        Normal("y", mean=mu, precision=tau, observed=DATA[0], power=fg.per_copy(POWERS))
    plan = fg.compile(model, algorithm="vmp", init={"tau": fg.Gamma(2.0, 1.0)}, collapse_plates=collapse_plates)
    result = fg.run(plan, iterations=10)
    trace = np.array(result.free_energy)
    assert np.all(np.diff(trace, axis=0) <= 1e-9 * np.abs(trace[1:]))
    for r in range(R):
        with fg.Model() as alone_model:
            mu = Normal("mu", mean=0.0, var=10.0)
            tau = Gamma("tau", shape=2.0, rate=1.0)
            Normal("y", mean=mu, precision=tau, observed=DATA[0], power=float(POWERS[r]))
        alone = fg.run(fg.compile(alone_model, algorithm="vmp", init={"tau": fg.Gamma(2.0, 1.0)},
                                  collapse_plates=collapse_plates), iterations=10)
        np.testing.assert_allclose(trace[:, r], alone.free_energy, rtol=1e-12)
        assert_same(result.marginal("tau")[r], alone.marginal("tau"))


def test_a_power_per_copy_on_a_tree_and_its_checks():
    with fg.Model(copies=R) as model:
        tree(0.0, DATA[1])
        Normal("v", mean=model["b"], var=2.0, observed=1.3, power=fg.per_copy(POWERS))
    result = fg.infer(model)
    for r in range(R):
        with fg.Model() as alone_model:
            tree(0.0, DATA[1])
            Normal("v", mean=alone_model["b"], var=2.0, observed=1.3, power=float(POWERS[r]))
        alone = fg.infer(alone_model)
        assert result.log_evidence[r] == pytest.approx(alone.log_evidence, rel=1e-12)
        assert_same(result.marginal("a")[r], alone.marginal("a"))
    with pytest.raises(fg.ModelError, match=r"node 'v': a per-copy power has one number per copy, shape \(3,\)"):
        with fg.Model(copies=R):
            Normal("v", mean=0.0, var=2.0, observed=1.3, power=fg.per_copy(np.full(2, 0.5)))
    with pytest.raises(fg.ModelError, match=r"node 'v': every per-copy power must lie in \(0, 1\]"):
        with fg.Model(copies=R):
            Normal("v", mean=0.0, var=2.0, observed=1.3, power=fg.per_copy(np.array([0.5, 1.5, 1.0])))


# ------------------------------------------------------------------ vectors, placeholders
def test_bayesian_linear_regression_with_a_prior_mean_per_copy_bound_through_a_placeholder():
    """A per-copy vector constant (event axes after the padded plate) and an fg.Data re-bound per copy."""
    from fgraph.nodes import Dot

    features = RNG.normal(size=(8, 2))
    targets = features @ np.array([0.7, -1.1]) + RNG.normal(0.0, 0.5, size=8)
    means = np.arange(R * 2, dtype=float).reshape(R, 2)
    with fg.Model(copies=R) as model:
        prior_mean = fg.Data("m0", fg.per_copy(means), event_ndim=1)
        w = MvNormal("w", mean=prior_mean, cov=np.eye(2))
        Normal("y", mean=Dot("s", features, w), var=0.5, observed=targets)
    assert model["w"].batch_shape == (R, 1) and model["s"].batch_shape == (R, 8)
    plan = fg.compile(model)
    for bound in (means, -means):
        result = fg.run(plan, data={"m0": bound})
        for r in range(R):
            with fg.Model() as alone_model:
                w = MvNormal("w", mean=bound[r], cov=np.eye(2))
                Normal("y", mean=Dot("s", features, w), var=0.5, observed=targets)
            alone = fg.infer(alone_model)
            assert result.log_evidence[r] == pytest.approx(alone.log_evidence, rel=1e-12)
            assert_same(result.marginal("w")[r], alone.marginal("w"))


def test_plate_sums_keep_the_copy_axes():
    """natural_parameter_totals(keep): sums over the batch axes after the first `keep` (hand-summed)."""
    from fgraph.families.gaussian_plate import GaussianLikelihoodOnDemand

    mean = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])  # batch (2, 3): 2 copies, a plate of 3
    message = fg.NormalMeanVariance(mean, np.full((2, 3), 0.5))  # η = (m / v, -1 / 2v) = (2m, -1)
    first, second = message.natural_parameter_totals(1)
    np.testing.assert_allclose(first, [12.0, 30.0])
    np.testing.assert_allclose(second, [-3.0, -3.0])
    np.testing.assert_allclose(message.natural_parameter_totals()[0], 42.0)

    # an on-demand plate given its sums per copy: the sums over every axis and over padded axes of length 1
    # follow from them without forming the elements
    def elements():
        raise AssertionError("the elements must not be formed")

    per_copy = (np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([np.eye(2), 2 * np.eye(2)]))
    on_demand = GaussianLikelihoodOnDemand(elements, (2, 1, 5), per_copy, keep=1)
    total_mean, total_eta2 = on_demand.natural_parameter_totals()
    np.testing.assert_allclose(total_mean, [4.0, 6.0])
    np.testing.assert_allclose(total_eta2, -0.5 * 3 * np.eye(2))
    padded_mean, _ = on_demand.natural_parameter_totals(2)  # axis 1 has length 1: the same sums, reshaped
    np.testing.assert_allclose(padded_mean, [[[1.0, 2.0]], [[3.0, 4.0]]])
    with pytest.raises(ValueError, match="totals have shape"):
        GaussianLikelihoodOnDemand(elements, (2, 5), (np.zeros(2), np.eye(2)), keep=1)
