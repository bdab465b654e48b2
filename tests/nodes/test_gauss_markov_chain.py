"""Gauss–Markov chain node: the average energy of the whole chain against the unrolled chain.

U = −E_q[log f] with independent q(x_t) per step:
U_1 = ½ (log 2π v₀ + E[(x_1 − m₀)²] / v₀),
U_t = ½ (log 2π q + (E[x_t²] − 2a E[x_t] E[x_{t−1}] + a² E[x_{t−1}²]) / q).
The unrolled chain is a prior Normal node and T − 1 Linear nodes; under
mean-field VMP its free energy is F = Σ_nodes U − Σ_t H[q(x_t)], so at the
unrolled graph's own marginals Σ_t U_t must equal F + Σ_t H[q_t] minus the
observation nodes' energies (written out here).
"""
import numpy as np
from scipy.stats import norm

import fgraph as fg
from fgraph.families import NormalMeanVariance as NormalDistribution
from fgraph.families import PointMass
from fgraph.nodes.gauss_markov_chain import GaussMarkovChainNode
from tests.graphs import unrolled_gauss_markov_chain
from tests.rules.tables import energy

GAIN, PROCESS_VAR, INITIAL_MEAN, INITIAL_VAR, NOISE_VAR = 0.9, 0.5, 0.2, 1.5, 0.8
CHAIN = dict(gain=GAIN, var=PROCESS_VAR, initial_mean=INITIAL_MEAN, initial_var=INITIAL_VAR)


def chain_energy(q_out, batch_shape):
    return energy(GaussMarkovChainNode, {"q_out": q_out}, batch_shape=batch_shape, **CHAIN)


def test_an_observed_path_has_minus_its_log_density_per_step():
    path = np.array([0.4, -0.3, 1.1, 0.8])
    result = chain_energy(PointMass(path, 0), (4,))
    expected = -np.concatenate([[norm.logpdf(path[0], INITIAL_MEAN, np.sqrt(INITIAL_VAR))],
                                norm.logpdf(path[1:], GAIN * path[:-1], np.sqrt(PROCESS_VAR))])
    np.testing.assert_allclose(result, expected, rtol=1e-12)


def unrolled(y):
    return unrolled_gauss_markov_chain(y, GAIN, PROCESS_VAR, INITIAL_MEAN, INITIAL_VAR, NOISE_VAR)


def test_energy_equals_the_unrolled_chains_mean_field_free_energy():
    y = np.random.default_rng(5).normal(size=8)
    init = {f"x{t}": fg.NormalMeanVariance(0.0, 1.0) for t in range(len(y))}
    result = fg.infer(unrolled(y), algorithm="vmp", iterations=60, init=init)
    means = np.array([result.marginal(f"x{t}").mean for t in range(len(y))])
    variances = np.array([result.marginal(f"x{t}").var for t in range(len(y))])
    entropies = 0.5 * np.log(2 * np.pi * np.e * variances)
    observation_energies = 0.5 * (np.log(2 * np.pi * NOISE_VAR) + ((y - means) ** 2 + variances) / NOISE_VAR)
    chain = chain_energy(NormalDistribution(means, variances), (len(y),))
    np.testing.assert_allclose(np.sum(chain), result.free_energy[-1] + entropies.sum() - observation_energies.sum(),
                               rtol=1e-12)
    # per step, the energies of the unrolled nodes (prior, then x_t = a x_{t−1} + noise) written out
    second = variances + means**2
    expected = np.concatenate([
        [0.5 * (np.log(2 * np.pi * INITIAL_VAR) + (second[0] - 2 * INITIAL_MEAN * means[0] + INITIAL_MEAN**2) / INITIAL_VAR)],
        0.5 * (np.log(2 * np.pi * PROCESS_VAR)
               + (second[1:] - 2 * GAIN * means[1:] * means[:-1] + GAIN**2 * second[:-1]) / PROCESS_VAR),
    ])
    np.testing.assert_allclose(chain, expected, rtol=1e-12)


def test_a_batch_of_chains_has_the_energies_of_each_chain():
    rng = np.random.default_rng(6)
    means, variances = rng.normal(size=(3, 5)), rng.uniform(0.2, 2.0, size=(3, 5))
    together = chain_energy(NormalDistribution(means, variances), (3, 5))
    for b in range(3):
        np.testing.assert_allclose(together[b], chain_energy(NormalDistribution(means[b], variances[b]), (5,)),
                                   rtol=1e-14)
