// Real Whisper base on the compressed formats: jfk.wav re-encoded as MP3
// (64 kbit/s) and FLAC, and at 44.1 kHz stereo, gives the sentence through
// the server, as the WAV does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { transcribe, wavBlob } from '../helpers/server';
import { AUDIO_DIR, encodedAudio } from '../../fixtures';
import { startRealServer } from '../helpers/real-models';
import { normalizeEnglish } from '../../scripts/lib/english-normalizer';

const JFK = path.join(AUDIO_DIR, 'jfk.wav');
const JFK_TEXT = 'And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.';

test('base-q8_0: MP3 and FLAC of jfk.wav, mono 16 kHz and stereo 44.1 kHz, give the sentence', async () => {
  const server = await startRealServer('base-q8_0');
  try {
    for (const format of ['mp3', 'flac'] as const) {
      for (const shape of [{}, { rate: 44100, channels: 2 }]) {
        const res = await transcribe(server, { file: wavBlob(encodedAudio(JFK, format, shape)), language: 'en' }, server.auth);
        const body = await res.json();
        assert.equal(res.status, 200, JSON.stringify(body));
        assert.equal(normalizeEnglish(body.text), normalizeEnglish(JFK_TEXT), `${format} ${JSON.stringify(shape)}: ${body.text}`);
      }
    }
  } finally {
    await server.close();
  }
});
