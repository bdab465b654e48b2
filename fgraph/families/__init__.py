"""Message and marginal families (batched over plates, carrying log-scales)."""
from fgraph.families.base import Distribution, ExponentialFamily
from fgraph.families.bernoulli import Bernoulli
from fgraph.families.beta import Beta
from fgraph.families.categorical import Categorical
from fgraph.families.dirichlet import Dirichlet
from fgraph.families.matrix_dirichlet import Contingency, MatrixDirichlet
from fgraph.families.gamma import Gamma, GammaShapeScale
from fgraph.families.inverse_gamma import InverseGamma, InverseGammaLikelihood
from fgraph.families.mvnormal import (
    GaussianLikelihood,
    MultivariateNormal,
    MvNormalMeanCovariance,
    MvNormalMeanPrecision,
    MvNormalWeightedMeanPrecision,
)
from fgraph.families.gaussian_process import GaussianProcessPosterior, GaussianProcessPrior, MvNormalDiagonal
from fgraph.families.normal import (
    NormalMeanPrecision,
    NormalMeanVariance,
    NormalWeightedMeanPrecision,
    UnivariateNormal,
)
from fgraph.families.pointmass import PointMass, Uninformative
from fgraph.families.mixture import Mixture
from fgraph.families.product import product, product_all
from fgraph.families import scipy_view  # noqa: F401  (registers Distribution.to_scipy)
from fgraph.families.gamma_shape import GammaShapeLikelihood
from fgraph.families.wishart import Wishart

__all__ = [
    "Distribution",
    "ExponentialFamily",
    "UnivariateNormal",
    "NormalMeanVariance",
    "NormalMeanPrecision",
    "NormalWeightedMeanPrecision",
    "MultivariateNormal",
    "MvNormalMeanCovariance",
    "MvNormalMeanPrecision",
    "MvNormalWeightedMeanPrecision",
    "GaussianLikelihood",
    "MvNormalDiagonal",
    "GaussianProcessPrior",
    "GaussianProcessPosterior",
    "Gamma",
    "GammaShapeScale",
    "InverseGamma",
    "InverseGammaLikelihood",
    "GammaShapeLikelihood",
    "Beta",
    "Bernoulli",
    "Categorical",
    "Dirichlet",
    "MatrixDirichlet",
    "Contingency",
    "Wishart",
    "PointMass",
    "Uninformative",
    "Mixture",
    "product",
    "product_all",
]
