// Silero VAD with real base weights, on real speech with long gaps of quiet
// noise between the utterances (fixtures/clips.ts, gappedClip): parity with
// whisper-cli --vad, no words in the silences, times in the audio as sent,
// OpenAI's chunking_strategy and the host's STT_VAD.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeWav, loadModel } from '../../src/native';
import { whisperCli, gappedClip, VAD_FIXTURE, realModelPath, AUDIO_DIR } from '../../fixtures';
import { wer } from '../../scripts/lib/english-normalizer';
import { startRealServer } from '../helpers/real-models';
import { transcribe, wavBlob, type TestServer } from '../helpers/server';

// Five utterances of 2-3 s, with 5 to 60 s of noise at about -56 dBFS around them.
const clip = gappedClip([6, 60, 5, 25, 12]);
const JFK = path.join(AUDIO_DIR, 'jfk.wav');
const SLACK = 0.3; // s: Silero's frames are 32 ms, whisper.cpp pads speech by 30 ms, word times are Whisper's

interface Verbose {
  text: string;
  duration: number;
  segments: { start: number; end: number; text: string }[];
  words: { word: string; start: number; end: number }[];
}

async function verbose(s: TestServer, fields: Record<string, string> = {}): Promise<Verbose> {
  const res = await transcribe(s, {
    file: wavBlob(clip.wav), response_format: 'verbose_json', language: 'en', 'timestamp_granularities[]': ['segment', 'word'], ...fields,
  }, s.auth);
  assert.equal(res.status, 200, await res.clone().text());
  return res.json();
}

const inSpeech = (t: number) => clip.speech.some((u) => t >= u.start - SLACK && t <= u.end + SLACK);

let withVad: TestServer;
let without: TestServer;
before(async () => {
  withVad = await startRealServer('base-q8_0', { vad: true, env: { STT_VAD: 'true' } });
  without = await startRealServer('base-q8_0');
});
after(async () => {
  await withVad.close();
  await without.close();
});

test('VAD: the same tokens and text as whisper-cli --vad with the same Silero model', { timeout: 600_000 }, async () => {
  // Short: whisper-cli runs Silero on whisper.cpp's default of 4 threads, one
  // graph per 32-ms frame, and on 2 cores each graph waits for descheduled
  // threads at ggml's barrier (20 s of audio took 143 s here; the addon uses 1).
  const clip = gappedClip([1.5, 4, 1.5], 0.003, 10);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'stt-vad-'));
  const model = await loadModel(realModelPath('base-q8_0'));
  try {
    const wav = path.join(dir, 'gapped.wav');
    writeFileSync(wav, clip.wav);
    const cli = await whisperCli(realModelPath('base-q8_0'), wav, 2, ['--vad', '-vm', VAD_FIXTURE]);
    const ours = await model.transcribe(clip.pcm, { threads: 2, language: 'en', temperatureFallback: false, vad: { modelPath: VAD_FIXTURE } });
    assert.ok(cli.tokens.length > 20, `whisper-cli heard the speech: ${cli.text}`);
    assert.deepEqual(ours.segments.flatMap((s) => s.tokens), cli.tokens);
    assert.equal(ours.text, cli.text);
  } finally {
    await model.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('STT_VAD=true: every word and segment lies in the speech, times in the audio as sent', { timeout: 300_000 }, async () => {
  const out = await verbose(withVad);
  assert.equal(out.duration, Math.round(clip.seconds * 100) / 100);
  assert.ok(out.words.length >= 20, `the utterances were heard: ${out.text}`);
  for (const w of out.words) {
    assert.ok(inSpeech(w.start) && inSpeech(w.end), `"${w.word}" at ${w.start}-${w.end} s lies in the speech ${JSON.stringify(clip.speech)}`);
  }
  for (const s of out.segments) {
    assert.ok(inSpeech(s.start) && inSpeech(s.end), `segment "${s.text}" at ${s.start}-${s.end} s lies in the speech`);
  }
  const starts = out.words.map((w) => w.start);
  assert.deepEqual(starts, [...starts].sort((a, b) => a - b), 'words in order');
  // Each utterance is heard where it is said: its own words start inside it.
  for (const u of clip.speech) assert.ok(out.words.some((w) => w.start >= u.start - SLACK && w.start <= u.end), `words in ${u.start}-${u.end} s`);
  const rate = wer([{ reference: clip.reference, hypothesis: out.text }]);
  assert.ok(rate <= 0.15, `WER ${rate.toFixed(3)} (measured 0.065 on a like clip)`);
});

test('chunking_strategy reaches Silero: a threshold no frame reaches hears nothing; "auto" equals the default', { timeout: 300_000 }, async () => {
  // Silero's speech probability stays below 1: nothing is speech, nothing is transcribed.
  const none = await verbose(withVad, { 'chunking_strategy[type]': 'server_vad', 'chunking_strategy[threshold]': '1' });
  assert.equal(none.text, '');
  assert.deepEqual(none.segments, []);
  const byDefault = await verbose(withVad);
  assert.deepEqual(await verbose(withVad, { chunking_strategy: 'auto' }), byDefault);
  const json = await verbose(withVad, { chunking_strategy: '{"type":"server_vad","threshold":0.5,"prefix_padding_ms":30,"silence_duration_ms":100}' });
  assert.deepEqual(json, byDefault, 'whisper.cpp\'s own values given as server_vad fields: the default');
});

test('without the VAD model: no VAD by default, and a request that asks for it gets a 400 naming the field', { timeout: 300_000 }, async () => {
  const res = await transcribe(without, { file: wavBlob(clip.wav), chunking_strategy: 'auto' }, without.auth);
  assert.equal(res.status, 400);
  const body = await res.json();
  assert.equal(body.error.code, 'unsupported_parameter');
  assert.equal(body.error.param, 'chunking_strategy');
  // Without VAD, Whisper's segments run through the silences (its 30-s windows span them).
  const out = await verbose(without);
  assert.ok(out.segments.some((s) => !inSpeech(s.start) || !inSpeech(s.end)), 'a segment reaches into a gap without VAD');
});

test('STT_VAD off (the default) and the speech gate off, the model installed: no VAD unless the request asks for it', { timeout: 300_000 }, async () => {
  const off = await startRealServer('base-q8_0', { vad: true, env: { STT_SPEECH_GATE: 'false' } });
  try {
    assert.deepEqual(await verbose(off), await verbose(without));
    assert.deepEqual(await verbose(off, { chunking_strategy: 'auto' }), await verbose(withVad));
  } finally {
    await off.close();
  }
});

test('the speech gate in the addon: windows of quiet noise dropped, speech kept, and each streamed segment numbered as the result numbers it', { timeout: 300_000 }, async () => {
  const model = await loadModel(realModelPath('base-q8_0'));
  try {
    // The sentence, a minute of quiet noise (about -56 dBFS, seeded), the sentence again.
    const { pcm: jfk } = await decodeWav(readFileSync(JFK));
    const gap = 16000 * 60;
    const pcm = new Float32Array(jfk.length * 2 + gap);
    let seed = 0x5eed;
    for (let i = 0; i < pcm.length; i++) pcm[i] = (((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) * 2 - 1) * 0.003;
    for (let i = 0; i < jfk.length; i++) {
      pcm[i] += jfk[i];
      pcm[jfk.length + gap + i] += jfk[i];
    }
    const options = { threads: 2, language: 'en', temperatureFallback: false } as const;
    const ungated = await model.transcribe(pcm, options);
    const seen: [number, string][] = [];
    const gated = await model.transcribe(pcm, { ...options, vad: { modelPath: VAD_FIXTURE }, speechGate: true, onSegment: (text, index) => seen.push([index, text]) });
    assert.deepEqual(seen, gated.segments.map((s, i) => [i, s.text]), 'streamed as numbered in the result');
    // The gate judges Whisper's 30-s windows: one with (almost) no speech in it keeps nothing.
    const speech = [[0, jfk.length / 16000], [(jfk.length + gap) / 16000, pcm.length / 16000]];
    const windowHasSpeech = (seek: number) => speech.some(([a, b]) => Math.min(b, seek / 100 + 30) - Math.max(a, seek / 100) >= 0.2);
    assert.deepEqual(gated.segments.map((s) => s.text), ungated.segments.filter((s) => windowHasSpeech(s.seek)).map((s) => s.text),
      'kept: the segments of windows that hold speech');
    assert.ok(gated.segments.every((s) => windowHasSpeech(s.seek)));
    assert.equal((gated.text.match(/ask not what your country/gi) ?? []).length, 2, gated.text);
  } finally {
    await model.dispose();
  }
});
