import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSync } from 'subtitle';
import { compressionRatio, render, normaliseTimes, subtitleCues, type OutputSegment, type OutputTranscription } from '../../src/stt/formats';

// webvtt-parser ships no types: the one call used here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { WebVTTParser } = require('webvtt-parser') as { WebVTTParser: new () => { parse(input: string, mode: string): { cues: { startTime: number; endTime: number; text: string }[]; errors: { message: string }[] } } };

/** Both subtitle formats checked by parsers from the npm registry, not by our own expectations. */
function validated(tr: OutputTranscription): { srt: { start: number; end: number; text: string }[]; vtt: { start: number; end: number; text: string }[] } {
  const vttOut = new WebVTTParser().parse(render(tr, 'vtt', opts).body as string, 'metadata');
  assert.deepEqual(vttOut.errors, [], 'webvtt-parser finds no error');
  const srtNodes = parseSync(render(tr, 'srt', opts).body as string);
  const srt = srtNodes.map((n) => {
    assert.equal(n.type, 'cue');
    const c = n.data as { start: number; end: number; text: string };
    assert.ok(c.end > c.start, `an SRT cue ends after it starts: ${JSON.stringify(c)}`);
    return { start: c.start / 1000, end: c.end / 1000, text: c.text };
  });
  const vtt = vttOut.cues.map((c) => ({ start: c.startTime, end: c.endTime, text: c.text }));
  assert.deepEqual(vtt, srt, 'both formats carry the same cues');
  return { srt, vtt };
}
const seg = (start: number, end: number, text: string, extra: Partial<OutputSegment> = {}): OutputSegment =>
  ({ start, end, text, tokens: [], avgLogprob: 0, noSpeechProb: 0, ...extra });

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

test('srt and vtt: every cue ends with a blank line, as Whisper and OpenAI write them', () => {
  assert.equal(render(t, 'srt', opts).body, '1\n00:00:00,000 --> 00:00:02,500\nHello world.\n\n2\n00:00:02,500 --> 00:00:05,000\nAgain.\n\n');
  assert.equal(render(t, 'vtt', opts).body, 'WEBVTT\n\n00:00:00.000 --> 00:00:02.500\nHello world.\n\n00:00:02.500 --> 00:00:05.000\nAgain.\n\n');
  assert.deepEqual(validated(t).srt, [{ start: 0, end: 2.5, text: 'Hello world.' }, { start: 2.5, end: 5, text: 'Again.' }]);
});

test('subtitles have no empty or zero-length cue: such a cue joins its neighbour, a lone one is widened', () => {
  const tr = (duration: number, ...segments: OutputSegment[]): OutputTranscription => ({ text: '', language: 'en', duration, segments });
  // A segment clamped to the end of the audio (29.98 --> 29.98) joins the cue before it.
  assert.deepEqual(validated(tr(29.98, seg(27.5, 29.98, ' Last words.'), seg(29.98, 31, ' Cut.'))).srt,
    [{ start: 27.5, end: 29.98, text: 'Last words. Cut.' }]);
  // After a gap, the joined cue reaches to where the zero-length one was.
  assert.deepEqual(validated(tr(5, seg(0, 2, ' A'), seg(3, 3, ' B'))).srt, [{ start: 0, end: 3, text: 'A B' }]);
  // The first cue has no length: it joins the next one.
  assert.deepEqual(validated(tr(5, seg(0, 0, ' A'), seg(0, 2, ' B'), seg(2, 3, '  '))).srt, [{ start: 0, end: 2, text: 'A B' }]);
  // Nothing to join: a millisecond before the end.
  assert.deepEqual(validated(tr(5, seg(6, 7, ' Tail.'))).srt, [{ start: 4.999, end: 5, text: 'Tail.' }]);
  assert.deepEqual(subtitleCues(tr(5, seg(0, 1, ' '))), [], 'a segment without text gives no cue');
  assert.equal(render(tr(5, seg(0, 1, ' ')), 'vtt', opts).body, 'WEBVTT\n\n');
});

test("compression_ratio is Whisper's: UTF-8 bytes over their zlib.compress() length", () => {
  // Expected values from Whisper's own formula in Python 3.11 (zlib 1.2.13):
  // round(len(b) / len(zlib.compress(b)), 3) with b = text.encode('utf-8').
  const expected: [string, number][] = [
    [' And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.', 1.367],
    [' Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you.', 4.0],
    [' Grüße aus Köln, naïve café — déjà vu.', 0.81],
    [' Hello world. Again.', 0.714],
  ];
  for (const [text, ratio] of expected) assert.equal(compressionRatio(text), ratio, text);
  assert.equal(compressionRatio(''), 0);
});

test("verbose_json: each segment's seek, tokens with their timestamps and temperature, and its window's compression_ratio", () => {
  const windows: OutputTranscription = {
    text: '', language: 'en', duration: 40,
    segments: [
      seg(0, 3, ' Hello world.', { seek: 0, temperature: 0, tokens: [2425, 1002], tokensWithTimestamps: [50364, 2425, 1002, 50514] }),
      seg(3, 27.8, ' Again.', { seek: 0, temperature: 0, tokens: [3764], tokensWithTimestamps: [50514, 3764, 51754] }),
      seg(27.8, 33, ' Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you.', { seek: 2780, temperature: 0.4, tokens: [1], tokensWithTimestamps: [50364, 1, 50624] }),
    ],
  };
  const body = render(windows, 'verbose_json', opts).body as { segments: Record<string, unknown>[] };
  // Whisper's ratio of each window's whole text, stripped ('Hello world. Again.' and 'Thank you. ...'),
  // from Python's zlib as in the test above.
  assert.deepEqual(body.segments.map((x) => [x.seek, x.temperature, x.tokens, x.compression_ratio]), [
    [0, 0, [50364, 2425, 1002, 50514], 0.704],
    [0, 0, [50514, 3764, 51754], 0.704],
    [2780, 0.4, [50364, 1, 50624], 3.955],
  ]);
  // A provider's segment without these fields: seek 0, the requested temperature, its own tokens and text.
  const cloud = render({ ...windows, segments: [seg(0, 3, ' Hello world. Again.', { tokens: [7] })] }, 'verbose_json', { ...opts, temperature: 0.2 }).body as { segments: Record<string, unknown>[] };
  assert.deepEqual(cloud.segments.map((x) => [x.seek, x.temperature, x.tokens, x.compression_ratio]), [[0, 0.2, [7], 0.704]]);
});

test('json, text and verbose_json', () => {
  assert.deepEqual(render(t, 'json', opts), { body: { text: 'Hello world. Again.', usage: { type: 'duration', seconds: 5 } }, type: 'application/json' });
  // OpenAI's usage for whisper-1: whole seconds of audio, rounded up.
  assert.deepEqual((render({ ...t, duration: 4.02 }, 'json', opts).body as { usage: unknown }).usage, { type: 'duration', seconds: 5 });
  assert.deepEqual(render(t, 'text', opts), { body: 'Hello world. Again.\n', type: 'text/plain; charset=utf-8' });
  assert.equal(render(t, 'srt', opts).type, 'application/x-subrip; charset=utf-8');
  assert.equal(render(t, 'vtt', opts).type, 'text/vtt; charset=utf-8');
  const precise: OutputTranscription = {
    ...t,
    segments: [{ ...t.segments[0], avgLogprob: -0.123456, noSpeechProb: 0.0123456 }, t.segments[1]],
  };
  const v = render(precise, 'verbose_json', { ...opts, granularities: new Set(['segment', 'word']) });
  assert.equal(v.type, 'application/json');
  // Segments without a seek are each their own window for compression_ratio.
  assert.deepEqual(v.body, {
    task: 'transcribe',
    language: 'english',
    duration: 5,
    text: 'Hello world. Again.',
    segments: [
      { id: 0, seek: 0, start: 0, end: 2.5, text: ' Hello world.', tokens: [1, 2], temperature: 0, avg_logprob: -0.1235, compression_ratio: 0.6, no_speech_prob: 0.0123 },
      { id: 1, seek: 0, start: 2.5, end: 5, text: ' Again.', tokens: [3], temperature: 0, avg_logprob: -0.1, compression_ratio: 0.429, no_speech_prob: 0.02 },
    ],
    words: [{ word: 'Hello', start: 0, end: 1 }, { word: 'world.', start: 1, end: 2.5 }],
    usage: { type: 'duration', seconds: 5 },
  });
  // Each granularity only when asked for: words alone carry no segments, segments alone no words.
  const wordsOnly = render(t, 'verbose_json', { ...opts, granularities: new Set(['word']) }).body as Record<string, unknown>;
  assert.deepEqual(Object.keys(wordsOnly), ['task', 'language', 'duration', 'text', 'words', 'usage']);
  const segmentsOnly = render(t, 'verbose_json', opts).body as Record<string, unknown>;
  assert.deepEqual(Object.keys(segmentsOnly), ['task', 'language', 'duration', 'text', 'segments', 'usage']);
});
