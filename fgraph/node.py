"""Factor nodes: the base class every concrete node in ``nodes/`` derives from.

A node *type* is a subclass of :class:`FactorNode` that declares its
interfaces (``interfaces``) and the event rank of each (``event_ndims``).
A node *instance* lives in a model; it knows its name, its batch shape (the
plate it is replicated over), its power ``ω`` (a fractional likelihood scales
its messages and its energy) and any fixed attributes (a gain matrix, ...).
The engine never imports concrete nodes: it only talks to this interface.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np


class FactorNode:
    """A factor ``f(x_1, ..., x_k)`` of a Forney-style factor graph.

    Class attributes
    ----------------
    interfaces : tuple of str
        Interface names in canonical order, the first one usually ``"out"``.
    event_ndims : dict str -> int
        Event rank of the variable on each interface (0 scalar, 1 vector, 2 matrix).
        Node types whose ranks depend on the model (``Equality``) may leave it empty.
    default_factorization : str
        ``"bp"`` (sum-product: one cluster of all latent interfaces) or
        ``"mf"`` (mean-field: every interface its own cluster), used when the
        user does not choose.
    """

    interfaces: ClassVar[tuple] = ()
    #: A compound node (a whole sequence in one node) couples the elements of its
    #: batch: its rules also receive the incoming message of their own interface
    #: (``m_<interface>``, every time step) and return messages whose log-scales
    #: already include the incoming ones.
    couples_batch: ClassVar[bool] = False
    event_ndims: ClassVar[dict] = {}
    default_factorization: ClassVar[str] = "bp"

    def __init__(self, name: str, batch_shape: tuple = (), power: float = 1.0, **attributes):
        if not (0.0 < float(power) <= 1.0):
            raise ValueError(f"node {name!r}: power must lie in (0, 1], got {power!r}")
        self.name = name
        self.batch_shape = tuple(batch_shape)
        self.power = float(power)
        self.attributes = attributes
        for key, value in attributes.items():
            setattr(self, key, value)

    def interface_batch_shape(self, interface: str) -> tuple:
        """Batch shape of the messages on ``interface``; compound nodes override this."""
        return self.batch_shape

    def interface_event_ndim(self, interface: str) -> int:
        return self.event_ndims.get(interface, 0)

    @property
    def batch_size(self) -> int:
        return int(np.prod(self.batch_shape, dtype=int))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"
