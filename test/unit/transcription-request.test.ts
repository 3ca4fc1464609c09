// The transcription form's rules, one by one, without HTTP: what each field
// accepts, what it refuses (status, code, param), and the order the contract
// checks them in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseTranscriptionRequest } from '../../src/routes/transcription-request';
import type { Context } from 'koa';
import { toApiError } from '../../src/http/error-map';
import type { Target } from '../../src/stt/backends';

const local: Target = { mode: 'local', alias: 'service-local-stt', aliases: [], languages: new Set(['en', 'de']), supportsPrompt: true, supportsWords: true, supportsChunking: true, supportsTranslation: true, supportsLogprobs: true, name: 'The local runtime whisper-base' };
const file = { buffer: Buffer.from('RIFF'), originalFilename: 'a.wav', mimetype: 'audio/wav', size: 4 };
const parse = (fields: Record<string, unknown>, target: Target = local, files: Record<string, unknown> = { file }) =>
  parseTranscriptionRequest(fields, files, target);

function refused(fields: Record<string, unknown>, code: string, param: string | null, target: Target = local, files: Record<string, unknown> = { file }) {
  assert.throws(() => parse(fields, target, files), (e: unknown) => {
    // As the error middleware answers it (field rules throw ApiError, chunking_strategy's a domain error).
    const { api, internal } = toApiError(e, {} as Context);
    assert.ok(!internal, String(e));
    assert.deepEqual({ status: api.status, code: api.code, param: api.param }, { status: 400, code, param });
    return true;
  });
}

test('the defaults: json, segment granularity, nothing else set', () => {
  const r = parse({});
  assert.deepEqual({ ...r, granularities: [...r.granularities] }, {
    task: 'transcribe', file, format: 'json', language: undefined, prompt: undefined, temperature: undefined, granularities: ['segment'], chunkingStrategy: undefined, stream: false, logprobs: false,
  });
});

test('the file: required, an upload (not text), exactly one, no other file fields', () => {
  refused({}, 'missing_file', 'file', local, {});
  refused({ file: 'text' }, 'invalid_type', 'file', local, {});
  refused({}, 'duplicate_field', 'file', local, { file: [file, file] });
  refused({}, 'unknown_parameter', 'other', local, { file, other: file });
  assert.deepEqual(parse({}, local, { file: {} }).file, { buffer: Buffer.alloc(0), originalFilename: null, mimetype: null, size: 0 });
});

test('unknown, duplicate and non-text fields are refused by name', () => {
  refused({ modle: 'x' }, 'unknown_parameter', 'modle');
  refused({ language: ['en', 'de'] }, 'duplicate_field', 'language');
  refused({ prompt: 5 }, 'invalid_type', 'prompt');
});

test('model: absent or the served alias', () => {
  assert.equal(parse({ model: 'service-local-stt' }).format, 'json');
  refused({ model: 'whisper-1' }, 'model_not_found', 'model');
});

test('response_format: each of the five, nothing else', () => {
  for (const f of ['json', 'text', 'srt', 'verbose_json', 'vtt']) assert.equal(parse({ response_format: f }).format, f);
  refused({ response_format: 'xml' }, 'invalid_response_format', 'response_format');
  refused({ response_format: '' }, 'invalid_response_format', 'response_format');
});

test('language: trimmed and lower-cased, checked against the target, any when the target has no list', () => {
  assert.equal(parse({ language: ' DE ' }).language, 'de');
  assert.equal(parse({ language: '' }).language, undefined);
  refused({ language: 'xx' }, 'unsupported_language', 'language');
  assert.equal(parse({ language: 'xx' }, { ...local, languages: null }).language, 'xx');
});

test('prompt: up to 4096 characters, refused by a target without prompts, empty is none', () => {
  assert.equal(parse({ prompt: 'p'.repeat(4096) }).prompt, 'p'.repeat(4096));
  refused({ prompt: 'p'.repeat(4097) }, 'invalid_value', 'prompt');
  refused({ prompt: 'hello' }, 'unsupported_parameter', 'prompt', { ...local, supportsPrompt: false });
  assert.equal(parse({ prompt: '' }, { ...local, supportsPrompt: false }).prompt, undefined);
});

test('temperature: every decimal number from 0 to 1, as any client writes it', () => {
  const accepted = [['0', 0], ['1', 1], ['0.5', 0.5], ['.25', 0.25], [' 0.7 ', 0.7], ['1e-7', 1e-7], ['0.', 0], ['1.', 1], ['1e-1', 0.1],
    ['+0.5', 0.5], ['5E-1', 0.5], ['1.0e0', 1], ['-0', -0], ['0.000', 0], ['00.5', 0.5], ['1e-10', 1e-10]] as const;
  for (const [raw, value] of accepted) assert.equal(parse({ temperature: raw }).temperature, value, raw);
  assert.equal(parse({ temperature: '' }).temperature, undefined);
  for (const bad of ['1.01', '-0.1', 'abc', '0x1', 'NaN', 'Infinity', '2', '1e1', '.', 'e1', '1e', '0.5.5', '1_0', '- 0.5']) {
    refused({ temperature: bad }, 'invalid_value', 'temperature');
  }
});

test('stream: true or false (empty is false, either case); streams json and text, and is ignored with the other formats as OpenAI ignores it', () => {
  assert.equal(parse({}).stream, false);
  assert.equal(parse({ stream: 'false' }).stream, false);
  assert.equal(parse({ stream: '' }).stream, false);
  assert.equal(parse({ stream: 'true' }).stream, true);
  assert.equal(parse({ stream: 'True' }).stream, true, 'as Python writes it');
  assert.equal(parse({ stream: 'true', response_format: 'text' }).stream, true);
  for (const bad of ['1', 'yes', 'on']) refused({ stream: bad }, 'invalid_value', 'stream');
  // LiteLLM sends stream=true with verbose_json: the plain answer.
  for (const format of ['verbose_json', 'srt', 'vtt']) assert.equal(parse({ stream: 'true', response_format: format }).stream, false, format);
});

test('include[]=logprobs: with json only, from a target that has them; anything else named', () => {
  assert.equal(parse({}).logprobs, false);
  assert.equal(parse({ 'include[]': 'logprobs' }).logprobs, true);
  assert.equal(parse({ include: ['logprobs'] }).logprobs, true);
  refused({ 'include[]': 'segments' }, 'invalid_value', 'include[]');
  refused({ 'include[]': 'logprobs', response_format: 'verbose_json' }, 'invalid_value', 'include[]');
  refused({ 'include[]': 'logprobs' }, 'unsupported_parameter', 'include[]', { ...local, supportsLogprobs: false });
});

test('the 2025-26 fields: one language in languages[]; keywords, known speakers and diarized_json refused by name', () => {
  assert.equal(parse({ 'languages[]': 'de' }).language, 'de');
  assert.equal(parse({ 'languages[]': 'de', language: 'de' }).language, 'de');
  refused({ 'languages[]': ['de', 'en'] }, 'unsupported_value', 'languages[]');
  refused({ 'languages[]': 'de', language: 'en' }, 'invalid_value', 'languages[]');
  refused({ 'languages[]': 'xx' }, 'unsupported_language', 'languages[]');
  refused({ 'languages[]': 'xx', language: 'xx' }, 'unsupported_language', 'language');
  refused({ 'keywords[]': ['Kubernetes'] }, 'unsupported_parameter', 'keywords[]');
  refused({ 'known_speaker_names[]': ['agent'] }, 'unsupported_parameter', 'known_speaker_names[]');
  refused({ 'known_speaker_references[]': ['data:audio/wav;base64,UklGRg=='] }, 'unsupported_parameter', 'known_speaker_references[]');
  refused({ response_format: 'diarized_json' }, 'unsupported_value', 'response_format');
  // Translations take OpenAI's smaller set.
  assert.throws(() => parseTranscriptionRequest({ 'include[]': 'logprobs' }, { file }, local, 'translate'));
});

test('timestamp_granularities: segment and word, only with verbose_json, word only where the target gives words', () => {
  const g = (fields: Record<string, unknown>) => [...parse({ response_format: 'verbose_json', ...fields }).granularities].sort();
  assert.deepEqual(g({ 'timestamp_granularities[]': 'word' }), ['word']);
  assert.deepEqual(g({ 'timestamp_granularities[]': ['word', 'segment'] }), ['segment', 'word']);
  assert.deepEqual(g({ timestamp_granularities: 'segment' }), ['segment']);
  assert.deepEqual(g({ 'timestamp_granularities[]': 'word', timestamp_granularities: 'segment' }), ['segment', 'word']);
  refused({ response_format: 'verbose_json', 'timestamp_granularities[]': 'char' }, 'invalid_value', 'timestamp_granularities[]');
  refused({ 'timestamp_granularities[]': 'segment' }, 'invalid_value', 'timestamp_granularities[]');
  refused({ response_format: 'verbose_json', 'timestamp_granularities[]': 'word' }, 'unsupported_parameter', 'timestamp_granularities[]', { ...local, supportsWords: false });
  assert.deepEqual([...parse({ response_format: 'verbose_json', 'timestamp_granularities[]': 'segment' }, { ...local, supportsWords: false }).granularities], ['segment']);
});

test('the contract\'s order: file, then unknown fields, model, response_format, language, then the rest', () => {
  refused({ modle: 'x' }, 'missing_file', 'file', local, {});
  refused({ modle: 'x', model: 'whisper-1' }, 'unknown_parameter', 'modle');
  refused({ model: 'whisper-1', response_format: 'xml' }, 'model_not_found', 'model');
  refused({ response_format: 'xml', language: 'xx' }, 'invalid_response_format', 'response_format');
  refused({ language: 'xx', temperature: '9' }, 'unsupported_language', 'language');
  refused({ prompt: 'p'.repeat(5000), temperature: '9' }, 'invalid_value', 'prompt');
});

test('messages name the field or value refused and what is accepted instead', () => {
  const messageOf = (fields: Record<string, unknown>, target: Target = local, files: Record<string, unknown> = { file }) => {
    try {
      parse(fields, target, files);
    } catch (e) {
      assert.ok(!toApiError(e, {} as Context).internal, String(e));
      return (e as Error).message;
    }
    assert.fail(`accepted ${JSON.stringify(fields)}`);
  };
  assert.equal(messageOf({ language: ['en', 'de'] }), 'The field "language" was sent more than once.');
  assert.equal(messageOf({ prompt: 5 }), 'The field "prompt" must be a text field.');
  assert.equal(messageOf({}, local, { file, other: file }), 'Unknown file field "other".');
  assert.equal(messageOf({ modle: 'x' }), 'Unknown field "modle".');
  assert.equal(messageOf({ model: 'whisper-1' }), 'The model "whisper-1" is not served here; use "service-local-stt".');
  assert.equal(messageOf({ response_format: 'xml' }), 'response_format must be one of json, text, verbose_json, srt, vtt.');
  assert.equal(messageOf({ language: 'XX' }), 'The language "XX" is not supported by the active model.');
  assert.equal(messageOf({ prompt: 'p'.repeat(4097) }), 'prompt is limited to 4096 characters.');
  assert.equal(messageOf({ temperature: '2' }), 'temperature must be a number between 0 and 1.');
  assert.equal(messageOf({ response_format: 'verbose_json', 'timestamp_granularities[]': 'char' }), 'timestamp_granularities[] accepts "segment" and "word".');
  assert.equal(messageOf({ 'timestamp_granularities[]': 'word' }), 'timestamp_granularities[] requires response_format=verbose_json.');
});

test('chunking_strategy: "auto", a JSON server_vad object, or the SDKs\' flattened chunking_strategy[...] fields', () => {
  assert.equal(parse({}).chunkingStrategy, undefined, 'absent: the host default');
  assert.equal(parse({ chunking_strategy: '' }).chunkingStrategy, undefined);
  assert.deepEqual(parse({ chunking_strategy: 'auto' }).chunkingStrategy, { type: 'auto' });
  assert.deepEqual(parse({ chunking_strategy: '"auto"' }).chunkingStrategy, { type: 'auto' });
  // OpenAI's defaults fill the fields not sent.
  assert.deepEqual(parse({ chunking_strategy: '{"type":"server_vad"}' }).chunkingStrategy,
    { type: 'server_vad', threshold: 0.5, prefixPaddingMs: 300, silenceDurationMs: 200 });
  assert.deepEqual(parse({ chunking_strategy: '{"type":"server_vad","threshold":0.7,"prefix_padding_ms":100,"silence_duration_ms":500}' }).chunkingStrategy,
    { type: 'server_vad', threshold: 0.7, prefixPaddingMs: 100, silenceDurationMs: 500 });
  assert.deepEqual(parse({ 'chunking_strategy[type]': 'server_vad', 'chunking_strategy[threshold]': '0.25', 'chunking_strategy[silence_duration_ms]': '800' }).chunkingStrategy,
    { type: 'server_vad', threshold: 0.25, prefixPaddingMs: 300, silenceDurationMs: 800 });
});

test('chunking_strategy: each bad value is a 400 naming the field', () => {
  for (const value of ['manual', '{"type":"semantic_vad"}', '{"type":"server_vad","threshold":1.5}', '{"type":"server_vad","threshold":"x"}',
    '{"type":"server_vad","prefix_padding_ms":1.5}', '{"type":"server_vad","silence_duration_ms":-1}', '{"type":"server_vad","silence_duration_ms":10001}',
    '{"type":"server_vad","eagerness":"high"}', '{"type":"server_vad","constructor":1}', '{"type":"server_vad","toString":1}', '[1]', '{', 'null', '3']) {
    refused({ chunking_strategy: value }, 'invalid_value', 'chunking_strategy');
  }
  refused({ 'chunking_strategy[type]': 'server_vad', 'chunking_strategy[threshold]': '0x1' }, 'invalid_value', 'chunking_strategy');
  refused({ 'chunking_strategy[type]': 'server_vad', 'chunking_strategy[constructor]': '1' }, 'invalid_value', 'chunking_strategy');
  refused({ 'chunking_strategy[type]': 'server_vad', chunking_strategy: 'auto' }, 'invalid_value', 'chunking_strategy');
  refused({ chunking_strategy: ['auto', 'auto'] }, 'duplicate_field', 'chunking_strategy');
  refused({ 'chunking_strategy[]': 'auto' }, 'unknown_parameter', 'chunking_strategy[]');
  const deepgram: Target = { ...local, mode: 'cloud', supportsChunking: false };
  refused({ chunking_strategy: 'auto' }, 'unsupported_parameter', 'chunking_strategy', deepgram);
});

test('translations take OpenAI\'s smaller field set, and only where the target can translate', () => {
  const translate = (fields: Record<string, unknown>, target: Target = local) => parseTranscriptionRequest(fields, { file }, target, 'translate');
  const r = translate({ model: 'service-local-stt', prompt: 'p', response_format: 'verbose_json', temperature: '0.2' });
  assert.deepEqual([r.task, r.format, r.prompt, r.temperature, r.language, r.chunkingStrategy], ['translate', 'verbose_json', 'p', 0.2, undefined, undefined]);
  for (const name of ['language', 'timestamp_granularities[]', 'chunking_strategy', 'stream']) {
    assert.throws(() => translate({ [name]: name === 'language' ? 'de' : name === 'chunking_strategy' ? 'auto' : name === 'stream' ? 'true' : 'segment' }), (e: unknown) => {
      const { api } = toApiError(e, {} as Context);
      assert.deepEqual([api.status, api.code, api.param], [400, 'unknown_parameter', name]);
      return true;
    });
  }
  const parakeet: Target = { ...local, supportsTranslation: false, name: 'The local runtime parakeet-tdt-0.6b-v3' };
  assert.throws(() => translate({}, parakeet), (e: unknown) => {
    const { api } = toApiError(e, {} as Context);
    assert.deepEqual([api.status, api.code, api.param], [400, 'translation_unsupported', 'model']);
    assert.match(api.message, /parakeet-tdt-0\.6b-v3 cannot translate/);
    return true;
  });
  assert.equal(parse({}, parakeet).task, 'transcribe', 'it still transcribes');
});
