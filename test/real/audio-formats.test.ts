// Real Whisper base on the compressed formats: jfk.wav re-encoded as MP3
// (64 kbit/s), FLAC, Ogg Opus and Ogg Vorbis, mono 16 kHz and stereo
// 44.1 kHz, and recorded by Chromium's MediaRecorder as a web page records a
// microphone (WebM/Opus), gives the sentence through the server, as the WAV
// does, through the official openai client too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';
import { transcribe, wavBlob } from '../helpers/server';
import { AUDIO_DIR, encodedAudio } from '../../fixtures';
import { browserRecording } from '../../fixtures/browser-recording';
import { startRealServer } from '../helpers/real-models';
import { normalizeEnglish } from '../../scripts/lib/english-normalizer';

const JFK = path.join(AUDIO_DIR, 'jfk.wav');
const JFK_TEXT = 'And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.';

test('base-q8_0: MP3, FLAC, Ogg Opus, Ogg Vorbis of jfk.wav (mono 16 kHz and stereo 44.1 kHz) and a Chromium recording of it give the sentence', async () => {
  const server = await startRealServer('base-q8_0');
  try {
    const expectSentence = async (file: Buffer, what: string) => {
      // Sent as "audio.wav" with type audio/wav: the server goes by the bytes.
      const res = await transcribe(server, { file: wavBlob(file), language: 'en' }, server.auth);
      const body = await res.json();
      assert.equal(res.status, 200, `${what}: ${JSON.stringify(body)}`);
      assert.equal(normalizeEnglish(body.text), normalizeEnglish(JFK_TEXT), `${what}: ${body.text}`);
    };
    for (const format of ['mp3', 'flac', 'opus', 'ogg'] as const) {
      for (const shape of [{}, { rate: 44100, channels: 2 }]) await expectSentence(encodedAudio(JFK, format, shape), `${format} ${JSON.stringify(shape)}`);
    }
    const recording = await browserRecording(JFK);
    await expectSentence(recording, 'Chromium MediaRecorder, audio/webm;codecs=opus');
    // The official client, as an app would send a recording and a voice note: named and typed as what they are.
    const client = new OpenAI({ apiKey: server.apiKey, baseURL: `${server.url}/v1`, maxRetries: 0 });
    for (const [bytes, name, type] of [[recording, 'recording.webm', 'audio/webm'], [encodedAudio(JFK, 'opus'), 'note.ogg', 'audio/ogg']] as const) {
      const got = await client.audio.transcriptions.create({ file: await toFile(bytes, name, { type }), model: 'service-local-stt', language: 'en' });
      assert.equal(normalizeEnglish(got.text), normalizeEnglish(JFK_TEXT), `openai client, ${name}: ${got.text}`);
    }
  } finally {
    await server.close();
  }
});
