// What a client is told when a WAV cannot be decoded: the decoder's own
// sentence for a problem with the file, a fixed one for anything else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invalidAudio } from '../../src/http/error-map';
import { WavError } from '../../src/native/addon-errors';
import { createLogger } from '../../src/log';

const logged: unknown[] = [];
const logger = { ...createLogger('silent'), warn: (o: unknown) => void logged.push(o) } as unknown as Parameters<typeof invalidAudio>[1];

const wavError = (code: WavError['code'], message: string) => new WavError(message, code);

test('a file problem keeps its stable code and message', () => {
  const e = invalidAudio(wavError('not_riff_wave', 'not a RIFF file'), logger);
  assert.equal(e.status, 400);
  assert.equal(e.code, 'invalid_audio');
  assert.equal(e.param, 'file');
  assert.match(e.message, /\(not_riff_wave\): not a RIFF file/);
});

test('an internal failure (std::bad_alloc) is a fixed sentence for the client and the detail goes to the log', () => {
  const e = invalidAudio(wavError('decode_failed', 'std::bad_alloc'), logger);
  assert.equal(e.status, 400);
  assert.equal(e.code, 'invalid_audio');
  assert.doesNotMatch(e.message, /bad_alloc|std::/);
  assert.match(e.message, /decode_failed/);
  assert.deepEqual(logged, [{ err: 'std::bad_alloc' }]);
});
