"""Brute-force references for the Transition rule tests: the factor evaluated on one-hot vectors and summed.

f(out, in, A) = prod_ij A_ij^(out_i in_j); with a MatrixDirichlet q(A) the
structured rules use exp E_q[log f] = prod_ij Ã_ij^(out_i in_j), and for
K_out = 2 every E[log A_ij] is computed here by quadrature against the Beta
density of A_0j (independently of the family's digamma formula).
"""
import numpy as np
from scipy import integrate, stats


def factor(out, in_, matrix):
    """f(out, in, A) by its definition (numpy's 0**0 = 1 covers structural zeros)."""
    return np.prod(matrix ** np.outer(out, in_))


def summed_over_in(matrix, in_weights):
    """g(out = e_i) = Σ_j f(e_i, e_j, A) w_j for every i."""
    num_out, num_in = matrix.shape
    eye_out, eye_in = np.eye(num_out), np.eye(num_in)
    return np.array([sum(factor(eye_out[i], eye_in[j], matrix) * in_weights[j] for j in range(num_in))
                     for i in range(num_out)])


def summed_over_out(matrix, out_weights):
    """g(in = e_j) = Σ_i f(e_i, e_j, A) w_i for every j."""
    num_out, num_in = matrix.shape
    eye_out, eye_in = np.eye(num_out), np.eye(num_in)
    return np.array([sum(factor(eye_out[i], eye_in[j], matrix) * out_weights[i] for i in range(num_out))
                     for j in range(num_in)])


def geometric_mean_matrix_by_quadrature(alpha):
    """exp E[log A_ij] for a 2 x K_in MatrixDirichlet, each column's first entry being Beta(alpha_0j, alpha_1j)."""
    alpha = np.asarray(alpha, dtype=float)
    assert alpha.shape[0] == 2
    result = np.empty_like(alpha)
    for j in range(alpha.shape[1]):
        density = stats.beta(alpha[0, j], alpha[1, j])
        result[0, j] = integrate.quad(lambda u: np.log(u) * density.pdf(u), 0.0, 1.0)[0]
        result[1, j] = integrate.quad(lambda u: np.log1p(-u) * density.pdf(u), 0.0, 1.0)[0]
    return np.exp(result)
