// Where a job's recording is cut (src/jobs/pieces.ts), and how the pieces'
// transcripts are joined.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { joinPiece, pieceEnds } from '../../src/jobs/pieces';
import type { OutputTranscription } from '../../src/stt/formats';

const RATE = 16_000;

/** A tone everywhere but in the given quiet spans (seconds). */
function toneWithGaps(seconds: number, gaps: [number, number][]): Float32Array {
  const pcm = new Float32Array(seconds * RATE);
  for (let i = 0; i < pcm.length; i++) pcm[i] = 0.3 * Math.sin(i / 5);
  for (const [from, to] of gaps) pcm.fill(0, from * RATE, to * RATE);
  return pcm;
}

test('pieces end at the quietest tenth of a second before their nominal end, and the last at the recording\'s end', () => {
  const pcm = toneWithGaps(700, [[287.3, 287.5], [585, 585.2]]);
  assert.deepEqual(pieceEnds(pcm).map((s) => s / RATE), [287.3, 585, 700]);
  assert.deepEqual(pieceEnds(toneWithGaps(300, [])).map((s) => s / RATE), [300], 'a recording of one piece is not cut');
  // No quiet anywhere: the first frame of the search window is as good as any, and the cut still moves on.
  const ends = pieceEnds(toneWithGaps(650, []));
  assert.equal(ends.at(-1), 650 * RATE);
  assert.ok(ends.every((e, i) => i === 0 || e > ends[i - 1]));
});

const piece = (text: string, language: string, segments: [number, number, string][], duration: number): OutputTranscription => ({
  text, language, duration,
  segments: segments.map(([start, end, t]) => ({
    start, end, text: t, tokens: [], seek: 0, temperature: 0, avgLogprob: -0.2, noSpeechProb: 0.01,
    words: [{ word: t.trim(), start, end }],
  })),
});

test('joined pieces run on in the recording\'s time, their text in order', () => {
  const first = joinPiece(null, piece(' Hello there.', 'en', [[0, 2.5, ' Hello there.']], 287.3), 0);
  const both = joinPiece(first, piece(' Goodbye.', 'de', [[1.25, 3, ' Goodbye.']], 100), 287.3);
  assert.equal(both.text, ' Hello there. Goodbye.');
  assert.equal(both.language, 'en', 'the first piece that heard speech names the language');
  assert.equal(both.duration, 387.3);
  assert.deepEqual(both.segments.map((s) => [s.start, s.end, s.seek]), [[0, 2.5, 0], [288.55, 290.3, 28730]]);
  assert.deepEqual(both.segments[1].words, [{ word: 'Goodbye.', start: 288.55, end: 290.3 }]);
  // Parakeet's text has no leading space: the pieces must not run together.
  assert.equal(joinPiece(piece('one two', 'en', [], 300), piece('three', 'en', [], 10), 300).text, 'one two three');
  const silentFirst = joinPiece(joinPiece(null, piece('', 'en', [], 300), 0), piece(' Bonjour.', 'fr', [[0, 1, ' Bonjour.']], 10), 300);
  assert.equal(silentFirst.language, 'fr');
});
