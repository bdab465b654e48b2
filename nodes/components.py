"""The batch layout of a likelihood node with K components shared by a plate of points, one chosen per point.

Nodes such as :mod:`fgraph.nodes.gaussian_mixture` and :mod:`fgraph.nodes.switching_regression` hold a switch z_n and
K parameter sets for every point n of a plate. Their batch is ``(K,) + plate`` (with copies:
``copies + (K,) + plate``); the interface of the parameters (``component_interface``) has the
components and unit plate axes, ``(K,) + (1,) * len(plate)``, and every other interface the plate's
batch (with copies, a unit axis where the node has the components).
"""
from __future__ import annotations

import numpy as np

__all__ = ["SharedComponents"]


class SharedComponents:
    """Mixin of a node with ``plate_shape`` and K components: the layout of the module docstring."""

    #: the interface that carries the K components' parameters
    component_interface = ""

    @property
    def components(self) -> int:
        """K."""
        return self.batch_shape[self.component_axis]

    @property
    def component_axis(self) -> int:
        """The position of the components in the node's batch: ``(K,) + plate``, or ``copies + (K,) + plate``."""
        return len(self.batch_shape) - len(self.plate_shape) - 1

    def interface_batch_shape(self, interface: str) -> tuple:
        batch, axis = self.batch_shape, self.component_axis
        if interface == self.component_interface:
            return batch[:axis + 1] + (1,) * len(self.plate_shape)
        if getattr(self, "copy_ndim", 0):  # with copies the components' place is a unit axis of the plate's batch
            return batch[:axis] + (1,) + batch[axis + 1:]
        return batch[axis + 1:]

    def plate_to_node_batch(self, per_point: np.ndarray) -> np.ndarray:
        """An array of the plate's batch + (K,) as the node's batch ``copies + (K,) + plate``."""
        axis = self.component_axis
        if getattr(self, "copy_ndim", 0):  # the plate's batch has a unit axis where the node's has the components
            per_point = np.squeeze(per_point, axis)
        return np.moveaxis(per_point, -1, axis)
