# The faster-whisper side of benchmarks/faster-whisper.ts, run in the venv that
# script makes (Python is a tool of that benchmark only, never of the server).
# Usage: python faster_whisper_runner.py MODEL_DIR THREADS COMPUTE_TYPE...
# Loads one WhisperModel per compute type, prints one JSON line of versions,
# then for each JSON line {"wav", "compute_type", "beam_size"} on stdin prints
# {"text", "ms", "cpu_ms", "language", "windows", "decodes", "detections"} (cpu_ms: the CPU time of all its threads meanwhile). Optional in a job: "language" (default "en";
# null detects it, as faster-whisper does without one) and "fallback" (true:
# faster-whisper's default temperature ladder 0.0-1.0 by 0.2; default false). ms covers transcribe() and consuming its segments (the
# generator is lazy: the decoding happens there), not loading the WAV.
# Decoding as the addon's: English, temperature 0 without fallback, no VAD,
# timestamps on, each 30-s window conditioned on the text of the ones before
# (whisper.cpp's no_context clears only what a previous request left).
import json
import sys
import time
import wave
from importlib.metadata import version

import numpy as np
from faster_whisper import WhisperModel

model_dir, threads, *compute_types = sys.argv[1:]
models = {
    c: WhisperModel(model_dir, device="cpu", compute_type=c, cpu_threads=int(threads), num_workers=1)
    for c in compute_types
}

# Passes per job, so a report can say where faster-whisper's time went: windows
# (encoder runs for the windows it decodes: a clip under 30 s takes a second
# one where the text of the first stops short of the end of the audio, and
# the next window starts at its last timestamp), decodes (generate() calls: one per
# window, plus one per temperature its fallback tries) and detections (without
# a language, one more encoder run on the first 30 s to detect it).
passes = {"windows": 0, "decodes": 0, "detections": 0}
detecting = [False]


class CountingDecoder:
    """CTranslate2's Whisper with its generate() calls counted; everything else passed through."""

    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def generate(self, *args, **kwargs):
        passes["decodes"] += 1
        return self._inner.generate(*args, **kwargs)


def counting_encode(encode):
    def run(features):
        if not detecting[0]:
            passes["windows"] += 1
        return encode(features)

    return run


def counting_detection(detect_language):
    def run(*args, **kwargs):
        passes["detections"] += 1
        detecting[0] = True
        try:
            return detect_language(*args, **kwargs)
        finally:
            detecting[0] = False

    return run


for m in models.values():
    m.model = CountingDecoder(m.model)
    m.encode = counting_encode(m.encode)
    m.detect_language = counting_detection(m.detect_language)
print(json.dumps({"faster-whisper": version("faster-whisper"), "ctranslate2": version("ctranslate2")}), flush=True)

for line in sys.stdin:
    job = json.loads(line)
    with wave.open(job["wav"]) as w:  # 16-bit mono 16 kHz, as the benchmark writes them
        audio = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float32) / 32768.0
    passes.update(windows=0, decodes=0, detections=0)
    t0 = time.perf_counter()
    c0 = time.process_time()  # this process's CPU time, all its threads
    segments, info = models[job["compute_type"]].transcribe(
        audio,
        language=job.get("language", "en"),
        beam_size=job["beam_size"],
        temperature=[0.0, 0.2, 0.4, 0.6, 0.8, 1.0] if job.get("fallback") else 0.0,
        condition_on_previous_text=True,
        vad_filter=False,
        without_timestamps=False,
        word_timestamps=False,
    )
    text = "".join(s.text for s in segments)
    ms = (time.perf_counter() - t0) * 1000
    cpu_ms = (time.process_time() - c0) * 1000
    print(json.dumps({"text": text, "ms": ms, "cpu_ms": cpu_ms, "language": info.language, **passes}), flush=True)
