import { test } from 'node:test';
import assert from 'node:assert/strict';
import { render, normaliseTimes, type OutputTranscription } from '../../src/stt/formats';

const t: OutputTranscription = {
  text: ' Hello world. Again.',
  language: 'en',
  duration: 5,
  segments: [
    { start: 0, end: 2.5, text: ' Hello world.', tokens: [1, 2], avgLogprob: -0.2, noSpeechProb: 0.01, words: [{ word: 'Hello', start: 0, end: 1 }, { word: 'world.', start: 0.9, end: 2.5 }] },
    { start: 2.4, end: 7, text: ' Again.', tokens: [3], avgLogprob: -0.1, noSpeechProb: 0.02 },
  ],
};
const opts = { granularities: new Set<'segment' | 'word'>(['segment']), temperature: 0 };

test('times are clamped to the audio and made non-decreasing', () => {
  const s = normaliseTimes(t);
  assert.deepEqual(s.map((x) => [x.start, x.end]), [[0, 2.5], [2.5, 5]]);
  assert.deepEqual(s[0].words!.map((w) => [w.start, w.end]), [[0, 1], [1, 2.5]]);
});

test('srt and vtt', () => {
  assert.equal(render(t, 'srt', opts).body, '1\n00:00:00,000 --> 00:00:02,500\nHello world.\n\n2\n00:00:02,500 --> 00:00:05,000\nAgain.\n');
  assert.equal(render(t, 'vtt', opts).body, 'WEBVTT\n\n00:00:00.000 --> 00:00:02.500\nHello world.\n\n00:00:02.500 --> 00:00:05.000\nAgain.\n');
});

test('json, text and verbose_json', () => {
  assert.deepEqual(render(t, 'json', opts).body, { text: 'Hello world. Again.' });
  assert.deepEqual(render(t, 'text', opts), { body: 'Hello world. Again.\n', type: 'text/plain; charset=utf-8' });
  const v = render(t, 'verbose_json', { ...opts, granularities: new Set(['segment', 'word']) }).body as Record<string, unknown>;
  assert.equal(v.language, 'english');
  assert.equal((v.segments as unknown[]).length, 2);
  assert.equal((v.words as unknown[]).length, 2);
});
