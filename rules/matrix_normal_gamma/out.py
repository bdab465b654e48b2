"""Messages out of the matrix-normal–gamma prior node towards ``out``."""
from fgraph.families import PointMass
from fgraph.families.matrix_normal_gamma import MatrixNormalGamma
from fgraph.registry import rule
from fgraph.nodes.matrix_normal_gamma import MatrixNormalGammaNode


@rule(MatrixNormalGammaNode, "out")
def from_parameters(q_mean: PointMass, q_column_covariance: PointMass, q_shape: PointMass,
                    q_rate: PointMass) -> MatrixNormalGamma:
    """MNG(A, λ | M, V, α, β): the factor itself, a density in ``(A, λ)`` (log-scale 0)."""
    return MatrixNormalGamma(q_mean.value, q_column_covariance.value, q_shape.value, q_rate.value, check=False)
