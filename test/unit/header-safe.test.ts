// X-Stt-Runtime's value (src/http/header-safe.ts): names the admin API takes
// pass unchanged; anything Node would refuse in a header is percent-encoded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateHeaderValue } from 'node:http';
import { headerSafe } from '../../src/http/header-safe';

test('a runtime name is a valid header value: unchanged when it already is one, percent-encoded where not', () => {
  for (const name of ['whisper-base', 'groq/whisper-large-v3', 'oai/gpt-4o-transcribe:2025']) assert.equal(headerSafe(name), name);
  for (const name of ['oai/house\nstt', 'oai/模型']) {
    assert.throws(() => validateHeaderValue('X-Stt-Runtime', name), { code: 'ERR_INVALID_CHAR' }, `Node refuses ${JSON.stringify(name)} as it is`);
    assert.doesNotThrow(() => validateHeaderValue('X-Stt-Runtime', headerSafe(name)));
  }
  assert.equal(headerSafe('oai/whisper 1'), 'oai/whisper%201');
});
