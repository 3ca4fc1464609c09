// Which words of a turn still being heard go out as deltas (src/http/realtime/agreed-words.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AgreedWords } from '../../src/http/realtime/agreed-words';

test('a word is sent once two drafts in a row agree on it and on every word before it, short of either draft\'s last word; the full decode adds the rest', () => {
  const w = new AgreedWords();
  assert.equal(w.draft('And so'), '', 'one draft agrees with nothing yet');
  assert.equal(w.draft('And so my fellow'), 'And', '"so" ends the first draft: it waits');
  assert.equal(w.draft('And so my fellow Americans.'), ' so my');
  assert.equal(w.draft('And so my fellow Americans, ask'), ' fellow', '"Americans." became "Americans,": not agreed');
  assert.equal(w.draft('And so my fellow Americans, ask not what'), ' Americans,');
  assert.equal(w.finish('And so my fellow Americans, ask not what your country can do for you.'), ' ask not what your country can do for you.');
  assert.ok(w.agreed);
});

test('the deltas joined are the transcript when the full decode agrees; when it departs, nothing more is sent', () => {
  const w = new AgreedWords();
  const deltas = [w.draft('Ask not'), w.draft('Ask not what'), w.draft('Ask not what you'), w.draft('Ask not what you'), w.finish('Ask not what your country can do.')];
  assert.deepEqual(deltas.slice(0, 4), ['', 'Ask', ' not', ' what'], 'never "you", last in both drafts');
  assert.equal(deltas.join(''), 'Ask not what your country can do.');

  const revised = new AgreedWords();
  revised.draft('I scream for');
  assert.equal(revised.draft('I scream for you'), 'I scream');
  assert.equal(revised.finish('Ice cream for all.'), '');
  assert.equal(revised.agreed, false);
});

test('a draft that departs from the words already sent sends nothing, even where it agrees with the draft before it', () => {
  const w = new AgreedWords();
  w.draft('one two three four');
  assert.equal(w.draft('one two three four five'), 'one two three');
  w.draft('won too three four five six');
  assert.equal(w.draft('won too three four five six seven'), '', 'agreed between themselves, not with what was sent');
  assert.equal(w.draft('one two three four five six seven'), '', 'the draft before it differs');
  assert.equal(w.draft('one two three four five six seven eight'), ' four five six');
});

test('the last delta is the transcript after the text sent, character for character; a transcript that only differs in spacing from what was sent, or stops short of it, departs', () => {
  const w = new AgreedWords();
  w.draft('Ask not what');
  assert.equal(w.draft('Ask not what your'), 'Ask not');
  assert.equal(w.finish('Ask not  what your\ncountry.'), '  what your\ncountry.', 'spacing kept as the transcript has it');
  assert.ok(w.agreed);
  const spaced = new AgreedWords();
  spaced.draft('Ask not what');
  spaced.draft('Ask not what your');
  assert.equal(spaced.finish('Ask  not what your country.'), '');
  assert.equal(spaced.agreed, false);
  const shorter = new AgreedWords();
  shorter.draft('one two three four');
  assert.equal(shorter.draft('one two three four five'), 'one two three');
  assert.equal(shorter.finish('one two'), '');
  assert.equal(shorter.agreed, false);
  assert.ok(shorter.shown);
});

test('no draft and no words: nothing sent, and a transcript with no text adds no delta', () => {
  const w = new AgreedWords();
  assert.equal(w.draft(''), '');
  assert.equal(w.draft('  '), '');
  assert.equal(w.finish(''), '');
  assert.ok(w.agreed);
  const whole = new AgreedWords();
  assert.equal(whole.finish(' Hello  there.'), ' Hello  there.', 'no drafts: the transcript, as it is, is the one delta');
  assert.equal(whole.shown, false);
});
