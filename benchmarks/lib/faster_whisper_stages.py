# The stages of one faster-whisper transcription, timed apart (for
# benchmarks/stages.ts): features, the encoder, and CTranslate2's generate()
# (the decoder with its sampling) at a beam size, on one clip in the full 30-s
# window, as faster-whisper runs them. Usage: python faster_whisper_stages.py
# MODEL_DIR THREADS WAV ROUNDS; prints one JSON line per round and beam size.
# With ROUNDS "stdin" it runs one untimed round, prints "ready", then one
# round per line read from stdin, each followed by "done": the caller
# interleaves these rounds with its own, on a model loaded and warm.
import json
import sys
import time
import wave

import ctranslate2
import numpy as np
from faster_whisper import WhisperModel

model_dir, threads, wav, rounds = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
model = WhisperModel(model_dir, device="cpu", compute_type="int8", cpu_threads=threads, num_workers=1)
with wave.open(wav) as w:
    audio = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float32) / 32768.0
tokenizer_prompt = [50258, 50259, 50359]  # <|startoftranscript|><|en|><|transcribe|>, timestamps on


def one_round(r, report=True):
    for beam in (1, 5):
        t0 = time.perf_counter()
        features = model.feature_extractor(audio)[:, : model.feature_extractor.nb_max_frames]
        if features.shape[-1] < model.feature_extractor.nb_max_frames:
            features = np.pad(features, ((0, 0), (0, model.feature_extractor.nb_max_frames - features.shape[-1])))
        t1 = time.perf_counter()
        encoded = model.model.encode(ctranslate2.StorageView.from_array(np.ascontiguousarray(features[None].astype(np.float32))), to_cpu=False)
        t2 = time.perf_counter()
        result = model.model.generate(encoded, [tokenizer_prompt], beam_size=beam, max_length=224, return_scores=True, suppress_blank=True, suppress_tokens=[-1])
        t3 = time.perf_counter()
        if report:
            print(json.dumps({"round": r, "beam": beam, "features_ms": (t1 - t0) * 1000, "encode_ms": (t2 - t1) * 1000,
                              "decode_ms": (t3 - t2) * 1000, "tokens": len(result[0].sequences_ids[0])}), flush=True)


if rounds == "stdin":
    one_round(-1, report=False)
    print("ready", flush=True)
    for r, _ in enumerate(sys.stdin):
        one_round(r)
        print("done", flush=True)
else:
    for r in range(int(rounds)):
        one_round(r)
