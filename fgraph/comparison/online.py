"""Online Bayesian model combination: a stream of observations, each assigned to its most probable model.

One compiled model per mini-batch size; each observation re-binds the data
and the prior probabilities of the switch (an ``fg.Data`` placeholder), so
the stream never recompiles. The stream runs under an informative Dirichlet
prior and Bayesian model reduction swaps in the target prior at the end.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from fgraph.comparison.builders import average
from fgraph.comparison.candidates import candidate_names, concentrations_per_candidate, takes_batch_shape
from fgraph.comparison.reader import log_evidence_per_candidate
from fgraph.comparison.reduction import dirichlet_model_reduction
from fgraph.errors import DataError, ModelError
from fgraph.families.dirichlet import Dirichlet as DirichletDistribution
from fgraph.families.dirichlet import log_multivariate_beta
from fgraph.inference import compile as compile_model
from fgraph.inference import run
from fgraph.model import Data, Model, Variable
from fgraph.progress import ProgressBar
from fgraph.nodes.categorical import Categorical

#: Total concentration per category of the informative prior an online combination starts from, by default.
DEFAULT_START_CONCENTRATION = 100.0


@dataclass
class OnlineCombination:
    """The outcome of :func:`combine_online` (what was computed, if interrupted).

    Attributes
    ----------
    names : tuple of str
    posterior : Dirichlet
        ``q(π)`` under the target prior ``Dir(prior)``, by Bayesian model reduction.
    posterior_informative : Dirichlet
        ``q(π) = Dir(start_prior + counts)``, under the prior the stream ran with.
    prior, start_prior : array (K,)
        The target (vague) and the starting (informative) concentrations.
    assignments : int array (n,)
        Index of the candidate each processed observation was assigned to.
    probabilities : array (n, K)
        The belief each assignment was read from, ``p(m_n | y_n, α_{n−1})``
        (the forward message ``Cat(α / Σα)`` times the evidences, normalised).
    log_evidences : array (n, K)
        ``log p(y_n | m_n = k)`` of every processed observation (the message to its switch).
    log_evidence_change : float
        Change of ``log p(y, m̂)`` from the starting to the target prior (the reduction's term).
    log_evidence : float
        ``log p(y_1..n, m̂_1..n)`` under the target prior: the evidences of the
        assigned models plus ``log B(prior + counts) − log B(prior)``.
    counts : array (K,)
        Number of observations assigned to each candidate.
    processed : int
        Observations processed; ``interrupted`` says whether the stream was stopped early.
    """

    names: tuple
    posterior: DirichletDistribution
    posterior_informative: DirichletDistribution
    prior: np.ndarray
    start_prior: np.ndarray
    assignments: np.ndarray
    probabilities: np.ndarray
    log_evidences: np.ndarray
    log_evidence_change: float
    log_evidence: float
    counts: np.ndarray
    processed: int
    interrupted: bool = False

    @property
    def expected_weights(self) -> dict:
        """``E[π_k]`` under :attr:`posterior`, by candidate name."""
        return {key: float(self.posterior.mean[k]) for k, key in enumerate(self.names)}


class _Step:
    """One compiled model of a mini-batch of ``size`` observations."""

    def __init__(self, name, candidates, names, likelihood, plate):
        with Model(f"{name}_online") as model:
            prior = Data(f"{name}_prior", shape=(len(names),), event_ndim=1)
            switch = Categorical(f"{name}_model", p=prior, batch_shape=plate or None)
            output = average(name, candidates, batch_shape=plate, switch=switch)
            observed = likelihood(output)
        if not isinstance(observed, Variable) or not observed.observed:
            raise ModelError(
                "likelihood must return the observed variable it creates (declared with observed=True), "
                f"got {observed!r}"
            )
        self.model = model
        self.prior = prior.name
        self.switch = switch.name
        self.observed = observed
        self.node = name
        self.plan = compile_model(model)
        if not self.plan.exact:
            raise ModelError(
                "combine_online needs exact per-observation evidences: the candidates and the likelihood must be "
                "sum-product on a tree (no loops, conjugate messages)"
            )


def combine_online(
    candidates: Mapping,
    likelihood: Callable,
    data,
    alpha=1.0,
    start_alpha=None,
    batch_size: int = 1,
    name: str = "x",
    progress: bool = False,
    callback: Callable | None = None,
) -> OnlineCombination:
    """Online Bayesian model combination with point-mass assignments (van Erp et al. 2023, §5.3.1, §6.1).

    Observations arrive one at a time (or ``batch_size`` at a time). For each,
    the engine computes the sub-model evidences ``p(y_n | m_n = k)`` (the
    message to its switch) and the belief ``Cat(α / Σα) · p(y_n | m_n)``; the
    observation is assigned by a point mass to the belief's argmax ``k̂`` and
    ``q(π) = Dir(α + e_k̂)`` becomes the prior of the next one. Observations of
    one mini-batch share the prior of the batch.

    With a vague prior the first assignments dominate the forward message and
    everything lands in one model (§6.1), so the stream runs under the
    informative ``start_alpha``; at the end Bayesian model reduction
    (:func:`dirichlet_model_reduction`) swaps it for the target ``alpha``:
    ``q(π) = Dir(α̃ − start_alpha + alpha)``.

    Parameters
    ----------
    candidates : dict name -> function
        As for :func:`average`; a function taking ``batch_shape`` gets the
        mini-batch plate (``()`` when ``batch_size`` is 1).
    likelihood : function(x) -> Variable
        Builds the observation model given the mixture output ``x`` and returns
        the observed variable, declared with ``observed=True``, e.g.
        ``lambda x: Normal("y", mean=x, var=5.0, observed=True)``.
    data : array, leading axis N
        Observations of that variable, ``data[n]`` of its event shape.
    alpha : positive number, K numbers or dict
        The target (vague) Dirichlet prior.
    start_alpha : positive number, K numbers or dict, optional
        The informative prior the stream runs under; default ``alpha`` rescaled to
        a concentration of 100 per candidate (preserving its proportions).
    batch_size : int
        Observations per engine run.
    progress : bool
        Show a tqdm progress bar (a line per 10% on stderr without tqdm).
    callback : function(processed, alpha), optional
        Called after every mini-batch with the number of observations processed
        and a copy of the current concentrations.

    Notes
    -----
    The model is compiled once per mini-batch size; each run re-binds the data
    and the prior probabilities (an ``fg.Data`` placeholder). A
    ``KeyboardInterrupt`` (Ctrl-C, or raised by ``callback``) stops the stream
    and returns what was computed, with ``interrupted=True``.
    """
    names = candidate_names(candidates)
    target = concentrations_per_candidate(alpha, names, "alpha")
    start = (
        target / target.mean() * DEFAULT_START_CONCENTRATION if start_alpha is None
        else concentrations_per_candidate(start_alpha, names, "start_alpha")
    )
    if not callable(likelihood):
        raise ModelError(f"likelihood must be a function of the mixture output, got {type(likelihood).__name__}")
    if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ModelError(f"batch_size must be a positive integer, got {batch_size!r}")
    shared = [key for key in names if not takes_batch_shape(candidates[key])]
    if batch_size > 1 and shared:
        raise ModelError(
            f"candidates {shared} take no batch_shape parameter, so one sub-model would serve a whole mini-batch; "
            "with batch_size > 1 write them as functions of batch_shape (one copy per observation)"
        )
    observations = np.asarray(data, dtype=float)
    if observations.ndim < 1 or observations.shape[0] == 0:
        raise DataError(f"data must have a leading axis of observations, got shape {observations.shape}")
    total = observations.shape[0]

    steps: dict = {}
    concentrations = start.copy()
    # (assignments, beliefs, evidences) per mini-batch, appended in one step; the final counts are
    # recomputed from them, so an interrupt between the append and the update of alpha loses nothing
    records = []
    interrupted = False
    bar = ProgressBar(total, "online combination", "obs", enabled=progress)
    try:
        for first in range(0, total, batch_size):
            chunk = observations[first:first + batch_size]
            plate = (len(chunk),) if batch_size > 1 else ()
            step = steps.get(plate)
            if step is None:
                step = steps[plate] = _Step(name, candidates, names, likelihood, plate)
            values = chunk if plate else chunk[0]
            if values.shape != step.observed.shape:
                raise DataError(
                    f"each observation of {step.observed.name!r} must have shape {step.observed.event_shape}, "
                    f"got {chunk.shape[1:]}"
                )
            captured = {}
            result = run(
                step.plan,
                data={step.prior: concentrations / concentrations.sum(), step.observed.name: values},
                iterations=1,
                free_energy=False,
                callback=lambda iteration, result: captured.update(evidence=log_evidence_per_candidate(result, step.node)),
            )
            if result.interrupted or "evidence" not in captured:
                raise KeyboardInterrupt
            belief = np.reshape(result.marginal(step.switch).probabilities, (-1, len(names)))
            chosen = np.argmax(belief, axis=-1)
            records.append((chosen, belief, np.reshape(captured["evidence"], (-1, len(names)))))
            concentrations = concentrations + np.bincount(chosen, minlength=len(names))
            bar.update(len(chunk))
            if callback is not None:
                callback(first + len(chunk), concentrations.copy())
    except KeyboardInterrupt:
        interrupted = True
    finally:
        bar.close()

    assignments = np.concatenate([r[0] for r in records]) if records else np.zeros(0, dtype=int)
    beliefs = np.concatenate([r[1] for r in records]) if records else np.zeros((0, len(names)))
    evidences = np.concatenate([r[2] for r in records]) if records else np.zeros((0, len(names)))
    processed = len(assignments)
    counts = np.bincount(assignments, minlength=len(names)).astype(float)
    informative = start + counts
    reduced, change = dirichlet_model_reduction(informative, start, target)
    assigned_evidence = float(np.sum(evidences[np.arange(processed), assignments]))
    log_evidence = assigned_evidence + float(log_multivariate_beta(target + counts) - log_multivariate_beta(target))
    return OnlineCombination(
        names=names,
        posterior=reduced,
        posterior_informative=DirichletDistribution(informative),
        prior=target,
        start_prior=start,
        assignments=assignments,
        probabilities=beliefs,
        log_evidences=evidences,
        log_evidence_change=float(change),
        log_evidence=log_evidence,
        processed=processed,
        interrupted=interrupted,
        counts=counts,
    )
