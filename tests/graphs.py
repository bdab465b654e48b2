"""Small models shared by several test modules."""
from __future__ import annotations

import fgraph as fg
from fgraph.nodes import Gamma, Normal
from fgraph.nodes.normal import NormalMeanVariance


def loopy_gaussian_model(y=1.7):
    """x ~ N(0, 1); two factors N(z | x, 1) and N(z | x, 2) between the same pair (one loop); y ~ N(z, 1).

    Exact posterior: z's two factors combine into N(z | x, 2/3), so the model
    is the chain x ~ N(0, 1), z | x ~ N(x, 2/3), y | z ~ N(z, 1).
    """
    with fg.Model() as model:
        x = Normal("x", mean=0.0, var=1.0)
        z = Normal("z", mean=x, var=1.0)
        model.add_node(NormalMeanVariance, "second", {"out": z, "mean": x, "var": 2.0})
        Normal("y", mean=z, var=1.0, observed=y)
    return model


def unrolled_gauss_markov_chain(y, gain, process_var, initial_mean, initial_var, noise_var):
    """x_0 ~ N(m₀, v₀), x_t = a x_{t−1} + N(0, q) as T − 1 Linear nodes, y_t ~ N(x_t, r) observed: the graph a
    GaussMarkovChain node stands for, one node per step."""
    from fgraph.nodes import Linear

    with fg.Model() as model:
        state = Normal("x0", mean=initial_mean, var=initial_var)
        Normal("y0", mean=state, var=noise_var, observed=y[0])
        for t in range(1, len(y)):
            state = Linear(f"x{t}", state, gain, process_var)
            Normal(f"y{t}", mean=state, var=noise_var, observed=y[t])
    return model


def normal_gamma(y):
    """Unknown mean and precision of the observations ``y``: N(0, 10) and Gamma(2, 1) priors."""
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=10.0)
        tau = Gamma("tau", shape=2.0, rate=1.0)
        Normal("y", mean=mu, precision=tau, observed=y)
    return model
