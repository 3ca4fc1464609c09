"""LiteLLM (its Python SDK, the code its proxy calls) with stt-gateway as an
OpenAI-compatible upstream, as issue 36 met it: stream=true forwarded with the
verbose_json LiteLLM adds for whisper models. Prints one JSON object."""
import json
import sys

import litellm

base_url, api_key, speech = sys.argv[1:4]
out = {}
with open(speech, "rb") as f:
    r = litellm.transcription(model="openai/whisper-1", file=f, api_base=base_url, api_key=api_key, stream=True)
    out["streamed_request"] = {"text": r.text}
with open(speech, "rb") as f:
    r = litellm.transcription(model="openai/whisper-1", file=f, api_base=base_url, api_key=api_key)
    out["plain_request"] = {"text": r.text}
print(json.dumps(out))
