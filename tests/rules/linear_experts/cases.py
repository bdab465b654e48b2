"""Shared inputs of the LinearExperts table tests: two experts, h = 1, one input x = 1 (x̃ = [1, 1]).

Expert 1: M = [[1, 0]], V = I, shape 2, rate 1 → E[λ] = 2, E[log λ] = ψ(2) = 1 − γ_E, x̃ᵀVx̃ = 2, μ = M x̃ = 1,
          c = ½ (1 − γ_E − log 2) − ½ · 2.
Expert 2: M = [[0, 2]], V = I/2, shape 1, rate 2 → E[λ] = 1/2, E[log λ] = ψ(1) − log 2 = −γ_E − log 2,
          x̃ᵀVx̃ = 1, μ = 2, c = ½ (−γ_E − log 2 + log 2) − ½ = −γ_E/2 − ½.
"""
import numpy as np

from fgraph.families import PointMass
from fgraph.families.matrix_normal_gamma import MatrixNormalGamma

EULER = np.euler_gamma
PARAMETERS = MatrixNormalGamma(np.array([[[1.0, 0.0]], [[0.0, 2.0]]]), np.array([np.eye(2), 0.5 * np.eye(2)]),
                               np.array([[2.0], [1.0]]), np.array([[1.0], [2.0]]))
INPUT = PointMass(np.array([1.0]), 1)
PRECISION = np.array([2.0, 0.5])  # E[λ_k]
PREDICTED = np.array([1.0, 2.0])  # M_k x̃
OFFSET = np.array([0.5 * (1.0 - EULER - np.log(2.0)) - 1.0, -0.5 * EULER - 0.5])  # c_k
NODE = dict(batch_shape=(2,), plate_shape=())


def log_normal(x, mean, var):
    return -0.5 * np.log(2 * np.pi * var) - 0.5 * (x - mean) ** 2 / var
