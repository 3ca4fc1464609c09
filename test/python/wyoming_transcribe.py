"""Transcribes a WAV file through a Wyoming server with the wyoming package, as Home Assistant does.

Usage: wyoming_transcribe.py HOST PORT WAV_FILE LANGUAGE
Asks `describe` first, then sends `transcribe`, `audio-start`, the file's
16-bit PCM in 1024-frame `audio-chunk`s and `audio-stop`, and waits for the
`transcript`. Prints one JSON line: the program and model `info` named,
how many languages the model lists, whether it streams transcripts, and
the transcript (or the error event).
"""
import asyncio
import json
import sys
import wave

from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.info import Describe, Info


async def main(host: str, port: int, wav_path: str, language: str) -> None:
    out = {}
    async with AsyncTcpClient(host, port) as client:
        await client.write_event(Describe().event())
        while True:
            event = await client.read_event()
            if Info.is_type(event.type):
                info = Info.from_event(event)
                program = info.asr[0]
                out["program"] = program.name
                out["models"] = [m.name for m in program.models]
                out["languages"] = len(program.models[0].languages)
                out["streaming"] = program.supports_transcript_streaming
                break
        with wave.open(wav_path, "rb") as wav:
            rate, width, channels = wav.getframerate(), wav.getsampwidth(), wav.getnchannels()
            await client.write_event(Transcribe(language=language or None).event())
            await client.write_event(AudioStart(rate=rate, width=width, channels=channels).event())
            while True:
                frames = wav.readframes(1024)
                if not frames:
                    break
                await client.write_event(AudioChunk(rate=rate, width=width, channels=channels, audio=frames).event())
            await client.write_event(AudioStop().event())
        while True:
            event = await client.read_event()
            if event is None:
                out["error"] = "connection closed"
                break
            if Transcript.is_type(event.type):
                transcript = Transcript.from_event(event)
                out["text"] = transcript.text
                out["language"] = transcript.language
                break
            if Error.is_type(event.type):
                out["error"] = Error.from_event(event).to_dict()
                break
    print(json.dumps(out))


asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]))
