"""Shared inputs of the SwitchingRegression table tests: K = 2 components, p = 2, J = 2 responses, λ = 2.

Component 1: m = (1, 0),  S = I/2;        component 2: m = (0, −1), S = diag(0.1, 0.2).
"""
import numpy as np

from fgraph.families import MvNormalMeanCovariance

LOG_2PI = np.log(2.0 * np.pi)
LAMBDA = 2.0
COEFFICIENTS = MvNormalMeanCovariance(np.array([[1.0, 0.0], [0.0, -1.0]]),
                                      np.array([0.5 * np.eye(2), np.diag([0.1, 0.2])]))
NODE = dict(batch_shape=(2,), plate_shape=(), noise_precision=LAMBDA)
