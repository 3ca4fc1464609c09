"""A realtime transcription session through the official Python openai client.

Usage: openai_realtime.py WS_BASE_URL API_KEY AUDIO_FILE PACE
AUDIO_FILE is raw 24-kHz PCM16 mono, or a 16-bit WAV (made mono, taken to 24 kHz).
PACE is "realtime" (100 ms of audio every 100 ms) or "fast" (all at once),
the client committing the turn; or "server_vad": all at once and 1.5 s of
silence after it, the server cutting the turns where the speech stops; or
"server_vad_live": the same in real time, turns ending after 1.2 s of
silence (drafts give deltas while a turn is heard). Prints one JSON line: the event types in order, the transcript
(the turns' joined by spaces), the usage (summed), and per turn its deltas
joined, its transcript, and whether a delta came before its speech_stopped.
"""
import array
import base64
import json
import sys
import time
import wave

from openai import OpenAI

def read_audio(path):
    """Raw 24-kHz PCM16 mono as it is; a 16-bit WAV made mono and taken to 24 kHz (linear interpolation)."""
    if not path.endswith(".wav"):
        return open(path, "rb").read()
    with wave.open(path, "rb") as w:
        rate, channels, width = w.getframerate(), w.getnchannels(), w.getsampwidth()
        assert width == 2, "a 16-bit WAV"
        frames = array.array("h", w.readframes(w.getnframes()))
    mono = [sum(frames[i:i + channels]) / channels for i in range(0, len(frames), channels)]
    out = array.array("h")
    for n in range(len(mono) * 24000 // rate):
        x = n * rate / 24000
        j = int(x)
        b = mono[min(j + 1, len(mono) - 1)]
        out.append(int(round(mono[j] + (b - mono[j]) * (x - j))))
    return out.tobytes()


base, key, pcm_path, pace = sys.argv[1:5]
client = OpenAI(api_key=key, base_url=base.replace("ws", "http", 1), websocket_base_url=base)
pcm = read_audio(pcm_path)
chunk = 4800 * 2  # 100 ms of 24-kHz 16-bit mono

types = []
with client.realtime.connect(extra_query={"intent": "transcription"}) as conn:
    conn.session.update(session={
        "type": "transcription",
        "audio": {"input": {
            "format": {"type": "audio/pcm", "rate": 24000},
            "transcription": {"model": "service-local-stt", "language": "en"},
            # Live: a longer silence_duration_ms keeps JFK's short pauses inside one turn, long enough to be drafted.
            "turn_detection": ({"type": "server_vad", "silence_duration_ms": 1200} if pace == "server_vad_live"
                               else {"type": "server_vad"} if pace == "server_vad" else None),
        }},
    })
    if pace.startswith("server_vad"):
        pcm += bytes(24000 * 2 * 3 // 2)
    for i in range(0, len(pcm), chunk):
        conn.input_audio_buffer.append(audio=base64.b64encode(pcm[i:i + chunk]).decode())
        if pace in ("realtime", "server_vad_live"):
            time.sleep(0.1)
    if pace.startswith("server_vad"):
        # Answered after every append before it: by then each turn is committed.
        conn.input_audio_buffer.clear()
    else:
        conn.input_audio_buffer.commit()
    committed, texts, seconds, cleared = 0, [], 0.0, not pace.startswith("server_vad")
    turns = {}  # item id: deltas joined, transcript, whether a delta came while it was heard
    for event in conn:
        types.append(event.type)
        item = getattr(event, "item_id", None)
        if item is not None:
            turn = turns.setdefault(item, {"deltas": "", "transcript": None, "delta_while_heard": False, "stopped": False})
            if event.type == "input_audio_buffer.speech_stopped":
                turn["stopped"] = True
            if event.type == "conversation.item.input_audio_transcription.delta":
                turn["delta_while_heard"] = turn["delta_while_heard"] or not turn["stopped"]
                turn["deltas"] += event.delta
        if event.type == "input_audio_buffer.committed":
            committed += 1
        if event.type == "input_audio_buffer.cleared":
            cleared = True
        if event.type == "conversation.item.input_audio_transcription.completed":
            texts.append(event.transcript)
            turns[item]["transcript"] = event.transcript
            seconds += event.usage.seconds
        if event.type in ("error", "conversation.item.input_audio_transcription.failed"):
            print(json.dumps({"types": types, "error": event.to_dict()}))
            sys.exit(1)
        if cleared and committed > 0 and len(texts) == committed:
            per_turn = [{k: t[k] for k in ("deltas", "transcript", "delta_while_heard")} for t in turns.values() if t["transcript"] is not None]
            print(json.dumps({"types": types, "transcript": " ".join(texts), "turns": committed, "seconds": seconds, "per_turn": per_turn}))
            break
