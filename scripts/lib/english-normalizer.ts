// Text normalisation before scoring WER, after Whisper's EnglishTextNormalizer
// (openai/whisper, whisper/normalizers/english.py): no npm package carries it,
// so this is a small, documented subset, applied alike to references and
// hypotheses. Kept: lower case; bracketed and parenthesised asides removed;
// hesitations (uh, um, hmm, mm, mhm) removed; contractions and titles
// spelled out; accents stripped; punctuation and symbols to spaces, except a
// decimal point or thousands comma inside a number; spelled numbers to digits
// ("twenty one" → 21, "ten" → 10, "two thousand and five" → 2005).
// Left out: Whisper's British→American spelling table (the clip sets are
// American English), ordinals, currencies and "nineteen sixty" style years.
const CONTRACTIONS: [RegExp, string][] = [
  [/\bwon't\b/g, 'will not'], [/\bcan't\b/g, 'can not'], [/\blet's\b/g, 'let us'], [/\bain't\b/g, 'aint'],
  [/\by'all\b/g, 'you all'], [/\bwanna\b/g, 'want to'], [/\bgotta\b/g, 'got to'], [/\bgonna\b/g, 'going to'],
  [/\bi'ma\b/g, 'i am going to'], [/\bimma\b/g, 'i am going to'],
  [/n't\b/g, ' not'], [/'re\b/g, ' are'], [/'s\b/g, ' is'], [/'d\b/g, ' would'], [/'ll\b/g, ' will'],
  [/'t\b/g, ' not'], [/'ve\b/g, ' have'], [/'m\b/g, ' am'],
];
const TITLES: [RegExp, string][] = [
  [/\bmr\.?(?=\s)/g, 'mister '], [/\bmrs\.?(?=\s)/g, 'missus '], [/\bms\.?(?=\s)/g, 'miss '], [/\bdr\.?(?=\s)/g, 'doctor '],
  [/\bprof\.?(?=\s)/g, 'professor '], [/\bst\.?(?=\s)/g, 'saint '], [/\bjr\.?(?=\s|$)/g, 'junior '], [/\bsr\.?(?=\s|$)/g, 'senior '],
];
const HESITATIONS = /\b(hmm+|mm+|mhm|uh+|um+)\b/g;

const UNITS: Record<string, number> = {
  zero: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11,
  twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16, seventeen: 17, eighteen: 18, nineteen: 19,
};
const TENS: Record<string, number> = { twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90 };
const SCALES: Record<string, number> = { hundred: 100, thousand: 1000, million: 1e6, billion: 1e9 };

/** Replaces runs of number words with their value; "and" joins only inside a run. */
function numbersToDigits(words: string[]): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < words.length) {
    if (!(words[i] in UNITS || words[i] in TENS)) {
      out.push(words[i++]);
      continue;
    }
    let total = 0;
    let current = 0;
    let j = i;
    let last: 'unit' | 'ten' | 'scale' | null = null;
    for (; j < words.length; j++) {
      const w = words[j];
      if (w in UNITS && last !== 'unit' && !(last === 'ten' && UNITS[w] >= 10)) {
        current += UNITS[w];
        last = 'unit';
      } else if (w in TENS && last !== 'unit' && last !== 'ten') {
        current += TENS[w];
        last = 'ten';
      } else if (w in SCALES && last !== null && last !== 'scale') {
        if (SCALES[w] === 100) current *= 100;
        else {
          total += current * SCALES[w];
          current = 0;
        }
        last = 'scale';
      } else if (w === 'and' && last === 'scale' && j + 1 < words.length && (words[j + 1] in UNITS || words[j + 1] in TENS)) {
        continue;
      } else break;
    }
    out.push(String(total + current));
    i = j;
  }
  return out;
}

export function normalizeEnglish(text: string): string {
  let s = text.toLowerCase().replace(/[\u2018\u2019\u02bc]/g, "'");
  s = s.replace(/\[[^\]]*\]|\([^)]*\)/g, ' ');
  s = s.normalize('NFKD').replace(/\p{M}/gu, '');
  s = ` ${s} `;
  for (const [re, by] of TITLES) s = s.replace(re, by);
  for (const [re, by] of CONTRACTIONS) s = s.replace(re, by);
  s = s.replace(HESITATIONS, ' ');
  s = s.replace(/(\d),(\d{3})\b/g, '$1$2'); // 1,000 → 1000
  s = s.replace(/(\d)\.(\d)/g, '$1\u0000$2'); // keep decimal points
  s = s.replace(/[^\p{L}\p{N}\u0000]+/gu, ' ').replace(/\u0000/g, '.');
  s = s.replace(/(\d)\s*%/g, '$1 percent');
  return numbersToDigits(s.split(/\s+/).filter(Boolean)).join(' ');
}

/** Word-level edit distance: substitutions, deletions, insertions against the reference. */
export function wordErrors(reference: string[], hypothesis: string[]): { errors: number; words: number } {
  let prev = Array.from({ length: hypothesis.length + 1 }, (_, j) => j);
  for (let i = 1; i <= reference.length; i++) {
    const row = [i];
    for (let j = 1; j <= hypothesis.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (reference[i - 1] === hypothesis[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return { errors: prev[hypothesis.length], words: reference.length };
}

/** A text's words after normalisation. */
export const normalizedWords = (text: string): string[] => normalizeEnglish(text).split(' ').filter(Boolean);

/** Word errors of a hypothesis against its reference, after normalisation. */
export const textErrors = (reference: string, hypothesis: string): { errors: number; words: number } =>
  wordErrors(normalizedWords(reference), normalizedWords(hypothesis));

/** Corpus WER: all errors over all reference words, after normalisation. */
export function wer(pairs: { reference: string; hypothesis: string }[]): number {
  let errors = 0;
  let words = 0;
  for (const p of pairs) {
    const e = textErrors(p.reference, p.hypothesis);
    errors += e.errors;
    words += e.words;
  }
  return words ? errors / words : 0;
}
