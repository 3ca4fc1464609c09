// A realtime session's listener (src/http/realtime/server-vad.ts) retuned by
// a session.update hears as a new listener with those settings would, on the
// model it already holds: an update costs no model load.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ServerVad } from '../../src/http/realtime/server-vad';
import { SERVER_VAD_DEFAULTS, type ServerVadSettings } from '../../src/http/realtime/turn-detector';
import { AUDIO_DIR, pcm16At24k, readPcm16Mono, VAD_FIXTURE } from '../../fixtures';

const JFK_24K = pcm16At24k(readPcm16Mono(readFileSync(path.join(AUDIO_DIR, 'jfk.wav'))).samples);

async function edgesOf(vad: ServerVad, pcm: Int16Array) {
  const edges = [];
  for (let at = 0; at < pcm.length; at += 4800) edges.push(...(await vad.hear(pcm.subarray(at, at + 4800))));
  return edges;
}

test('a retuned listener hears the same turns as a new one with its settings', async () => {
  const tight: ServerVadSettings = { type: 'server_vad', threshold: 0.7, prefix_padding_ms: 100, silence_duration_ms: 200 };
  const fresh = new ServerVad(VAD_FIXTURE, tight, 1000);
  const expected = await edgesOf(fresh, JFK_24K);
  fresh.free();
  const other = new ServerVad(VAD_FIXTURE, SERVER_VAD_DEFAULTS, 0);
  const loose = await edgesOf(other, JFK_24K);
  other.free();
  // The two settings cut JFK differently, so the comparison below can tell them apart.
  assert.notDeepEqual(loose.map((e) => e.type), expected.map((e) => e.type));

  const retuned = new ServerVad(VAD_FIXTURE, SERVER_VAD_DEFAULTS, 0);
  await edgesOf(retuned, JFK_24K.subarray(0, 3 * 24000)); // part-way through a turn, with state to forget
  retuned.retune(tight, 1000);
  assert.deepEqual(retuned.settings, tight);
  assert.deepEqual(await edgesOf(retuned, JFK_24K), expected);
  retuned.free();
});
