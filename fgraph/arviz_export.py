"""Export to ArviZ: posterior draws, data and pointwise log-likelihoods as an ``arviz.InferenceData``.

``result.to_arviz()`` (:meth:`fgraph.result.Result.to_arviz`) fills three groups:

* ``posterior`` — ``draws`` draws per chain of every latent variable from its marginal ``q(s_i)``, shape
  ``(chain, draw) + plate + event``, by the families' own ``sample``. The variables are drawn independently,
  from ``Π_i q(s_i)``: the mean-field posterior of a VMP run; under BP each marginal is right and their
  correlations are left out. A categorical variable is stored as its state's index (``0..K−1``). A point mass
  (a form constraint's estimate) and a message that is not a distribution (a likelihood with flat directions)
  have no draws: they are left out with a warning.
* ``observed_data`` — the data of every observed variable.
* ``log_likelihood`` — for every observed variable ``y`` with the factor ``f(y | θ)`` on its ``out`` interface,
  ``log f(y_i | θ_s)`` per draw ``s`` and element ``i`` of its plate, shape ``(chain, draw) + plate``, so that
  ``arviz.waic`` and ``arviz.loo`` apply. It is read off the node's average energy
  ``U = −E_q[log f]`` with every neighbour's marginal replaced by a point mass at the draw (and the data and
  constants as they are): with point masses the expectation is ``log f`` itself. That is exact for the nodes
  that declare it (``FactorNode.energy_is_log_density``: the normal, multivariate normal, Bernoulli,
  categorical, gamma, beta, exponential, inverse-gamma and Dirichlet nodes); a node whose energy is a bound
  (the logistic and softmax nodes' auxiliary bounds, mixtures) has no such reading, and the export then leaves
  the group out with a warning naming the node. The energies are per element, so one call per node gives
  the ``(draws, plate)`` matrix: the draws are a leading batch axis.

A model with copies (``fg.Model(copies=R)``) is refused: its copies are independent runs (restarts that may
sit in different modes), not chains of one posterior; export a model without copies.

arviz is imported on first use (the ``arviz`` extra); :func:`inference_data` is the one builder, shared by
the scikit-learn estimators of :mod:`fgraph.models`.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np

from fgraph import registry
from fgraph.errors import FgraphError, ModelError
from fgraph.families.categorical import Categorical
from fgraph.families.pointmass import PointMass
from fgraph.message_families import common_family

__all__ = ["ARVIZ_EXTRA", "import_arviz", "inference_data", "check_draws", "result_to_arviz"]

#: How to install what the export needs.
ARVIZ_EXTRA = 'pip install "fgraph-mp[arviz]"'


def import_arviz():
    """The ``arviz`` module, or an ImportError naming the extra to install."""
    try:
        import arviz
    except ImportError as error:
        raise ImportError(f"exporting to ArviZ needs the arviz package, which is not installed: {ARVIZ_EXTRA}") \
            from error
    return arviz


def check_draws(draws, chains=1, seed=None) -> tuple:
    """``(draws, chains)`` as positive ints and a ``numpy.random.Generator`` from ``seed``; a clear error else."""
    for name, value in (("draws", draws), ("chains", chains)):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
            raise ModelError(f"to_arviz: {name}= must be a positive integer, got {value!r}")
    try:
        rng = np.random.default_rng(seed)
    except (TypeError, ValueError):
        raise ModelError(f"to_arviz: seed= must be None, an integer or a numpy Generator, got {seed!r}") from None
    return int(draws), int(chains), rng


def inference_data(posterior: dict, log_likelihood: dict | None = None, observed: dict | None = None,
                   dims: dict | None = None, coords: dict | None = None):
    """An ``arviz.InferenceData`` from arrays.

    ``posterior``: name -> draws of shape ``(chain, draw) + shape``; ``log_likelihood``: observed name ->
    ``log p(y_i | θ_s)`` of shape ``(chain, draw) + plate``; ``observed``: observed name -> data (``plate +
    event``). ``dims`` / ``coords`` as in ``arviz.from_dict`` (by default ArviZ names the axes
    ``<name>_dim_<k>``, the same in ``observed_data`` and ``log_likelihood``). Empty groups are left out.
    """
    arviz = import_arviz()
    return arviz.from_dict(posterior=posterior or None, log_likelihood=log_likelihood or None,
                           observed_data=observed or None, dims=dims, coords=coords)


# ------------------------------------------------------------------------- a run's result


def result_to_arviz(result, state, draws: int = 1000, seed=None, observed: bool = True, log_likelihood: bool = True,
                    chains: int = 1):
    """The ``arviz.InferenceData`` of a run (module docstring): ``chains × draws`` draws of every latent marginal,
    the observed data (``observed=``) and the pointwise log-likelihoods (``log_likelihood=``).

    ``state`` is the run's :class:`~fgraph.run_state.RunState` (its data and constants).
    """
    import_arviz()  # before any work: a missing arviz is said first
    draws, chains, rng = check_draws(draws, chains, seed)
    model = result.plan.graph.model
    if model.copy_shape:
        raise ModelError(
            "to_arviz exports a model without copies: the copies of fg.Model(copies=R) are independent runs "
            "(restarts that may sit in different modes), not chains of one posterior; build the model without "
            "copies (or with the copy you keep) and export its result")
    points, posterior, skipped = {}, {}, {}
    for name, marginal in result.marginals.items():
        if isinstance(marginal, PointMass):
            skipped[name] = "its marginal is a point mass (an estimate, not a distribution)"
            points[name] = np.asarray(marginal.value)  # the estimate itself, for the log-likelihood
            continue
        try:
            sample = marginal.sample(rng, (chains, draws))
        except (NotImplementedError, FgraphError) as error:
            skipped[name] = f"its {type(marginal).__name__} marginal cannot be sampled ({error})"
            continue
        points[name] = sample
        # a categorical draw is one-hot: ArviZ gets the state's index
        posterior[name] = np.argmax(sample, axis=-1) if isinstance(marginal, Categorical) else sample
    for name, why in skipped.items():
        warnings.warn(f"to_arviz: {name!r} is left out of the posterior group: {why}", UserWarning, stacklevel=3)
    data = {slot.name: np.asarray(state.data[slot.name]) for slot in result.plan.graph.slots.values()
            if slot.kind == "observed"}
    log_likelihoods = _log_likelihoods(result, state, points, (chains, draws)) if log_likelihood and data else None
    return inference_data(posterior, log_likelihoods, data if observed else None)


def _log_likelihoods(result, state, points: dict, draw_shape: tuple) -> dict | None:
    """Observed name -> ``log f(y_i | θ_s)`` of shape ``draw_shape + plate``, or ``None`` (with a warning saying
    which node or variable stands in the way) when some observed variable has none."""
    graph = result.plan.graph
    found = {}
    for slot in graph.slots.values():
        if slot.kind != "observed":
            continue
        socket = next((s for s in slot.sockets if s.interface == "out"), None)
        if socket is None:  # an observed input of other factors only (e.g. covariates): no likelihood of its own
            continue
        node = socket.node
        if not type(node).energy_is_log_density:
            return _without(f"node {node.name!r} ({type(node).__name__}) observing {slot.name!r} has no exact "
                            "log density at given parameters (its average energy is a bound)")
        missing = [other.slot.name for other in result.plan.nodes[node.name].sockets.values()
                   if not other.clamped and other.slot.name not in points]
        if missing:
            return _without(f"node {node.name!r} observing {slot.name!r} needs draws of {missing}, "
                            "which were left out of the posterior")
        found[slot.name] = _node_log_likelihood(result, state, node, points, draw_shape)
    return found


def _without(why: str) -> None:
    warnings.warn(f"to_arviz: no log_likelihood group (arviz.waic and arviz.loo need one): {why}", UserWarning,
                  stacklevel=4)
    return None


def _node_log_likelihood(result, state, node, points: dict, draw_shape: tuple) -> np.ndarray:
    """``−U`` of ``node`` with point masses at the draws on its latent interfaces: ``draw_shape + node batch``.

    The draws are flattened to one leading axis ``D`` and every latent value is padded with axes of length
    one between ``D`` and its own batch, so that numpy lines its plate up with the node's (right-aligned,
    as the rules do). The observed data enter as they are, not as a collapsed plate's moments.
    """
    node_plan = result.plan.nodes[node.name]
    count = int(np.prod(draw_shape))
    batch = tuple(node.batch_shape)
    inputs = {}
    for interface, socket in node_plan.sockets.items():
        event_ndim = socket.target.event_ndim
        if not socket.clamped:
            variable = socket.slot.variable
            value = np.asarray(points[socket.slot.name])
            own = tuple(variable.batch_shape) + tuple(variable.event_shape)
            if value.shape == own:  # a point-mass estimate: the same for every draw
                value = np.broadcast_to(value, draw_shape + own)
            value = value.reshape((count,) + (1,) * max(len(batch) - len(variable.batch_shape), 0) + own)
            inputs[f"q_{interface}"] = PointMass(value, event_ndim)
        elif socket.slot is not None and socket.slot.kind == "observed":
            inputs[f"q_{interface}"] = PointMass(np.asarray(state.data[socket.slot.name], dtype=float), event_ndim)
        else:
            inputs[f"q_{interface}"] = state.clamped[socket.index]
    families = node.group_inputs({key: type(value) for key, value in inputs.items()}, common_family)
    energy = registry.resolve(registry.ENERGY, type(node), None, families, f"node {node.name!r}",
                              node_plan.operator)
    values = np.broadcast_to(np.asarray(energy(node.group_inputs(inputs, tuple), node), dtype=float),
                             (count,) + batch)
    return -values.reshape(draw_shape + batch)
