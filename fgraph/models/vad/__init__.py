"""Voice activity detection by message passing: a hidden Markov switch between AR(1) speech and silence
(:mod:`~fgraph.models.vad.model`), smoothed over a recording (``detect_voice``) and online (``StreamingVAD``);
the speech segments of a WAV file as it is (:mod:`~fgraph.models.vad.recording`: ``read_wav``, ``detect_speech``,
and ``fgraph vad FILE.wav``).
The experiment's baselines (the WebRTC VAD, an energy detector) are :mod:`fgraph_experiments.vad_baselines`.
"""
from fgraph.models.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "model": ["VADParameters", "VADResult", "SignalError", "fit_speech_prior", "learn_speech_prior",
              "estimate_observation_var", "signal_scale", "vad_model", "detect_voice", "StreamingVAD", "SPEECH",
              "SILENCE"],
    "recording": ["read_wav", "detect_speech", "SpeechDetection", "FrameTable", "Segment", "RecordingError",
                  "WORKING_RATE"],
})
