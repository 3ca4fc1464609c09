// The annotation filter (src/stt/non-speech.ts): which segment texts are only
// marks of what was heard, and that a row of notes cannot stall it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isNonSpeechAnnotation, withoutAnnotations } from '../../src/stt/non-speech';

test('marks alone are dropped; any word, a number or a question in brackets is speech and kept', () => {
  for (const t of [' [BLANK_AUDIO]', ' [Music]', ' (applause)', ' *sigh*', ' ♪', ' ♪ ♪ ♪', ' [MUSIC] [BLANK_AUDIO]', ' (crickets chirping) (crickets chirping)', ' [inaudible].', ' [S]']) {
    assert.equal(isNonSpeechAnnotation(t), true, t);
  }
  for (const t of [' (laughs) yes', ' ♪ la la ♪', ' (1990)', ' [2]', ' (I mean, who cares?)', ' Thank you.', '', ' ']) {
    assert.equal(isNonSpeechAnnotation(t), false, JSON.stringify(t));
  }
});

test('a long row of notes and then a word is decided at once (no exponential backtracking)', () => {
  const text = ' ' + '♪'.repeat(2000) + ' yes';
  const t0 = performance.now();
  assert.equal(isNonSpeechAnnotation(text), false);
  assert.ok(performance.now() - t0 < 1000, 'linear, not exponential, in the row');
});

test('withoutAnnotations: the text rebuilt from the segments kept', () => {
  const seg = (text: string) => ({ start: 0, end: 1, text, tokens: [], avgLogprob: 0, noSpeechProb: 0 });
  const t = { text: ' [BLANK_AUDIO] Hello. (applause)', language: 'en', duration: 3, segments: [seg(' [BLANK_AUDIO]'), seg(' Hello.'), seg(' (applause)')] };
  const { result, dropped } = withoutAnnotations(t);
  assert.equal(dropped, 2);
  assert.deepEqual([result.text, result.segments.map((s) => s.text)], [' Hello.', [' Hello.']]);
  assert.equal(withoutAnnotations({ ...t, segments: [seg(' Hello.')], text: ' Hello.' }).result.text, ' Hello.');
});
