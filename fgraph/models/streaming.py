"""Online inference over a stream: a sequence model fed chunk by chunk, its chains' filter states carried over.

A model whose states form chains (compound chain nodes such as ``MvGaussMarkovChain``) is
rebuilt for every chunk of data by a function the user writes, ``build(chunk, start)``:
``start`` maps each chain's variable name to the keyword arguments that start it where the
previous chunk ended (empty for the first chunk), e.g.::

    def build(y, start):
        with fg.Model() as model:
            x = MvGaussMarkovChain("x", F, Q, length=len(y), causal=True,
                                   **start.get("x", {"initial_mean": m0, "initial_cov": P0}))
            MvLinear("y", x, C, R, observed=y)
        return model

    stream = OnlineFilter(build)
    for chunk in chunks:
        result = stream.update(chunk)       # the fg.Result of this chunk
        result.marginal("x")                # p(x_t | y up to t) for the chunk's steps
    stream.log_evidence                     # log p(all chunks so far)

After a chunk, each chain reports the prediction of its next state from its belief at the
chunk's last step, which is the filtering marginal p(x_T | everything so far) whatever the
chain's mode (:meth:`carried_state` of its node). With causal chains (``causal=True``) every
marginal is a filtering one, and on a tree (exact sum-product) the marginals and the
evidence equal those of one causal run over the concatenated chunks; with smoothing chains
each chunk is smoothed given everything before it (fixed-lag smoothing with the chunk as lag).
``log_evidence`` adds the chunks' evidences, log p(y_1:T) by the chain rule of probability.

Loopy models (run by VMP) are approximated chunk by chunk: the carried states are then those
of each chunk's converged approximation.

**Static parameters** (the coefficients of a regression fed observation by observation): name them in
``carry=("beta",)`` and each chunk's posterior marginal of ``beta`` is handed to the next chunk's build as
``start["beta"]`` (the distribution itself), whose prior it becomes — Bayesian filtering of a parameter,
p(β | chunks so far). Where the model is conjugate (a Gaussian prior and Gaussian observations of linear
functions of β, e.g. a classifier under a Gaussian likelihood approximation,
``Logistic(..., operator="moment")``) this is exact: the marginal after the last chunk and the summed
evidence equal those of one run on all the data::

    def build(chunk, start):
        X, y = chunk
        with fg.Model() as model:
            prior = start.get("beta")
            beta = MvNormal("beta", *((prior.mean, prior.cov) if prior else (np.zeros(D), 25 * np.eye(D))))
            Logistic("y", beta, X, observed=y, operator="moment")
        return model

    stream = OnlineFilter(build, carry=("beta",), algorithm="vmp", iterations=2)
"""
from __future__ import annotations

import fgraph as fg
from fgraph.errors import ModelError

__all__ = ["OnlineFilter"]


class OnlineFilter:
    """Feed a sequence chunk by chunk (:meth:`update`), keeping the chains' filter states between chunks.

    ``build(chunk, start) -> fg.Model`` builds the model of one chunk (module docstring);
    ``infer_options`` go to :func:`fgraph.infer` for every chunk (``algorithm``, ``iterations``, ...);
    ``carry`` names variables whose posterior marginals are handed to the next chunk (module docstring).
    Attributes: ``state`` (chain variable name -> keyword arguments starting its next chunk; a carried
    variable's name -> its marginal),
    ``log_evidence`` (the sum over the chunks so far; BP on a tree: exact), ``chunks`` (count).
    """

    def __init__(self, build, carry: tuple = (), **infer_options):
        if not callable(build):
            raise ModelError(f"OnlineFilter: build must be a function (chunk, start) -> fg.Model, got {build!r}")
        if isinstance(carry, str) or not all(isinstance(name, str) for name in carry):
            raise ModelError(f"OnlineFilter: carry must be a tuple of variable names, got {carry!r}")
        self.build = build
        self.carry = tuple(carry)
        self.infer_options = infer_options
        self.state: dict = {}
        self.log_evidence = 0.0
        self.chunks = 0

    def update(self, chunk) -> fg.Result:
        """Run the model of ``chunk`` from the carried states; carry the chains' states on. Returns its result."""
        model = self.build(chunk, dict(self.state))
        if not isinstance(model, fg.Model):
            raise ModelError(f"OnlineFilter: build returned {type(model).__name__}, not an fg.Model")
        result = fg.infer(model, **self.infer_options)
        carried = {}
        for node in model.nodes:
            carry = getattr(node, "carried_state", None)
            if carry is None:
                continue
            socket = result.plan.graph.node_sockets[node.name]["out"]
            carried[socket.slot.name] = carry(result.marginal(socket.slot.name))
        for name in self.carry:
            if name not in model.variables:
                raise ModelError(f"OnlineFilter: the variable {name!r} to carry is not in the model of chunk "
                                 f"{self.chunks + 1}; its variables: {', '.join(sorted(model.variables))}")
            carried[name] = result.marginal(name)
        if not carried:
            raise ModelError("OnlineFilter: the model of a chunk has no chain that can carry its state "
                             "(a compound chain node such as MvGaussMarkovChain) and carry= names no variable")
        missing = [name for name in self.state if name not in carried]
        if missing:
            raise ModelError(f"OnlineFilter: the chains {missing} of the previous chunk are missing from this one")
        self.log_evidence += self._evidence(result)
        self.state = carried
        self.chunks += 1
        return result

    @staticmethod
    def _evidence(result) -> float:
        if result.plan.exact:
            return float(result.log_evidence)
        if not result.free_energy:
            raise ModelError("OnlineFilter: this model's evidence is not exact and no free energy was computed; "
                             "pass free_energy=True")
        return -float(result.free_energy[-1])  # a bound (VMP) or the Bethe approximation (loopy BP)
