"""Messages out of the Gaussian-process prior towards ``out``."""
from fgraph.families import PointMass
from fgraph.families.gaussian_process import GaussianProcessPrior
from fgraph.registry import rule
from fgraph.nodes.gaussian_process import GaussianProcessNode


@rule(GaussianProcessNode, "out")
def from_known_mean(q_mean: PointMass, node) -> GaussianProcessPrior:
    """N(out | m, K) with K = k(X, X): the prior itself (a normalised density, log-scale 0)."""
    return GaussianProcessPrior(q_mean.value, node.kernel_matrix(), jitter=node.jitter,
                                name=f"the kernel matrix of {node.name!r}")
