"""Shared inputs of the GaussianMixture table tests: K = 2 components in d = 2, worked by hand.

Component 1: m = (0, 0), β = 2, W = I, ν = 3            → E[Λ] = 3 I,  log |W| = 0,
             E[log |Λ|] = ψ(3/2) + ψ(1) + 2 log 2 = (2 − γ − 2 log 2) − γ + 2 log 2 = 2 − 2γ.
Component 2: m = (1, −1), β = 1, W = diag(1/2, 2), ν = 4 → E[Λ] = diag(2, 8), log |W| = 0,
             E[log |Λ|] = ψ(2) + ψ(3/2) + 2 log 2 = (1 − γ) + (2 − γ − 2 log 2) + 2 log 2 = 3 − 2γ.
(γ is Euler's constant; ψ(1) = −γ, ψ(3/2) = 2 − γ − 2 log 2, ψ(2) = 1 − γ.)
"""
import numpy as np

from fgraph.families.normal_wishart import NormalWishart

EULER = np.euler_gamma
LOG_2PI = np.log(2.0 * np.pi)
PARAMETERS = NormalWishart(np.array([[0.0, 0.0], [1.0, -1.0]]), np.array([2.0, 1.0]),
                           np.array([np.eye(2), np.diag([0.5, 2.0])]), np.array([3.0, 4.0]))
MEAN_LOGDET = np.array([2.0 - 2.0 * EULER, 3.0 - 2.0 * EULER])
MEAN_PRECISION = np.array([3.0 * np.eye(2), np.diag([2.0, 8.0])])
LOCATIONS = np.array([[0.0, 0.0], [1.0, -1.0]])
NODE = dict(batch_shape=(2,), plate_shape=())
