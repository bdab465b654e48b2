"""Voice activity detection by message passing: the hidden-Markov switching model of van Erp et al. (2023, §6.2.2).

Per audio sample t of x_t = y_t / c, the recording y divided by its root mean square c (so x has mean power
one; **Units** below):

* speech ``s_t ~ N(ρ s_{t−1}, σ²)``, a first-order auto-regressive chain (:func:`fgraph.nodes.GaussMarkovChain`);
* noise ``n_t ~ N(0, v_n)`` (v_n = 0.01), independent per sample (a plated :func:`fgraph.nodes.Normal`);
* the switch ``z_t`` ∈ {speech, silence}, a hidden Markov chain (:func:`fgraph.nodes.MarkovChain`) with the
  sticky transition ``[[1−ε, ε], [ε, 1−ε]]`` (ε = 10⁻⁵) and a uniform start;
* the observation ``y_t ~ N(s_t, v_y)`` if z_t is speech and ``N(n_t, v_y)`` otherwise (v_y = 0.5):
  :func:`fgraph.nodes.switching_normal.SwitchingNormal`.

Inference is variational message passing with the structured factorisation q(s_1:T) q(z_1:T) Π_t q(n_t):
each chain is one cluster whose messages are a whole forward–backward pass (Kalman/RTS for s,
forward–backward for z), so a sweep costs a few vectorised passes over the signal. The speech
probability of sample t is q(z_t = speech): smoothed over the whole signal by :func:`detect_voice`, and
online, chunk by chunk as the samples arrive, by :class:`StreamingVAD`.

**Online.** :class:`StreamingVAD` smooths each chunk (say 100 ms) given the chains' states at the end of
the previous one, so a sample's probability is known at most one chunk after it arrives (fixed-lag
smoothing with the chunk as lag). The fully causal alternative — chains that only predict
(``causal=True`` of the chain nodes), iterated to their VMP fixed point — is not offered: that fixed
point is degenerate for this model. Each sample's own speech state can explain it (q(s_t) centred on
y_t, so E[log N(y_t | s_t, v_y)] is large and q(z_t = speech) stays near one), and with no later
samples to contradict it, the iteration drifts to "speech everywhere": on a signal simulated from the
model at 10 dB, frame accuracy 0.95 after one sweep, 0.49 at the fixed point (173 sweeps).

**Units.** Every variance of :class:`VADParameters` (σ², v_n, v_y) is in units of the mean power of the signal
it is applied to: :func:`detect_voice` divides the signal by c = √(Σ_t y_t² / T) (:func:`signal_scale`) before
the model sees it, :class:`StreamingVAD` by the RMS of the samples received so far, and
:func:`estimate_observation_var` returns its noise floor in the same unit. The level of a recording therefore
carries no information: raw 16-bit PCM, floats in [−1, 1] (what :func:`fgraph.datasets.audio.load_wav`
returns) and the standardised signal give the same detection, and so does a signal at 10³⁰⁰ (c is measured
as m √(mean((y/m)²)), m = max |y|, so no square overflows). The model has zero mean and no offset is
removed; a signal with a DC offset should be centred first. An all-zero signal has no scale and needs none:
it is used as it is (c = 1).

ρ and σ² describe clean speech and are set from a clean, standardised recording rather than from the
noisy signal: by least squares (:func:`fit_speech_prior`, the AR(1) fit) or learned by VMP
(:func:`learn_speech_prior`: the speech chain with a Normal prior on ρ and a Gamma prior on 1/σ², its
posterior means), which agree on a recording of any length.
"""
from __future__ import annotations

import numbers
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

import numpy as np

import fgraph as fg
from fgraph.errors import DataError, ModelError, ModelTypeError
from fgraph.families import Categorical, NormalMeanVariance
from fgraph.families import Gamma as GammaDistribution
from fgraph.models.streaming import OnlineFilter

__all__ = ["VADParameters", "VADResult", "SignalError", "fit_speech_prior", "learn_speech_prior",
           "estimate_observation_var", "signal_scale", "vad_model",
           "detect_voice", "StreamingVAD", "SPEECH", "SILENCE"]

SPEECH, SILENCE = 0, 1  # the switch's states
# A signal whose samples differ by less than this fraction of its largest magnitude is constant: float64
# rounding of a DC level leaves ~1e-16, while 24-bit audio resolves 6e-8.
NO_VARIATION = 1e-12


class SignalError(ModelError, DataError):
    """A signal the voice-activity model cannot use: not real numbers, the wrong shape, too short, not finite,
    or (for the speech prior) without variation. Both a :class:`~fgraph.errors.ModelError` (as the VAD's
    input checks always were) and a :class:`~fgraph.errors.DataError`."""


@dataclass(frozen=True)
class VADParameters:
    """The model's numbers (module docstring): AR(1) gain ``rho`` and innovation variance ``speech_var`` of
    speech, ``noise_var`` v_n of the silence component, ``observation_var`` v_y, the switching probability
    ``switch`` ε per sample, and the start ``initial`` P(z_1 = speech). The variances are in units of the
    signal's mean power (module docstring, **Units**). Every field is a real number, stored as a float;
    :func:`detect_voice`, :func:`vad_model` and :class:`StreamingVAD` also take a mapping of these fields
    (``{"rho": 0.9, "speech_var": 0.2}``), the others at their defaults."""

    rho: float = 0.9
    speech_var: float = 0.2
    noise_var: float = 0.01
    observation_var: float = 0.5
    switch: float = 1e-5
    initial: float = 0.5

    def __post_init__(self):
        for item in fields(self):
            object.__setattr__(self, item.name, _real_field(item.name, getattr(self, item.name), item.default))
        for name in ("speech_var", "noise_var", "observation_var"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value > 0):
                raise ModelError(f"VADParameters: {name} must be a positive variance, got {value!r}")
        if not (np.isfinite(self.rho) and self.rho != 0.0):
            raise ModelError(f"VADParameters: rho must be a finite non-zero AR(1) gain, got {self.rho!r}")
        for name in ("switch", "initial"):
            value = getattr(self, name)
            if not (0.0 < value < 1.0):
                raise ModelError(f"VADParameters: {name} must be a probability strictly between 0 and 1, got {value!r}")

    def in_units_of(self, scale) -> VADParameters:
        """Parameters stated in a signal's own units (e.g. variances of 16-bit PCM) re-expressed in the unit the
        model sees, the signal divided by ``scale`` (its :func:`signal_scale`): every variance divided by
        scale²; ρ, ε and the start have no unit."""
        factor = 1.0 / _level(scale, "VADParameters.in_units_of") ** 2
        return VADParameters(self.rho, self.speech_var * factor, self.noise_var * factor,
                             self.observation_var * factor, self.switch, self.initial)

    @property
    def transition(self) -> np.ndarray:
        """The switch's column-stochastic transition matrix, A[i, j] = P(z_t = i | z_{t−1} = j)."""
        e = self.switch
        return np.array([[1.0 - e, e], [e, 1.0 - e]])


_MEANING = {"rho": "a finite non-zero AR(1) gain", "speech_var": "a positive variance",
            "noise_var": "a positive variance", "observation_var": "a positive variance",
            "switch": "a probability strictly between 0 and 1", "initial": "a probability strictly between 0 and 1"}


def _real_field(name: str, value, default: float) -> float:
    """``value`` as a float if it is one real number (a Python or numpy scalar, or a 0-d array), else a named error.

    Booleans and strings are refused rather than converted: ``True`` or ``"0.2"`` for a variance is a mistake
    in the caller, and numpy's own message for it ("ufunc 'isfinite' not supported ...") names no field."""
    number = (isinstance(value, numbers.Real)
              or (isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf"))
    if isinstance(value, (bool, np.bool_)) or not number:
        raise ModelTypeError(f"VADParameters: {name} must be a real number ({_MEANING[name]}), got {value!r} "
                             f"({type(value).__name__}); pass a number, e.g. VADParameters({name}={default!r})")
    return float(value)


def _as_parameters(parameters, what: str) -> VADParameters:
    """``parameters`` as :class:`VADParameters`: itself, or built from a mapping of its fields (with its checks)."""
    if isinstance(parameters, VADParameters):
        return parameters
    if isinstance(parameters, Mapping):
        names = [item.name for item in fields(VADParameters)]
        unknown = [key for key in parameters if key not in names]
        if unknown:
            raise ModelError(f"{what}: parameters: unknown field {unknown[0]!r}; VADParameters has the fields "
                             f"{', '.join(names)}")
        return VADParameters(**parameters)
    raise ModelTypeError(f"{what}: parameters must be VADParameters(...) or a mapping of its fields, got "
                         f"{type(parameters).__name__}; e.g. VADParameters(rho=0.9, speech_var=0.2) or "
                         "{'rho': 0.9, 'speech_var': 0.2}")


@dataclass
class VADResult:
    """``speech_probability`` (T,) q(z_t = speech); ``free_energy`` per sweep (nats) of the scaled signal
    y / ``scale`` the model saw (a bound on −log p(y / c); −log p(y) differs by T log c); ``iterations`` run;
    ``seconds`` of inference (model building included); ``result`` the engine's :class:`fgraph.Result`;
    ``scale`` c, the root mean square the signal was divided by (1 for an all-zero signal)."""

    speech_probability: np.ndarray
    free_energy: np.ndarray
    iterations: int
    seconds: float
    result: fg.Result | None = field(default=None, repr=False)
    scale: float = 1.0


def fit_speech_prior(clean) -> tuple[float, float]:
    """(ρ, σ²) of the AR(1) ``s_t = ρ s_{t−1} + e_t`` fitted by least squares to the standardised clean signal.

    ρ = Σ s_t s_{t−1} / Σ s_{t−1}², σ² the mean squared residual. At least 3 samples; a signal without
    variation (digital silence, a constant) or one the AR(1) fits exactly is a :class:`SignalError`.
    """
    what = "fit_speech_prior"
    s = _standardised(clean, what)
    previous, current = s[:-1], s[1:]
    rho = float(previous @ current / (previous @ previous))
    speech_var = float(np.mean((current - rho * previous) ** 2))
    if not speech_var > 0.0:
        raise SignalError(f"{what}: the AR(1) fits the signal exactly (no innovation left, {s.size} samples), "
                          "so it says nothing about the variance of speech; give a longer recording of clean speech")
    return rho, speech_var


def learn_speech_prior(clean, iterations: int = 50, tol: float = 1e-9, observation_var: float = 1e-6
                       ) -> tuple[float, float]:
    """(ρ, σ²) learned by VMP: posterior means E[ρ] and 1/E[w] of the speech chain ``s_t ~ N(ρ s_{t−1}, 1/w)``
    with ρ ~ N(0, 1) and w ~ Gamma(1, 1), observed through ``N(s_t, observation_var)`` (nearly exact) on the
    standardised clean signal; structured mean field q(s) q(ρ) q(w) (:func:`fgraph.nodes.GaussMarkovChain` with a
    random gain and precision), until the free energy changes by less than ``tol`` · T nats. At least 3
    samples with variation, as :func:`fit_speech_prior`.
    """
    from fgraph.nodes import Gamma, GaussMarkovChain, Normal

    s = _standardised(clean, "learn_speech_prior")
    T = s.size
    with fg.Model() as model:
        rho = Normal("rho", mean=0.0, var=1.0)
        w = Gamma("w", shape=1.0, rate=1.0)
        speech = GaussMarkovChain("s", rho, initial_mean=0.0, initial_var=1.0, length=T, precision=w)
        Normal("y", mean=speech, var=observation_var, observed=s)
    result = fg.infer(model, algorithm="vmp", iterations=iterations, tol=tol * T,
                      init={"s": NormalMeanVariance(s, np.full(T, observation_var)), "w": GammaDistribution(1.0, 1.0)})
    q_w = result.marginal("w")
    return float(result.marginal("rho").mean), float(1.0 / q_w.mean)


def estimate_observation_var(y, rate: int, frame_ms: float = 50.0, quietest: float = 0.1,
                             smallest: float = 1e-4, scale: float | None = None) -> float:
    """v_y from the signal's noise floor: the mean power of its quietest ``quietest`` fraction of frames, in
    units of the signal's mean power (the signal divided by :func:`signal_scale`, as :func:`detect_voice`
    divides it), so that it can be passed as ``observation_var`` whatever the level of the recording; in
    units of ``scale``² if given (the fixed level of a :class:`StreamingVAD` with ``scale=``).

    The noise that corrupts the speech also fills the pauses, so the power of the quietest frames
    measures it. (The model's silence is y_t ~ N(0, v_y + v_n), but v_n = 0.01 is the model's fixed
    scale of the silence component, not a measured one: subtracting it would leave v_y far below the
    noise at high SNR — at 20 dB the noise variance of a standardised signal is itself 0.01 — and the
    speech branch would then explain the noise as speech detail.) Taking the quietest tenth of the
    frames needs only that a tenth of the signal is silence. It errs low, because the quietest frames
    of pure noise are quieter than average: by about 1.4 √(2/L) for frames of L samples when a fifth
    of the noise frames is kept (7 % for 50 ms at 16 kHz); longer frames err less but need longer
    pauses. Never less than ``smallest``.
    """
    from fgraph.datasets.audio import frame_length

    y = _signal(y, "estimate_observation_var")
    y = y / ((signal_scale(y) or 1.0) if scale is None else _level(scale, "estimate_observation_var"))
    length = frame_length(rate, frame_ms)
    frames = y[: y.size // length * length].reshape(-1, length)
    if len(frames) == 0:
        raise ModelError(f"estimate_observation_var: the signal is shorter than one frame ({length} samples)")
    power = np.mean(frames * frames, axis=1)
    count = max(1, int(round(quietest * len(power))))
    return max(float(np.mean(np.sort(power)[:count])), smallest)


def _signal(y, what: str, minimum: int = 2) -> np.ndarray:
    """``y`` as float64 (T,), T ≥ ``minimum``, finite; integers (PCM) are taken at their face value."""
    array = np.asarray(y)
    if array.dtype.kind not in "iuf":
        raise SignalError(f"{what}: the signal must be an array of real numbers (integer PCM or floats), got "
                          f"dtype {array.dtype}; convert it with np.asarray(signal, dtype=float)")
    y = array.astype(float)
    if y.ndim != 1 or y.size < minimum:
        raise SignalError(f"{what}: give a one-dimensional signal of at least {minimum} samples, got shape {y.shape}")
    if not np.all(np.isfinite(y)):
        raise SignalError(f"{what}: the signal holds NaN or infinite samples; clean or drop them first")
    return y


def _power(y: np.ndarray) -> tuple[float, float]:
    """(m, Σ_t (y_t/m)²) with m = max |y_t|: the sum of squares in a unit where no square overflows or underflows
    (y² of 10³⁰⁰ is inf; (y/m)² ≤ 1). (0, 0) for an all-zero signal."""
    m = float(np.max(np.abs(y))) if y.size else 0.0
    if m == 0.0:
        return 0.0, 0.0
    x = y / m
    return m, float(x @ x)


def signal_scale(y) -> float:
    """The root mean square c = √(Σ_t y_t² / T) of the signal ``y`` (T,): the unit of :class:`VADParameters`.

    Computed as m √(Σ_t (y_t/m)² / T), m = max |y_t|, which is finite for any finite signal. 0 for an all-zero
    signal."""
    y = _signal(y, "signal_scale", minimum=1)
    m, sum_of_squares = _power(y)
    return m * float(np.sqrt(sum_of_squares / y.size))


def _level(scale, what: str) -> float:
    """A level given by the caller: a positive finite number, as a float."""
    if (isinstance(scale, (bool, np.bool_)) or not isinstance(scale, numbers.Real)
            or not (np.isfinite(scale) and scale > 0)):
        raise ModelError(f"{what}: scale must be a positive finite number (the signal's root mean square, "
                         f"signal_scale(y)), got {scale!r}")
    return float(scale)


def _standardised(clean, what: str) -> np.ndarray:
    """The clean signal of a speech-prior fit with zero mean and unit variance, or a :class:`SignalError` saying why
    it has none."""
    s = _signal(clean, what, minimum=3)
    m = float(np.max(np.abs(s)))
    s = s / m if m > 0.0 else s  # in units of the largest sample first, so 1e300 neither sums nor squares to inf
    s = s - s.mean()
    spread = float(np.sqrt(np.mean(s * s)))
    if not spread > NO_VARIATION:
        level = float(np.asarray(clean, dtype=float).ravel()[0])
        raise SignalError(f"{what}: the signal has no variation (its {s.size} samples all equal {level:g}"
                          f"{'' if spread == 0.0 else f' to within {NO_VARIATION:g} of their magnitude'}), so it has "
                          "no AR(1) to fit; give a recording of clean speech, not digital silence or a constant")
    return s / spread


def vad_model(y, parameters: VADParameters = VADParameters(), start: dict | None = None) -> fg.Model:
    """The graph of the module docstring over the observed samples ``y`` (T,), taken as they are: in the model's
    unit (:func:`detect_voice` passes the signal divided by :func:`signal_scale`). ``parameters``:
    :class:`VADParameters` or a mapping of its fields.

    ``start``: the chains' carried states
    (``{"s": {...}, "z": {...}}``, from :class:`StreamingVAD`), else s_1 ~ N(0, σ²/(1−ρ²)) (the AR(1)'s
    stationary variance when |ρ| < 1, else σ²) and P(z_1) = (initial, 1 − initial).
    """
    from fgraph.nodes import GaussMarkovChain, MarkovChain, Normal
    from fgraph.nodes.switching_normal import SwitchingNormal

    y = _signal(y, "vad_model", minimum=1)
    p, start = _as_parameters(parameters, "vad_model"), start or {}
    T = y.size
    stationary = p.speech_var / (1.0 - p.rho**2) if abs(p.rho) < 1.0 else p.speech_var
    with fg.Model() as model:
        s = GaussMarkovChain("s", p.rho, p.speech_var, length=T,
                             **start.get("s", {"initial_mean": 0.0, "initial_var": stationary}))
        n = Normal("n", mean=0.0, var=p.noise_var, batch_shape=(T,))
        z = MarkovChain("z", transition=p.transition, length=T,
                        **start.get("z", {"initial": [p.initial, 1.0 - p.initial]}))
        SwitchingNormal("y", z, [s, n], var=p.observation_var, observed=y)
    return model


def initial_beliefs(T: int, parameters: VADParameters) -> dict:
    """Where VMP starts: the switch undecided, speech and noise at their prior scale."""
    return {"z": Categorical(np.full((T, 2), 0.5)),
            "s": NormalMeanVariance(np.zeros(T), np.full(T, parameters.speech_var)),
            "n": NormalMeanVariance(np.zeros(T), np.full(T, parameters.noise_var))}


def detect_voice(y, parameters: VADParameters = VADParameters(), iterations: int = 200, tol: float | None = 1e-6,
                 progress: bool = False) -> VADResult:
    """Smoothed speech probability per sample of ``y`` (T,), by VMP sweeps until the free energy changes by
    less than ``tol`` · T nats (at most ``iterations``).

    ``y`` at any level (integer PCM, floats in [−1, 1], standardised, ...): the model sees y / c, c the root
    mean square (:func:`signal_scale`), so a recording gives the same detection at every level and
    ``parameters`` (:class:`VADParameters` or a mapping of its fields) are in units of its mean power."""
    y = _signal(y, "detect_voice")
    parameters = _as_parameters(parameters, "detect_voice")
    started = time.perf_counter()
    scale = signal_scale(y) or 1.0  # an all-zero signal is the same at every scale
    model = vad_model(y / scale, parameters)
    result = fg.infer(model, algorithm="vmp", iterations=iterations, tol=None if tol is None else tol * y.size,
                      init=initial_beliefs(y.size, parameters), progress=progress)
    seconds = time.perf_counter() - started
    free_energy = np.asarray(result.free_energy, dtype=float)
    return VADResult(result.marginal("z").probabilities[:, SPEECH], free_energy, len(free_energy), seconds, result,
                     scale)


class StreamingVAD:
    """Online voice activity detection: :meth:`update` with each chunk of samples as it arrives.

    Each chunk's model (:func:`vad_model`) starts from the chains' states at the end of the previous chunk
    (:class:`fgraph.models.streaming.OnlineFilter`) and is smoothed by VMP (``iterations``, ``tol`` per
    sample as in :func:`detect_voice`); a sample's probability therefore uses the samples up to the end of
    its chunk. ``speech_probability`` holds every chunk's so far; ``free_energy`` the last free energy of
    each chunk (of the chunk in the unit it was scaled to).

    **Level.** As :func:`detect_voice` divides the whole signal by its root mean square, the stream divides
    chunk k by c_k, the root mean square of every sample received up to the end of chunk k (``scale``); one
    chunk is therefore the offline detection, and a recording streams alike at every level. When c changes,
    the speech state carried out of the previous chunk, N(m, v) in units of c_{k−1}, is re-expressed in the
    new unit, N(m c_{k−1}/c_k, v (c_{k−1}/c_k)²); the switch's state has no unit. Until a sample differs from
    zero the stream has no scale (``scale`` 0) and uses the samples as they are, all zero.

    A level-free stream has no reference before it has heard speech: a stream that opens with background
    noise measures its unit on that noise, and quiet but coloured background (room noise, hum) then reads
    as speech until speech raises the unit. ``scale``, if given, fixes the unit instead: the signal's
    root mean square known in advance (e.g. :func:`signal_scale` of a recording made at the same gain);
    every chunk is divided by it, and the detection then depends on the level through it, as stated.

    ``parameters`` (:class:`VADParameters`, or a mapping of its fields) may be replaced between chunks.
    """

    def __init__(self, parameters: VADParameters = VADParameters(), iterations: int = 200, tol: float | None = 1e-6,
                 scale: float | None = None):
        self.parameters = parameters
        self._fixed = None if scale is None else _level(scale, "StreamingVAD")
        self._tol = tol
        self._chunks: list = []
        self.free_energy: list = []
        # the power of the samples so far, (m, Σ (y/m)², count) as _power measures it, and the unit of the
        # carried speech state (None: no scale yet)
        self._peak, self._sum_of_squares, self._count = 0.0, 0.0, 0
        self._unit: float | None = None
        self._filter = OnlineFilter(lambda chunk, start: vad_model(chunk, self.parameters, start=start),
                                    algorithm="vmp", iterations=iterations, free_energy=True)

    @property
    def parameters(self) -> VADParameters:
        return self._parameters

    @parameters.setter
    def parameters(self, value) -> None:
        self._parameters = _as_parameters(value, "StreamingVAD")

    @property
    def scale(self) -> float:
        """The unit of the stream: the ``scale`` given, else the root mean square of every sample received so far
        (0 before any sample differs from zero)."""
        if self._fixed is not None:
            return self._fixed
        return self._peak * float(np.sqrt(self._sum_of_squares / self._count)) if self._count else 0.0

    def update(self, chunk) -> np.ndarray:
        """Speech probabilities (len(chunk),) of the new samples."""
        chunk = _signal(chunk, "StreamingVAD.update", minimum=1)
        # the power of everything received, in the unit of the largest sample so far (_power)
        peak, sum_of_squares = _power(chunk)
        largest = max(self._peak, peak)
        total = (self._sum_of_squares * (self._peak / largest) ** 2 + sum_of_squares * (peak / largest) ** 2
                 if largest > 0.0 else 0.0)
        count = self._count + chunk.size
        scale = self._fixed or largest * float(np.sqrt(total / count)) or None
        carried = self._filter.state
        if "s" in carried and scale is not None and self._unit is not None and scale != self._unit:
            ratio = self._unit / scale
            speech = carried["s"]
            self._filter.state = {**carried, "s": {**speech, "initial_mean": speech["initial_mean"] * ratio,
                                                   "initial_var": speech["initial_var"] * ratio**2}}
        self._filter.infer_options.update(init=initial_beliefs(chunk.size, self.parameters),
                                          tol=None if self._tol is None else self._tol * chunk.size)
        try:
            result = self._filter.update(chunk / (scale or 1.0))
        except Exception:
            self._filter.state = carried  # a chunk that failed leaves the stream as it was
            raise
        self._peak, self._sum_of_squares, self._count, self._unit = largest, total, count, scale
        probability = result.marginal("z").probabilities[:, SPEECH]
        self._chunks.append(probability)
        self.free_energy.append(float(result.free_energy[-1]))
        return probability

    @property
    def speech_probability(self) -> np.ndarray:
        return np.concatenate(self._chunks) if self._chunks else np.zeros(0)
