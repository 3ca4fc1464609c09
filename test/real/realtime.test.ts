// A realtime transcription session from the official Python openai client
// (client.realtime.connect, intent=transcription) on real Whisper base,
// streaming JFK at 24 kHz in real time and all at once: the transcript is
// the one an upload of the same audio gets. With server_vad (Silero), the
// server cuts the turns where the speech stops, without a commit; streamed
// in real time, drafts send deltas while a turn is still heard. The wyoming
// package, as Home Assistant uses it, gets the same transcript over Wyoming.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import WebSocket from 'ws';
import { startRealServer } from '../helpers/real-models';
import { transcribe, wavBlob, type TestServer } from '../helpers/server';
import { AUDIO_DIR, pcm16At24k, readPcm16Mono, writeWav } from '../../fixtures';
import { pythonVenv } from '../../fixtures/python-venv';
import { alignErrors, errorCount, scoringWords } from '../../benchmarks/lib/scoring';

const run = promisify(execFile);
const PYTHON_REALTIME = ['openai==3.51.0', 'websockets==17.4'];
let server: TestServer;
let dir: string;

before(async () => {
  server = await startRealServer('base-q8_0', { vad: true, env: { STT_WYOMING_PORT: '0' } });
  dir = mkdtempSync(path.join(os.tmpdir(), 'stt-realtime-'));
});
after(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});


test('the Python openai client streams JFK in real time and all at once: the transcript an upload gets', { timeout: 600_000 }, async (t) => {
  const pcm = pcm16At24k(readPcm16Mono(readFileSync(path.join(AUDIO_DIR, 'jfk.wav'))).samples);
  const raw = path.join(dir, 'jfk-24k.pcm');
  writeFileSync(raw, Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength));
  const upload = await transcribe(server, { file: wavBlob(writeWav({ rate: 24000, encoding: 'float32', channels: [Float32Array.from(pcm, (v) => v / 32768)] })), language: 'en' }, server.auth);
  assert.equal(upload.status, 200);
  const expected = ((await upload.json()) as { text: string }).text.trim();
  assert.match(expected, /ask not what your country can do for you/i);
  const bin = pythonVenv('openai-realtime', PYTHON_REALTIME);
  const script = path.join(__dirname, '..', 'python', 'openai_realtime.py');
  for (const pace of ['realtime', 'fast']) {
    const { stdout } = await run(path.join(bin, 'python'), [script, `${server.url.replace('http', 'ws')}/v1`, server.apiKey, raw, pace], { timeout: 300_000 });
    const py = JSON.parse(stdout);
    assert.equal(py.transcript, expected, pace);
    assert.ok(Math.abs(py.seconds - pcm.length / 24000) < 0.01, `${pace}: usage ${py.seconds}`);
    for (const type of ['session.created', 'session.updated', 'input_audio_buffer.committed', 'conversation.item.input_audio_transcription.delta']) {
      assert.ok(py.types.includes(type), `${pace}: ${type} in ${py.types.join(', ')}`);
    }
  }

  // The README's example: the script given the WAV itself (it takes it to 24 kHz): the same words.
  const fromWav = JSON.parse((await run(path.join(bin, 'python'), [script, `${server.url.replace('http', 'ws')}/v1`, server.apiKey, path.join(AUDIO_DIR, 'jfk.wav'), 'fast'], { timeout: 300_000 })).stdout);
  const wavErrors = errorCount(alignErrors(scoringWords(expected, 'en'), scoringWords(fromWav.transcript, 'en')));
  assert.ok(wavErrors <= 1, `${wavErrors} word errors: "${fromWav.transcript}" against "${expected}"`);

  // server_vad: no commit; Silero ends each turn at a pause. JFK's pauses may cut it in several turns,
  // each transcribed alone, so their joined words may differ from the upload's by a word or two, no more.
  const { stdout } = await run(path.join(bin, 'python'), [script, `${server.url.replace('http', 'ws')}/v1`, server.apiKey, raw, 'server_vad'], { timeout: 300_000 });
  const py = JSON.parse(stdout);
  const types: string[] = py.types;
  const count = (type: string) => types.filter((t) => t === type).length;
  assert.ok(py.turns >= 1, `turns: ${py.turns}`);
  assert.equal(count('input_audio_buffer.speech_started'), py.turns, types.join(', '));
  assert.equal(count('input_audio_buffer.speech_stopped'), py.turns, types.join(', '));
  assert.ok(types.indexOf('input_audio_buffer.speech_stopped') < types.indexOf('input_audio_buffer.committed'), types.join(', '));
  const errors = errorCount(alignErrors(scoringWords(expected, 'en'), scoringWords(py.transcript, 'en')));
  assert.ok(errors <= 2, `${errors} word errors: "${py.transcript}" against "${expected}"`);
  // Only the speech (with its padding) is charged, never the silence after it.
  assert.ok(py.seconds <= pcm.length / 24000 + 0.5 && py.seconds > 5, `usage ${py.seconds}`);

  // The same in real time: drafts give deltas while the speech is still heard, and the deltas of
  // each turn join to its transcript, except where the transcript departed from them (counted).
  const revisedBefore = await revisedTurns();
  const live = JSON.parse((await run(path.join(bin, 'python'), [script, `${server.url.replace('http', 'ws')}/v1`, server.apiKey, raw, 'server_vad_live'], { timeout: 300_000 })).stdout);
  const perTurn: { deltas: string; transcript: string; delta_while_heard: boolean }[] = live.per_turn;
  t.diagnostic(`live turns: ${JSON.stringify(perTurn)}`);
  assert.equal(perTurn.length, live.turns);
  assert.ok(perTurn.some((turn) => turn.delta_while_heard), 'a delta came while a turn was still heard');
  const departed = perTurn.filter((turn) => turn.deltas !== turn.transcript).length;
  assert.equal(departed, (await revisedTurns()) - revisedBefore, 'turns whose deltas do not join to their transcript are the ones counted as revised');
  const liveErrors = errorCount(alignErrors(scoringWords(expected, 'en'), scoringWords(live.transcript, 'en')));
  assert.ok(liveErrors <= 2, `${liveErrors} word errors: "${live.transcript}" against "${expected}"`);
});

test('the wyoming package transcribes JFK over Wyoming: the transcript an upload gets', { timeout: 300_000 }, async () => {
  const wav = readFileSync(path.join(AUDIO_DIR, 'jfk.wav'));
  const upload = await transcribe(server, { file: wavBlob(wav), language: 'en' }, server.auth);
  assert.equal(upload.status, 200);
  const expected = ((await upload.json()) as { text: string }).text.trim();
  assert.match(expected, /ask not what your country can do for you/i);
  const bin = pythonVenv('wyoming', ['wyoming==1.10.2']);
  const { stdout } = await run(path.join(bin, 'python'), [path.join(__dirname, '..', 'python', 'wyoming_transcribe.py'), '127.0.0.1', String(server.wyomingPort), path.join(AUDIO_DIR, 'jfk.wav'), 'en'], { timeout: 120_000 });
  const out = JSON.parse(stdout);
  assert.equal(out.error, undefined);
  assert.equal(out.text, expected);
});

test('a turn cleared after its deltas were shown is charged the audio they covered (dropping it is no way to transcribe for free)', { timeout: 120_000 }, async () => {
  const res = await fetch(`${server.url}/admin/api-keys`, {
    method: 'POST', headers: { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'shown-then-cleared' }),
  });
  const key = (await res.json()) as { id: string; key: string };
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/v1/realtime?intent=transcription`, { headers: { Authorization: `Bearer ${key.key}` } });
  const types: string[] = [];
  let firstDelta: (() => void) | null = null;
  const delta = new Promise<void>((resolve) => { firstDelta = resolve; });
  const cleared = new Promise<void>((resolve) => ws.on('message', (data) => {
    const type = JSON.parse(String(data)).type as string;
    types.push(type);
    if (type === 'conversation.item.input_audio_transcription.delta') firstDelta?.();
    if (type === 'input_audio_buffer.cleared') resolve();
  }));
  await new Promise<void>((resolve, reject) => { ws.once('open', () => resolve()); ws.once('error', reject); });
  ws.send(JSON.stringify({ type: 'session.update', session: { type: 'transcription', audio: { input: { transcription: { language: 'en' }, turn_detection: { type: 'server_vad', silence_duration_ms: 1200 } } } } }));
  const pcm = pcm16At24k(readPcm16Mono(readFileSync(path.join(AUDIO_DIR, 'jfk.wav'))).samples);
  let sent = 0;
  let shown = false;
  void delta.then(() => { shown = true; });
  // JFK in real time until a delta comes, then the turn is cleared.
  for (; sent < pcm.length && !shown; sent += 2400) {
    const piece = pcm.subarray(sent, sent + 2400);
    ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength).toString('base64') }));
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(shown, `a delta while JFK was heard: ${types.join(', ')}`);
  ws.send(JSON.stringify({ type: 'input_audio_buffer.clear' }));
  await cleared;
  ws.close();
  assert.ok(!types.includes('input_audio_buffer.committed'), 'the turn was dropped, not committed');
  const keys = await (await fetch(`${server.url}/admin/api-keys`, { headers: { Authorization: `Bearer ${server.adminKey}` } })).json();
  const usage = keys.data.find((k: { id: string }) => k.id === key.id).usage;
  assert.equal(usage.requests, 1, 'the dropped turn, recorded as one request');
  assert.ok(usage.audioSeconds > 0.5 && usage.audioSeconds <= sent / 24000, `${usage.audioSeconds} s charged of ${sent / 24000} s sent`);
});

/** stt_realtime_drafts_revised_total now. */
async function revisedTurns(): Promise<number> {
  const metrics = await (await fetch(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${server.adminKey}` } })).text();
  return Number(/^stt_realtime_drafts_revised_total (\d+)$/m.exec(metrics)?.[1]);
}
