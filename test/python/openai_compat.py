"""The official Python openai client against stt-gateway: the same few calls
test/real/openai-compat.test.ts makes with the npm client. Prints one JSON
object with what each call returned; the test compares it with its own."""
import json
import sys

import openai

base_url, api_key, speech, german = sys.argv[1:5]
client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0)
out = {}

with open(speech, "rb") as f:
    out["json"] = client.audio.transcriptions.create(file=f, model="whisper-1").text
with open(speech, "rb") as f:
    verbose = client.audio.transcriptions.create(
        file=f, model="whisper-1", response_format="verbose_json", timestamp_granularities=["word", "segment"]
    )
    out["verbose"] = {"text": verbose.text, "words": len(verbose.words), "segments": len(verbose.segments)}
with open(speech, "rb") as f:
    out["text"] = client.audio.transcriptions.create(file=f, model="whisper-1", response_format="text")
with open(speech, "rb") as f:
    deltas, done = [], None
    for event in client.audio.transcriptions.create(file=f, model="whisper-1", stream=True):
        if event.type == "transcript.text.delta":
            deltas.append(event.delta)
        elif event.type == "transcript.text.done":
            done = event.text
    out["stream"] = {"deltas": deltas, "done": done}
with open(german, "rb") as f:
    out["translation"] = client.audio.translations.create(file=f, model="whisper-1").text
try:
    with open(speech, "rb") as f:
        client.audio.transcriptions.create(file=f, model="no-such-model")
    out["bad_model"] = None
except openai.BadRequestError as e:
    out["bad_model"] = {"status": e.status_code, "code": e.code}
try:
    with open(speech, "rb") as f:
        openai.OpenAI(base_url=base_url, api_key="sk-stt-wrong", max_retries=0).audio.transcriptions.create(file=f, model="whisper-1")
    out["bad_key"] = None
except openai.AuthenticationError as e:
    out["bad_key"] = {"status": e.status_code, "code": e.code}
print(json.dumps(out))
