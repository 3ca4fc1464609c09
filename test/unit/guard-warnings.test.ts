import { test } from 'node:test';
import assert from 'node:assert/strict';
import { guardWarnings } from '../../src/stt/guard-warnings';
import { render, type OutputTranscription } from '../../src/stt/formats';

const codes = (w: { code: string }[]) => w.map((x) => x.code);

test('nothing fired, nothing listed', () => {
  assert.deepEqual(guardWarnings({ segments: [{ temperature: 0 }, {}] }, 0, 0), []);
  assert.deepEqual(guardWarnings({ noSpeech: false, gatedSegments: 0, segments: [{ temperature: 0.4 }] }, 0, 0.4), [], 'the requested temperature is not a fallback');
});

test('each guard that fired is named once, with what it left out', () => {
  const w = guardWarnings({ noSpeech: false, gatedSegments: 3, segments: [{ temperature: 0 }, { temperature: 0.2 }, { temperature: 0.4 }] }, 1, 0);
  assert.deepEqual(codes(w), ['silent_windows_dropped', 'annotations_dropped', 'temperature_fallback']);
  assert.match(w[0].message, /^3 segments were left out/);
  assert.match(w[1].message, /^1 segment was left out/);
  assert.match(w[2].message, /^2 segments were decoded again/);
  assert.deepEqual(codes(guardWarnings({ noSpeech: true, segments: [] }, 0, 0)), ['no_speech']);
});

test('verbose_json lists them only when one fired; the other formats never', () => {
  const base: OutputTranscription = { text: '', language: 'en', duration: 20, segments: [] };
  const opts = { granularities: new Set<'segment' | 'word'>(['segment']), temperature: 0 };
  assert.equal('warnings' in (render(base, 'verbose_json', opts).body as object), false);
  const warned = { ...base, warnings: guardWarnings({ noSpeech: true, segments: [] }, 0, 0) };
  assert.deepEqual((render(warned, 'verbose_json', opts).body as { warnings: unknown }).warnings, warned.warnings);
  assert.equal('warnings' in (render(warned, 'json', opts).body as object), false);
});
