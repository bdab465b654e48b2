"""Make ``data/speech_espeak_harvard1.wav``: six Harvard sentences spoken by espeak-ng, with pauses.

Run from the repository root (espeak-ng on the PATH; Debian/Ubuntu: ``apt-get install espeak-ng``)::

    python -m fgraph.datasets.make_espeak_speech            # writes fgraph/datasets/data/speech_espeak_harvard1.wav
    python -m fgraph.datasets.make_espeak_speech out.wav    # or elsewhere

Each sentence is synthesised on its own by ``espeak-ng -v en-us -s 150 -w <tmp>.wav "<sentence>"``
(22050 Hz, mono, 16-bit PCM), read and resampled to 16 kHz by :func:`fgraph.datasets.audio.load_wav`
(:func:`~fgraph.datasets.audio.resample_signal`: up 320, down 441), cut to its first and last
sample of magnitude ≥ 2^−15 (espeak pads each utterance with silence of its own length), and
the sentences are joined with digital silence: :data:`LEAD_MS` before the first, the
:data:`PAUSES_MS` between them (different lengths, so a detector cannot learn one pause length),
:data:`TAIL_MS` after the last. The result is written as 16-bit PCM by
:func:`~fgraph.datasets.audio.write_wav`. espeak-ng's output is deterministic for a given version:
the bundled file was made with eSpeak NG 1.51 (Debian package 1.51+dfsg-10+deb12u2) and scipy
1.17.1; its SHA-256 is in ``data/README.md``.

The sentences are the first six of list 1 of the Harvard sentences (IEEE Recommended Practice for
Speech Quality Measurements, IEEE Transactions on Audio and Electroacoustics 17(3), 1969, appendix), phonetically
balanced and the usual test material for speech processing.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from fgraph.datasets.audio import DATA_DIR, SPEECH_FILES, load_wav, write_wav

SENTENCES = (
    "The birch canoe slid on the smooth planks.",
    "Glue the sheet to the dark blue background.",
    "It's easy to tell the depth of a well.",
    "These days a chicken leg is a rare dish.",
    "Rice is often served in round bowls.",
    "The juice of lemons makes fine punch.",
)
VOICE, WORDS_PER_MINUTE = "en-us", 150
RATE = 16000
LEAD_MS, TAIL_MS = 500, 500
PAUSES_MS = (800, 500, 1200, 600, 1000)  # after sentences 1 … 5
EXPECTED_VERSION = "1.51"


def espeak_version() -> str:
    """The first line of ``espeak-ng --version`` (e.g. "eSpeak NG text-to-speech: 1.51  Data at: …")."""
    return subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True, check=True).stdout.strip()


def synthesise(sentence: str, workdir: Path) -> np.ndarray:
    """One sentence at :data:`RATE`, float64 (T,), cut to its first and last audible sample."""
    wav = workdir / "sentence.wav"
    subprocess.run(["espeak-ng", "-v", VOICE, "-s", str(WORDS_PER_MINUTE), "-w", str(wav), sentence], check=True)
    x, _ = load_wav(wav, RATE)
    audible = np.flatnonzero(np.abs(x) >= 2.0 ** -15)
    return x[audible[0]:audible[-1] + 1]


def make(path: Path) -> Path:
    if shutil.which("espeak-ng") is None:
        sys.exit("espeak-ng is not on the PATH; install it (Debian/Ubuntu: apt-get install espeak-ng)")
    version = espeak_version()
    if f": {EXPECTED_VERSION} " not in version:
        print(f"warning: the bundled file was made with eSpeak NG {EXPECTED_VERSION}, this is {version!r}; "
              "the samples (and the SHA-256) will differ", file=sys.stderr)

    def silence(ms):
        return np.zeros(RATE * ms // 1000)

    with tempfile.TemporaryDirectory() as workdir:
        pieces = [silence(LEAD_MS)]
        for k, sentence in enumerate(SENTENCES):
            pieces.append(synthesise(sentence, Path(workdir)))
            pieces.append(silence(PAUSES_MS[k] if k < len(PAUSES_MS) else TAIL_MS))
    signal = np.concatenate(pieces)
    write_wav(path, signal, RATE)
    print(f"{path}: {signal.size} samples, {signal.size / RATE:.3f} s at {RATE} Hz ({version})")
    return path


if __name__ == "__main__":
    make(Path(sys.argv[1]) if len(sys.argv) > 1 else DATA_DIR / SPEECH_FILES["espeak"])
