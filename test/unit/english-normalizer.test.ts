import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeEnglish, wer, wordErrors } from '../../scripts/lib/english-normalizer';

test('normalisation follows Whisper\'s English normaliser on the cases the clip sets hit', () => {
  const cases: [string, string][] = [
    ['And so, my fellow Americans: ask not...', 'and so my fellow americans ask not'],
    ["We can't, won't; they're here & it's fine.", 'we can not will not they are here it is fine'],
    ['Mr. Smith met Dr. Jones at St. Paul', 'mister smith met doctor jones at saint paul'],
    ['not to stop more than ten minutes by the way,', 'not to stop more than 10 minutes by the way'],
    ['not to stop more than 10 minutes by the way.', 'not to stop more than 10 minutes by the way'],
    ['twenty one guns and two thousand and five men', '21 guns and 2005 men'],
    ['one hundred and twenty three', '123'],
    ['It cost 1,000 dollars, or 3.5 per cent', 'it cost 1000 dollars or 3.5 per cent'],
    ['Um, I think [inaudible] (laughs) café', 'i think cafe'],
    ['“Quoted” — dashes… and ‘single’ quotes', 'quoted dashes and single quotes'],
    ['one two', '1 2'],
  ];
  for (const [input, want] of cases) assert.equal(normalizeEnglish(input), want, input);
});

test('word errors count substitutions, deletions and insertions', () => {
  const w = (s: string) => s.split(' ');
  assert.deepEqual(wordErrors(w('a b c d'), w('a b c d')), { errors: 0, words: 4 });
  assert.deepEqual(wordErrors(w('a b c d'), w('a x c d')), { errors: 1, words: 4 });
  assert.deepEqual(wordErrors(w('a b c d'), w('a c d')), { errors: 1, words: 4 });
  assert.deepEqual(wordErrors(w('a b c d'), w('a b y c d z')), { errors: 2, words: 4 });
  assert.deepEqual(wordErrors(w('a b'), []), { errors: 2, words: 2 });
  // Corpus WER weighs clips by their words, after normalisation.
  assert.equal(wer([{ reference: 'Ten dogs.', hypothesis: '10 dogs' }, { reference: 'a b c', hypothesis: 'a b' }]), 1 / 5);
});
