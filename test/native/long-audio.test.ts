// Long audio (10, 30 and 50 minutes) through both families: the output covers
// the whole input, its times are in order and within the audio, and peak
// memory stays bounded. Parakeet cuts audio longer than its context into
// pieces (native/engines/audio_pieces.cpp): at pauses (`paused` input) or, in unbroken
// sound, with 2-s overlaps (`unbroken`); Whisper works through 30-s windows
// by itself. Each run is a child process (fixtures/long-audio-child.ts)
// that builds its input and reports its own peak RSS, so no run's memory, or
// this process's, is counted in another's.
//
// Every check is a function of the child's summary alone; the last test feeds
// each one a summary broken the way it must catch, and sees it fail. Breaking
// the child's output itself (segments cut short and reversed, maxRSS + 400 MiB)
// failed all three subtests of the Parakeet and Whisper 10-min cases alike. No
// timing is asserted (each run's time is reported with t.diagnostic); the
// timeouts only stop a hang.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { inspectModelFile } from '../../src/native';
import { microModel, PARAKEET_FIXTURE, ROOT } from '../../fixtures';
import { PAUSE_EVERY, PAUSE_LENGTH, RATE, type Input, type Job, type Summary } from '../../fixtures/long-audio-child';

const CHILD = path.join(ROOT, 'fixtures', 'long-audio-child.ts');
/** A hang guard only: the longest run (Whisper, 50 min) takes ~40 s on 2 cores. */
const CHILD_TIMEOUT = 300_000;
const TEST_TIMEOUT = CHILD_TIMEOUT + 60_000;
const MiB = 1024; // maxRSS is in KiB

type Family = 'parakeet' | 'whisper';

/** The longest Parakeet piece, s: n_audio_ctx mel frames less 100, of 10 ms (31 s for the fixture's 3200). */
let pieceSeconds = 0;
/** Whisper's window, s. */
const WINDOW = 30;
/** How near the end of the audio the last Parakeet segment must end, s. */
const END_SLACK = 2;
/** How far a cut at a pause may fall from the pause (a 0.6-s pause, windows of 0.2 s, tokens of 80 ms), s. */
const PAUSE_SLACK = 1;

/**
 * Peak RSS growth while transcribing: maxRSS after, less maxRSS with the
 * input built and the model loaded. Measured on 2 cores (threads: 1), in MiB:
 *
 *   Parakeet fixture  10 min 22 / 28, 30 min 57 / 20, 50 min 24 / 24 (paused / unbroken),
 *                     peak RSS 147..291 MiB of which the input is 37..183 MiB.
 *   Whisper micro     10 min 135, 30 min 270, 50 min 380; peak RSS 269, 480, 663 MiB.
 *
 * Parakeet: one bound for every length, as pieces never exceed the model's
 * context. Unchunked, parakeet.cpp builds one encoder graph over the whole
 * clip (parakeet_full_with_state: "audio too long ... using dynamic encoder
 * graph"); up to 8192 encoder frames (655 s at subsampling 8) its attention is
 * full, scores of n_time^2 per head, plus the (2 n_time - 1)-wide relative
 * position scores, padded and rolled. parakeet-cli (that same whole-clip path)
 * on the same `paused` input, peak RSS: 20 s (one pass within the context)
 * 18 MiB, 1 min 52, 3 min 319, 5 min 844, 10 min 3285, 10.8 min 3849 MiB; past
 * 8192 frames it switches to a local window of 128 frames and grows linearly:
 * 30 min 372, 50 min 610 MiB. So unchunked, the growth would be some 3.2 GiB
 * at 10 min, 350 MiB at 30 and 590 at 50: over this bound at every length
 * (the test 'unchunked, ... blows through the bound' measures the addon's one pass at 5 min),
 * where the pieces stay under 60 MiB.
 */
const PARAKEET_GROWTH_MIB = 150;
/**
 * Whisper: whisper.cpp computes the whole clip's mel up front, from a padded
 * copy of the samples (log_mel_spectrogram: samples_padded, 3.84 MB a minute,
 * then 80 mels, 1.92 MB a minute), so its memory grows linearly by design,
 * ~5.8 MB a minute; the fit of the measurements above is 77 MiB + 6.1 MiB a
 * minute. The bound allows twice whisper.cpp's own buffers a minute over a
 * generous base: anything quadratic, a leak of a few MB a window, or several
 * more full-length copies of the audio would blow through it.
 */
const whisperGrowthMiB = (minutes: number): number => 200 + 12 * minutes;

const growthBoundMiB = (family: Family, seconds: number): number =>
  family === 'parakeet' ? PARAKEET_GROWTH_MIB : whisperGrowthMiB(seconds / 60);

interface Case {
  family: Family;
  minutes: number;
  input: Input;
}

// Parakeet is cheap (a 50-min run transcribes in ~4 s): both cut paths at every
// length. Whisper's windows do not care where the pauses are; one input each.
const CASES: Case[] = [
  ...[10, 30, 50].flatMap((minutes) => (['paused', 'unbroken'] as const).map((input): Case => ({ family: 'parakeet', minutes, input }))),
  { family: 'whisper', minutes: 10, input: 'paused' },
  { family: 'whisper', minutes: 30, input: 'unbroken' },
  { family: 'whisper', minutes: 50, input: 'paused' },
];

async function modelFor(family: Family): Promise<string> {
  return family === 'parakeet' ? PARAKEET_FIXTURE : microModel();
}

/**
 * One thread: the decode graphs are tiny, and ggml's graph threads spin at a
 * barrier between nodes. With threads: 2 a 2-min Parakeet run took 2.3 s
 * instead of 0.14 s on idle cores, and a 1-min run 120 s instead of 0.17 s
 * while another process kept both cores busy. Whisper's micro model is only
 * ~1.6 times faster on two threads. maxTokens bounds random-weight decoding
 * (Whisper's windows never end otherwise); Parakeet gets no cap, which would
 * cut each piece's segment short.
 */
function optionsFor(family: Family): Job['options'] {
  return family === 'parakeet'
    ? { threads: 1, wordTimestamps: true }
    : { threads: 1, language: 'en', temperatureFallback: false, maxTokens: 4, wordTimestamps: true };
}

/** Runs the child on `job` and returns its summary; rejects with its stderr when it fails. */
function runChild(job: Job, timeout = CHILD_TIMEOUT): Promise<Summary> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(job)], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const line = stdout.split('\n').find((l) => l.startsWith('SUMMARY '));
      if (code !== 0 || !line) {
        reject(new Error(`the child exited with ${signal ?? code} and no summary:\n${stderr.slice(-4000)}`));
        return;
      }
      resolve(JSON.parse(line.slice('SUMMARY '.length)) as Summary);
    });
  });
}

const fmt = (x: number): string => x.toFixed(2);

// ---- The checks. Each throws an AssertionError; 'every check fails on a
// broken summary' below shows each one failing on what it must catch.

/**
 * Complete: the segments cover the audio.
 * Parakeet: cut into pieces (at least as many segments as a plan of pieces of
 * at most pieceSeconds needs, none longer than a piece, where an unchunked
 * run gives one segment over the whole clip); no stretch without a segment,
 * at the start, between segments or at the end, longer than a piece; the last
 * ends within END_SLACK of the end; with pauses, every cut falls at one.
 * Whisper: no stretch without a segment longer than a window, and the last
 * segment ends within the last 30-s window.
 */
function checkComplete(family: Family, input: Input, s: Summary): void {
  const segs = s.segments;
  assert.ok(segs.length > 0, 'no segments at all');
  const limit = family === 'parakeet' ? pieceSeconds : WINDOW;
  const holes = [segs[0].start, ...segs.slice(1).map((x, i) => x.start - segs[i].end)];
  const widest = Math.max(...holes);
  assert.ok(widest <= limit, `a stretch of ${fmt(widest)} s without a segment, more than ${limit} s`);
  const last = segs[segs.length - 1];
  // Whisper: within the last 30-s window. Parakeet: within a piece, then near the end (below).
  assert.ok(last.end >= s.seconds - limit, `the last segment ends at ${fmt(last.end)} s, more than ${limit} s before the end (${fmt(s.seconds)} s)`);
  if (family === 'whisper') return;
  const pieces = Math.ceil(s.seconds / pieceSeconds);
  assert.ok(segs.length >= pieces, `${segs.length} segments for ${fmt(s.seconds)} s: at least ${pieces} pieces of at most ${pieceSeconds} s expected`);
  const longest = Math.max(...segs.map((x) => x.end - x.start));
  assert.ok(longest <= pieceSeconds, `a segment of ${fmt(longest)} s: longer than a piece (${pieceSeconds} s), not cut`);
  assert.ok(last.end >= s.seconds - END_SLACK, `the last segment ends at ${fmt(last.end)} s, not near the end (${fmt(s.seconds)} s)`);
  if (input === 'paused') {
    // A cut at the pause at k * 20 s: the piece before ends before it, the next starts in it.
    segs.slice(1).forEach((x, i) => {
      const pause = Math.round(x.start / PAUSE_EVERY) * PAUSE_EVERY;
      const atPause = x.start >= pause - PAUSE_SLACK && x.start <= pause + PAUSE_LENGTH + PAUSE_SLACK && segs[i].end >= pause - PAUSE_SLACK;
      assert.ok(atPause, `segments ${i} and ${i + 1} meet at ${fmt(segs[i].end)}..${fmt(x.start)} s, not at a pause (every ${PAUSE_EVERY} s)`);
    });
  }
}

/**
 * Times: in order (each segment's start at or after the previous start, end at
 * or after start; words alike, across segments too) and within the audio.
 * Parakeet: within [0, duration]. Whisper: within [0, duration] for starts and
 * within the segment's own 30-s window [seek, seek + 30] for every time, with
 * windows in order: whisper.cpp pads the last window to 30 s, and random
 * weights put its end timestamps anywhere in it, up to 12.9 s past the end of
 * the audio measured here (src/stt/formats.ts normaliseTimes clamps them for
 * every response format).
 */
function checkTimes(family: Family, s: Summary): void {
  const eps = 1e-6;
  assert.ok(Math.abs(s.duration - s.seconds) < 0.01, `duration ${s.duration} s for ${s.seconds} s of audio`);
  let prevStart = -Infinity;
  let prevWordStart = -Infinity;
  let prevSeek = 0;
  s.segments.forEach((x, i) => {
    const where = `segment ${i} [${x.start}, ${x.end}]`;
    assert.ok(x.start >= 0 && x.start <= s.duration, `${where} starts outside [0, ${s.duration}]`);
    assert.ok(x.start >= prevStart, `${where} starts before the previous one (${prevStart} s)`);
    assert.ok(x.end >= x.start, `${where} ends before it starts`);
    const [lo, hi] = family === 'parakeet' ? [0, s.duration] : [x.seek / 100, x.seek / 100 + WINDOW];
    assert.ok(x.start >= lo - eps && x.end <= hi + eps, `${where} lies outside [${lo}, ${hi}]`);
    if (family === 'whisper') assert.ok(x.seek >= prevSeek, `${where}: its window (seek ${x.seek}) is before the previous one (${prevSeek})`);
    for (const [ws, we] of x.words) {
      assert.ok(ws >= prevWordStart, `${where}: a word at ${ws} s starts before the previous word (${prevWordStart} s)`);
      assert.ok(we >= ws, `${where}: a word [${ws}, ${we}] ends before it starts`);
      assert.ok(ws >= lo - eps && we <= hi + eps, `${where}: a word [${ws}, ${we}] lies outside [${lo}, ${hi}]`);
      prevWordStart = ws;
    }
    prevStart = x.start;
    prevSeek = x.seek;
  });
}

/** Parakeet: no two segments overlap in time (pieces keep disjoint shares of the audio). */
function checkNoOverlap(s: Summary): void {
  s.segments.slice(1).forEach((x, i) => {
    assert.ok(x.start >= s.segments[i].end, `segment ${i + 1} starts at ${x.start} s, before segment ${i} ends (${s.segments[i].end} s)`);
  });
}

function checkMemory(family: Family, s: Summary): void {
  const growth = (s.maxRSS - s.rssBeforeTranscribe) / MiB;
  const bound = growthBoundMiB(family, s.seconds);
  assert.ok(growth <= bound, `peak RSS grew by ${growth.toFixed(0)} MiB while transcribing ${fmt(s.seconds / 60)} min, over the bound of ${bound} MiB`);
}

before(async () => {
  const { hparams } = await inspectModelFile(PARAKEET_FIXTURE);
  // native/engines/parakeet_engine.cpp: max_samples = (n_audio_ctx - 100) * 160 samples.
  pieceSeconds = ((hparams.n_audio_ctx - 100) * 160) / RATE;
  assert.equal(pieceSeconds, 31, 'the fixture has n_audio_ctx 3200');
});

for (const c of CASES) {
  const name = `${c.family} ${c.minutes} min, ${c.input === 'paused' ? `a pause every ${PAUSE_EVERY} s` : 'unbroken sound'}`;
  test(`${name}: complete, times in order within the audio, peak RSS bounded`, { timeout: TEST_TIMEOUT }, async (t) => {
    const seconds = c.minutes * 60;
    const s = await runChild({ model: await modelFor(c.family), seconds, input: c.input, options: optionsFor(c.family) });
    const growth = (s.maxRSS - s.rssBeforeTranscribe) / MiB;
    t.diagnostic(`transcribed in ${s.transcribeSeconds.toFixed(1)} s; ${s.segments.length} segments, ` +
      `${s.segments.reduce((n, x) => n + x.words.length, 0)} words, last ends at ${fmt(s.segments.at(-1)?.end ?? 0)} s of ${fmt(s.seconds)}; ` +
      `peak RSS ${(s.maxRSS / MiB).toFixed(0)} MiB, ${(s.rssBeforeTranscribe / MiB).toFixed(0)} before transcribing, ` +
      `growth ${growth.toFixed(0)} MiB (bound ${growthBoundMiB(c.family, seconds)})`);
    assert.equal(s.seconds, seconds);
    await t.test('complete', () => checkComplete(c.family, c.input, s));
    await t.test('times in order and within the audio', () => {
      checkTimes(c.family, s);
      if (c.family === 'parakeet') checkNoOverlap(s);
    });
    await t.test(`peak RSS growth within ${growthBoundMiB(c.family, seconds)} MiB`, () => checkMemory(c.family, s));
  });
}

test('Parakeet on ~100 s of real speech: cut into pieces, segments in order and not overlapping', { timeout: TEST_TIMEOUT }, async (t) => {
  // Random weights say nothing meaningful, so whether the words at the seams are
  // kept once is not checkable here; that the audio was cut, and the pieces'
  // segments meet without overlapping, is.
  const s = await runChild({ model: PARAKEET_FIXTURE, seconds: 100, input: 'speech', options: optionsFor('parakeet') });
  t.diagnostic(`${fmt(s.seconds)} s of speech: segments ${s.segments.map((x) => `${fmt(x.start)}..${fmt(x.end)}`).join(', ')}; ` +
    `peak RSS ${(s.maxRSS / MiB).toFixed(0)} MiB`);
  const pieces = Math.ceil(s.seconds / pieceSeconds);
  assert.ok(s.segments.length >= pieces, `${s.segments.length} segments for ${fmt(s.seconds)} s of speech, at least ${pieces} pieces expected`);
  checkComplete('parakeet', 'speech', s);
  checkTimes('parakeet', s);
  checkNoOverlap(s);
  checkMemory('parakeet', s);
});

test('unchunked, the same audio blows through the Parakeet bound: the addon in one pass (pieceSeconds past the clip) at 5 min', { timeout: TEST_TIMEOUT }, async (t) => {
  const seconds = 300;
  const job = (pieceSecondsOption: number): Job => ({
    model: PARAKEET_FIXTURE, seconds, input: 'paused', options: { ...optionsFor('parakeet'), pieceSeconds: pieceSecondsOption },
  });
  const whole = await runChild(job(seconds + 1));
  const pieces = await runChild(job(0));
  const growth = (s: Summary) => (s.maxRSS - s.rssBeforeTranscribe) / MiB;
  t.diagnostic(`5 min, growth: one pass ${growth(whole).toFixed(0)} MiB (${whole.segments.length} segment), pieces ${growth(pieces).toFixed(0)} MiB`);
  assert.equal(whole.segments.length, 1, 'one pass gives one segment');
  assert.ok(growth(whole) > PARAKEET_GROWTH_MIB, `one pass over 5 min grew by only ${growth(whole).toFixed(0)} MiB`);
  checkMemory('parakeet', pieces);
});

// ---- Each check fails on what it must catch: good summaries pass, and each
// breakage of one (what a lost tail, an unchunked run, a reordering, a time
// out of range, an overlap or a memory blow-up would report) fails its check.

function parakeetSummary(): Summary {
  // 100 s, pauses every 20 s: pieces cut at 20.3, 40.3, 60.3, 80.3 s.
  const cuts = [0, 20.3, 40.3, 60.3, 80.3, 100];
  return {
    maxRSS: 150 * MiB, rssBeforeTranscribe: 120 * MiB, seconds: 100, duration: 100, transcribeSeconds: 1,
    segments: cuts.slice(0, -1).map((start, i) => ({
      start, end: cuts[i + 1] - 0.1, seek: 0, tokens: 100,
      words: [[start, start + 5], [start + 5, cuts[i + 1] - 0.1]],
    })),
  };
}

function whisperSummary(): Summary {
  // 100 s in windows at 0, 29, 58 and 87 s; the last ends past the audio, within its window.
  const windows = [0, 29, 58, 87];
  return {
    maxRSS: 300 * MiB, rssBeforeTranscribe: 150 * MiB, seconds: 100, duration: 100, transcribeSeconds: 1,
    segments: windows.map((w, i) => ({
      start: w + 0.5, end: i === 3 ? 112 : windows[i + 1], seek: w * 100, tokens: 4,
      words: [[w + 0.5, w + 10]],
    })),
  };
}

test('every check fails on a broken summary', () => {
  const p = parakeetSummary;
  const w = whisperSummary;
  const all = (family: Family, s: Summary, input: Input = 'paused'): void => {
    checkComplete(family, input, s);
    checkTimes(family, s);
    if (family === 'parakeet') checkNoOverlap(s);
    checkMemory(family, s);
  };
  all('parakeet', p());
  all('whisper', w());
  all('whisper', w(), 'unbroken');

  const broken = (make: () => Summary, edit: (s: Summary) => void): Summary => {
    const s = make();
    edit(s);
    return s;
  };
  const fails: [string, Family, Summary, RegExp][] = [
    // checkComplete
    ['tail lost', 'parakeet', broken(p, (s) => s.segments.splice(3)), /more than 31 s before the end/],
    ['end not reached', 'parakeet', broken(p, (s) => (s.segments[4].end = 97)), /not near the end/],
    ['unchunked: one segment', 'parakeet', broken(p, (s) => (s.segments = [{ start: 0, end: 99.9, seek: 0, tokens: 1000, words: [] }])), /pieces of at most/],
    ['a segment longer than a piece', 'parakeet', broken(p, (s) => (s.segments[1].start = 5, s.segments[0].end = 5)), /longer than a piece/],
    ['a hole longer than a piece', 'parakeet', broken(p, (s) => s.segments.splice(1, 2)), /without a segment/],
    ['a cut away from a pause', 'parakeet', broken(p, (s) => (s.segments[2].start = 45, s.segments[2].words[0][0] = 45)), /not at a pause/],
    ['nothing', 'parakeet', broken(p, (s) => (s.segments = [])), /no segments/],
    ['whisper: the last windows missing', 'whisper', broken(w, (s) => s.segments.splice(2)), /more than 30 s before the end/],
    ['whisper: a hole longer than a window', 'whisper', broken(w, (s) => s.segments.splice(1, 2)), /without a segment/],
  ];
  for (const [what, family, s, message] of fails) {
    assert.throws(() => checkComplete(family, 'paused', s), message, `checkComplete misses: ${what}`);
  }

  const timeFails: [string, Family, Summary, RegExp][] = [
    ['segments out of order', 'parakeet', broken(p, (s) => ([s.segments[1], s.segments[2]] = [s.segments[2], s.segments[1]])), /starts before the previous/],
    ['end before start', 'parakeet', broken(p, (s) => (s.segments[2].end = s.segments[2].start - 1)), /ends before it starts/],
    ['a negative start', 'parakeet', broken(p, (s) => (s.segments[0].start = -0.5)), /outside/],
    ['past the end of the audio', 'parakeet', broken(p, (s) => (s.segments[4].end = 100.5)), /outside \[0, 100\]/],
    ['words out of order', 'parakeet', broken(p, (s) => s.segments[3].words.reverse()), /before the previous word/],
    ['a word ending before it starts', 'parakeet', broken(p, (s) => (s.segments[3].words[1] = [70, 69])), /ends before it starts/],
    ['a word past the end', 'parakeet', broken(p, (s) => (s.segments[4].words[1][1] = 101)), /a word .* outside/],
    ['a wrong duration', 'parakeet', broken(p, (s) => (s.duration = 50)), /duration 50/],
    ['whisper: an end past its window', 'whisper', broken(w, (s) => (s.segments[3].end = 117.5)), /outside \[87, 117\]/],
    ['whisper: a start before its window', 'whisper', broken(w, (s) => (s.segments[2].seek = 6000)), /outside \[60, 90\]/],
    ['whisper: a start past the audio', 'whisper', broken(w, (s) => (s.segments[3].start = 100.5, s.segments[3].words = [])), /starts outside/],
  ];
  for (const [what, family, s, message] of timeFails) {
    assert.throws(() => checkTimes(family, s), message, `checkTimes misses: ${what}`);
  }
  assert.throws(() => checkTimes('whisper', broken(w, (s) => (s.segments[2].seek = 2800, s.segments[2].start = 57, s.segments[2].end = 58, s.segments[2].words = []))),
    /before the previous one \(2900\)/, 'checkTimes misses: whisper windows out of order');

  assert.throws(() => checkNoOverlap(broken(p, (s) => (s.segments[1].start = 20, s.segments[0].end = 20.5))), /before segment 0 ends/,
    'checkNoOverlap misses an overlap');

  assert.throws(() => checkMemory('parakeet', broken(p, (s) => (s.maxRSS = s.rssBeforeTranscribe + 600 * MiB))), /over the bound of 150 MiB/,
    'checkMemory misses an unchunked run\'s growth');
  assert.throws(() => checkMemory('whisper', broken(w, (s) => (s.maxRSS = s.rssBeforeTranscribe + 250 * MiB))), /over the bound/,
    'checkMemory misses whisper growing past its bound');
});
