"""The engine's per-run and per-update shortcuts against their reference paths.

* What the engine derives from a plan alone (which variables carry scales,
  the free energy's variable terms, the energies' direct calls, the initial
  messages broadcast to their sockets) is kept with the plan across runs:
  a second run, with other data or another init, gives the numbers of a
  freshly compiled plan, and a plan given another init does not reuse the
  initial messages of the first.
* The mixture node (a variadic group of inputs) against model averaging in
  closed form.
* Data checked for NaN and infinities through one sum: finite data whose sum
  overflows still bind, every kind of bad value is still refused and located.
"""
import numpy as np
import pytest

import fgraph as fg
from fgraph.nodes import Categorical, Mixture, Normal
from tests.graphs import normal_gamma


PRIOR = [(-1.0, 1.0), (0.5, 0.5), (2.0, 4.0)]  # (mean, variance) of x under each sub-model
SWITCH = np.array([0.5, 0.3, 0.2])
NOISE = 4.0


def model_averaging(y):
    with fg.Model() as model:
        inputs = [Normal(f"x{k}", mean=m, var=v) for k, (m, v) in enumerate(PRIOR)]
        switch = Categorical("z", p=SWITCH)
        x = Mixture("x", switch, inputs)
        Normal("y", mean=x, var=NOISE, observed=y)
    return model


def vmp_numbers(result) -> tuple:
    q_mu, q_tau = result.marginal("mu"), result.marginal("tau")
    return float(q_mu.mean), float(q_mu.var), float(q_tau.shape), float(q_tau.rate), list(result.free_energy)


def mixture_numbers(result) -> tuple:
    q_x = result.marginal("x")
    return (result.marginal("z").probabilities.tolist(), float(result.log_evidence), q_x.weights.tolist(),
            [(float(c.mean), float(c.var)) for c in q_x.components], float(q_x.mean), float(q_x.var))


DATA = [np.random.default_rng(seed).normal(1.0 + seed, 0.5 + seed, size=40) for seed in range(2)]


@pytest.mark.parametrize("collapse", [True, False])
def test_a_plan_run_again_with_other_data_gives_the_numbers_of_a_fresh_plan(collapse):
    model = normal_gamma(DATA[0])
    plan = fg.compile(model, algorithm="vmp", init={"tau": fg.Gamma(2.0, 1.0)}, collapse_plates=collapse)
    first = vmp_numbers(fg.run(plan, iterations=6, free_energy=True))
    again = vmp_numbers(fg.run(plan, data={"y": DATA[1]}, iterations=6, free_energy=True))
    fresh_plan = fg.compile(normal_gamma(DATA[1]), algorithm="vmp", init={"tau": fg.Gamma(2.0, 1.0)},
                            collapse_plates=collapse)
    fresh = vmp_numbers(fg.run(fresh_plan, iterations=6, free_energy=True))
    assert again == fresh  # the same computation on the same values: equal to the bit
    assert again != first  # the data did change the answer


def test_a_plan_given_another_init_does_not_reuse_the_first_init_messages():
    model = normal_gamma(DATA[0])
    first_init, second_init = fg.Gamma(2.0, 1.0), fg.Gamma(30.0, 0.5)
    plan = fg.compile(model, algorithm="vmp", init={"tau": first_init})
    first = vmp_numbers(fg.run(plan, iterations=1, free_energy=True))
    # the same structure with another init: a copy of the plan (see fg.compile)
    other = fg.compile(model, algorithm="vmp", init={"tau": second_init})
    second = vmp_numbers(fg.run(other, iterations=1, free_energy=True))
    fresh = vmp_numbers(fg.run(fg.compile(normal_gamma(DATA[0]), algorithm="vmp", init={"tau": second_init}),
                               iterations=1, free_energy=True))
    assert second == fresh
    assert second != first  # one sweep from another init ends elsewhere
    # a plan's initial values are read-only: other ones are another plan
    with pytest.raises(TypeError):
        plan.init["tau"] = second_init
    assert vmp_numbers(fg.run(plan, iterations=1, free_energy=True)) == first


def closed_form_averaging(y) -> tuple:
    """:func:`mixture_numbers` of :func:`model_averaging` by the conjugate update, in numpy: under sub-model k,
    x | y ~ N(m_k', v_k') and log p(y | k) = log N(y | m_k 1, v_k 11ᵀ + σ² I) (matrix determinant lemma)."""
    n, total, squares = len(y), float(np.sum(y)), float(np.sum(y * y))
    means, variances, log_evidences = [], [], []
    for mean, var in PRIOR:
        posterior_var = 1.0 / (1.0 / var + n / NOISE)
        means.append(posterior_var * (mean / var + total / NOISE))
        variances.append(posterior_var)
        quadratic = (squares - 2 * mean * total + n * mean**2) / NOISE \
            - var * ((total - n * mean) / NOISE) ** 2 / (1.0 + n * var / NOISE)
        log_evidences.append(-0.5 * (n * np.log(2 * np.pi * NOISE) + np.log1p(n * var / NOISE) + quadratic))
    joint = np.log(SWITCH) + np.array(log_evidences)
    log_evidence = float(np.logaddexp.reduce(joint))
    weights = np.exp(joint - log_evidence)
    mean = float(weights @ means)
    var = float(weights @ (np.array(variances) + np.array(means) ** 2) - mean**2)
    return (weights.tolist(), log_evidence, weights.tolist(), list(zip(means, variances)), mean, var)


@pytest.mark.parametrize("size", [5, 2000])
def test_model_averaging_gives_the_closed_form(size):
    """The mixture's rules (switch, output, the K inputs as one group) against the conjugate update."""
    y = np.random.default_rng(size).normal(1.0, 2.0, size=size)
    ours, exact = mixture_numbers(fg.infer(model_averaging(y))), closed_form_averaging(y)
    np.testing.assert_allclose(ours[0], exact[0], rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(ours[1], exact[1], rtol=1e-12)
    np.testing.assert_allclose(ours[2], exact[2], rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(ours[3], exact[3], rtol=1e-10)
    np.testing.assert_allclose(ours[4], exact[4], rtol=1e-10)
    # the mixture's variance is E[x²] − E[x]²: round-off relative to E[x²], not to the (small) variance
    np.testing.assert_allclose(ours[5], exact[5], rtol=0, atol=1e-12 * (exact[5] + exact[4] ** 2))


def test_a_mixture_run_again_with_other_data_gives_the_numbers_of_a_fresh_plan():
    plan = fg.compile(model_averaging(DATA[0]), algorithm="bp", marginals=["z", "x"])
    first = mixture_numbers(fg.run(plan))
    again = mixture_numbers(fg.run(plan, data={"y": DATA[1]}))
    fresh = mixture_numbers(fg.run(fg.compile(model_averaging(DATA[1]), algorithm="bp", marginals=["z", "x"])))
    assert again == fresh
    assert again != first


# ------------------------------------------------------------------ data check
def test_finite_data_whose_sum_overflows_are_bound():
    y = np.array([1e308, 1e308, 1e308, -5.0])
    model = normal_gamma(y)
    assert np.array_equal(model.data["y"], y)


@pytest.mark.parametrize("bad, index", [(np.nan, 2), (np.inf, 0), (-np.inf, 3)])
def test_every_kind_of_bad_value_is_refused_and_located(bad, index):
    y = np.linspace(-1.0, 1.0, 5000)
    y[index] = bad
    with pytest.raises(fg.DataError, match=rf"contains 1 NaN or infinite value\(s\), first at index \({index},\)"):
        normal_gamma(y)


def test_infinities_of_both_signs_are_refused():
    """``+inf`` and ``-inf`` sum to NaN, not to a finite number; a strided view is checked too."""
    y = np.zeros((4000, 2))
    y[10, 0], y[20, 0] = np.inf, -np.inf
    with pytest.raises(fg.DataError, match=r"contains 2 NaN or infinite value\(s\), first at index \(10,\)"):
        normal_gamma(y[:, 0])  # not contiguous
    with pytest.raises(fg.DataError, match=r"contains 2 NaN or infinite value\(s\), first at index \(10,\)"):
        normal_gamma(np.ascontiguousarray(y[:, 0]))
