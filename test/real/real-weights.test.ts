// Real Whisper base weights end to end: a real transcription through the
// server, token parity with whisper.cpp's whisper-cli, and word error rate on
// a fixed subset of ../shared/audio under a ceiling that a broken resampler,
// mel front end or converter would exceed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { transcribe, wavBlob } from '../helpers/server';
import { realModelPath, AUDIO_DIR, whisperCli, serverWindowArgs, speechClip, textTokens, evalClips, hifittsClips, joinClips } from '../../fixtures';
import { startRealServer } from '../helpers/real-models';
import { runCheck } from '../helpers/native-check';
import { normalizeEnglish, wer } from '../../scripts/lib/english-normalizer';
import { decodeWav, loadModel } from '../../src/native';

const JFK_TEXT = 'And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.';
const form = (file: string, extra: Record<string, string> = {}) => ({ file: wavBlob(readFileSync(file)), language: 'en', ...extra });

for (const name of ['base-f16', 'base-q8_0'] as const) {
  test(`${name}: jfk.wav through the server gives the sentence`, async () => {
    const server = await startRealServer(name);
    try {
      const res = await transcribe(server, form(path.join(AUDIO_DIR, 'jfk.wav')), server.auth);
      const body = await res.json();
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.equal(normalizeEnglish(body.text), normalizeEnglish(JFK_TEXT), body.text);
    } finally {
      await server.close();
    }
  });
}

test('parity on real weights: the server\'s tokens are whisper-cli\'s on three clips', async () => {
  const model = realModelPath('base-q8_0');
  const server = await startRealServer('base-q8_0');
  try {
    const clips = [
      path.join(AUDIO_DIR, 'jfk.wav'),
      path.join(AUDIO_DIR, 'pocketsphinx_testdata', 'librivox', 'sense_and_sensibility_01_austen_64kb-0870.wav'),
      evalClips().find((c) => c.set === 'hifitts_6097' && c.seconds > 5)!.file,
    ];
    for (const clip of clips) {
      const res = await transcribe(server, form(clip, { response_format: 'verbose_json' }), server.auth);
      const body = await res.json();
      assert.equal(res.status, 200, JSON.stringify(body));
      const ours = (body.segments as { tokens: number[] }[]).flatMap((s) => textTokens(s.tokens));
      const cli = await whisperCli(model, clip, 2, serverWindowArgs(clip));
      assert.ok(cli.tokens.length > 5, 'the reference decoded real text');
      assert.deepEqual(ours, cli.tokens, path.basename(clip));
      assert.equal(body.text.trim(), cli.text.trim(), path.basename(clip));
    }
  } finally {
    await server.close();
  }
});

test("parity whatever came before: clips given three encoder windows in turn each get whisper-cli's tokens for that clip alone", { timeout: 600_000 }, async () => {
  // whisper.cpp's flash attention reads its K/V caches padded to 256
  // positions: a full 30-s window (1500, padded to 1536) after a shorter one
  // read rows another layout left behind, and language detection encoded in
  // the previous request's window (cmake/whisper-patches.cmake).
  const model = realModelPath('base-q8_0');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'stt-windows-'));
  const server = await startRealServer('base-q8_0', { env: { STT_ENCODER_WINDOW: 'tail' } });
  const windowArgs = (file: string) => serverWindowArgs(file, 'tail');
  try {
    const files = { long: path.join(dir, 'long.wav'), mid: path.join(dir, 'mid.wav'), short: path.join(AUDIO_DIR, 'jfk.wav') };
    writeFileSync(files.long, speechClip(45));
    writeFileSync(files.mid, speechClip(20));
    assert.deepEqual([files.long, files.mid, files.short].map((f) => windowArgs(f)[1]), ['0', '1280', '1024'], 'three windows');
    const expected: Record<string, number[]> = {};
    for (const [name, file] of Object.entries(files)) expected[name] = (await whisperCli(model, file, 2, windowArgs(file))).tokens;
    const detected = (await whisperCli(model, files.short, 2, ['-l', 'auto', ...windowArgs(files.short)])).tokens;
    const ask = async (file: string, fields: Record<string, string>) => {
      const res = await transcribe(server, { file: wavBlob(readFileSync(file)), response_format: 'verbose_json', ...fields }, server.auth);
      const body = await res.json();
      assert.equal(res.status, 200, JSON.stringify(body));
      return (body.segments as { tokens: number[] }[]).flatMap((s) => textTokens(s.tokens));
    };
    for (const name of ['long', 'short', 'mid', 'long', 'short', 'long'] as const) {
      assert.deepEqual(await ask(files[name], { language: 'en' }), expected[name], name);
    }
    assert.deepEqual(await ask(files.short, {}), detected, 'no language: detected, then decoded, as a fresh whisper-cli -l auto does');
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('without a language the first window is encoded once (detect-encode-reuse), and decodes as with the language given', { timeout: 600_000 }, async () => {
  // whisper.cpp's language detection encodes the first 30 s; the patch lets the
  // first window take that encoding when it is the same window (cmake/whisper-patches.cmake).
  const model = realModelPath('base-q8_0');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'stt-detect-'));
  try {
    const short = path.join(AUDIO_DIR, 'jfk.wav');
    const long = path.join(dir, 'long.wav');
    writeFileSync(long, speechClip(45));
    // whisper-cli (the same patched library) counts its encoder runs: the detection's and one per window, less the one reused.
    for (const clip of [short, long]) {
      const given = await whisperCli(model, clip, 2, ['-ac', '0']);
      const auto = await whisperCli(model, clip, 2, ['-ac', '0', '-l', 'auto']);
      assert.ok(given.encodeRuns >= (clip === long ? 2 : 1), `${path.basename(clip)}: one encoder run per window (${given.encodeRuns})`);
      assert.equal(auto.encodeRuns, given.encodeRuns, `${path.basename(clip)}: detection's encoding is the first window's`);
      assert.ok(given.tokens.length > 5, 'real text was decoded');
      assert.deepEqual(auto.tokens, given.tokens, path.basename(clip));
    }
    // In a shorter window the first window is not the detection's (the full one): both are encoded.
    const tail = await whisperCli(model, short, 2, [...serverWindowArgs(short, 'tail'), '-l', 'auto']);
    assert.equal(tail.encodeRuns, 2, 'the tail window encodes its own first window');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // Through the addon on one pooled state: the same tokens and log-probabilities without a language, and
  // no run takes an encoding another run left. A run on 50 ms detects its language, then stops before any
  // window (whisper.cpp decodes nothing under 100 ms) with the detection's encoding in the state.
  const loaded = await loadModel(model);
  try {
    const jfk = (await decodeWav(readFileSync(path.join(AUDIO_DIR, 'jfk.wav')))).pcm;
    const decode = async (pcm: Float32Array, language?: string) => {
      const result = await loaded.transcribe(pcm, { threads: 2, language, beamSize: 1, temperatureFallback: false, tokenLogprobs: true });
      return { language: result.language, tokens: result.segments.flatMap((s) => s.tokens), logprobs: result.segments.flatMap((s) => s.tokenLogprobs!.map((t) => t.logprob)) };
    };
    const given = await decode(jfk, 'en');
    assert.equal(given.language, 'en');
    assert.deepEqual(await decode(jfk), given, 'no language: detected, and decoded as with it given');
    assert.deepEqual((await decode(jfk.slice(16000, 16800))).tokens, [], '50 ms: detected, nothing decoded');
    assert.deepEqual(await decode(jfk, 'en'), given, 'after a run that stopped with the detection\'s encoding in the state');
    assert.deepEqual(await decode(jfk), given, 'the same, without a language');
  } finally {
    await loaded.dispose();
  }
});

test('parity with beam search: with STT_BEAM_SIZE=5 the server\'s tokens are whisper-cli\'s with -bs 5', async () => {
  const model = realModelPath('base-q8_0');
  // In the tail window, where greedy and beam 5 are known to differ on two of these clips.
  const server = await startRealServer('base-q8_0', { env: { STT_BEAM_SIZE: '5', STT_ENCODER_WINDOW: 'tail' } });
  try {
    // Whether greedy decoding differs on a given clip changes with the ggml kernels
    // (jfk.wav did before llamafile's, not after) and with how beams are chosen
    // (beam-top-k): the guard below is over all three clips, two of which differ now.
    let greedyDiffers = 0;
    const hifitts = (id: string) => evalClips().find((c) => c.id === id)!.file;
    for (const clip of [path.join(AUDIO_DIR, 'jfk.wav'), hifitts('roots_04_morris_0057'), hifitts('astralplane_03_leadbeater_0639')]) {
      const res = await transcribe(server, form(clip, { response_format: 'verbose_json' }), server.auth);
      const body = await res.json();
      assert.equal(res.status, 200, JSON.stringify(body));
      const ours = (body.segments as { tokens: number[] }[]).flatMap((s) => textTokens(s.tokens));
      const cli = await whisperCli(model, clip, 2, ['-bs', '5', ...serverWindowArgs(clip, 'tail')]);
      assert.ok(cli.tokens.length > 5, 'the reference decoded real text');
      assert.deepEqual(ours, cli.tokens, path.basename(clip));
      const greedy = (await whisperCli(model, clip, 2, serverWindowArgs(clip, 'tail'))).tokens;
      if (JSON.stringify(greedy) !== JSON.stringify(cli.tokens)) greedyDiffers++;
    }
    assert.ok(greedyDiffers > 0, 'greedy decodes at least one clip otherwise: the comparison tests the beams');
  } finally {
    await server.close();
  }
});

test('beam search at temperature 0 takes the most likely candidates: a clip decodes alike whatever the state decoded before', async () => {
  // whisper.cpp drew a beam's candidates at random from a generator each state
  // keeps, so a pooled state's history changed beam-5 answers; the beam-top-k
  // patch (cmake/whisper-patches.cmake) takes the top k.
  const model = await loadModel(realModelPath('base-q8_0'));
  try {
    const clips = evalClips().filter((c) => c.set === 'hifitts_6097' && c.seconds > 3).slice(0, 3).map((c) => decodeWav(readFileSync(c.file)));
    const pcms = (await Promise.all(clips)).map((d) => d.pcm);
    const decode = async (pcm: Float32Array) => (await model.transcribe(pcm, { threads: 2, language: 'en', beamSize: 5, temperatureFallback: false })).segments.flatMap((s) => textTokens(s.tokens));
    const first = [];
    for (const pcm of pcms) first.push(await decode(pcm));
    for (const [i, pcm] of [...pcms.entries()].reverse()) assert.deepEqual(await decode(pcm), first[i], `clip ${i} after the others`);
    assert.ok(first.every((t) => t.length > 5), 'real text was decoded');
  } finally {
    await model.dispose();
  }
});

test('beam search at temperature 0 keeps beam 5 wide: the first step\'s beams differ, and a beam that ends is replaced (beam-finished-hypotheses)', async () => {
  // Upstream whisper.cpp gave all five beams the most likely first token and
  // let the beam narrow as beams ended; OpenAI's and CTranslate2's beam
  // searches keep it five wide until five have ended. stt-beam-finished counts
  // the live beams step by step through the logits filter.
  const stdout = await runCheck('stt-beam-finished', [realModelPath('base-q8_0'), path.join(AUDIO_DIR, 'jfk.wav')]);
  assert.match(stdout, /5 different first tokens/);
  assert.match(stdout, /beams wide again/);
  assert.match(stdout, /all hold/);
});

test('the same tokens and log-probabilities at 1 to 4 threads, and with fewer decoder threads, greedy and beam 5, full window', async () => {
  // shared-q0-tiles (cmake/whisper-patches.cmake): the encoder's and the
  // decoder's q8_0 products (beam 5's, and the prompt's pass in greedy) hand
  // out chunks of tiles from a counter; a chunk done twice or never would
  // change the numbers with the thread count. fa-fixed-key-chunks: a greedy
  // step's cross-attention over the full window's 1,500 positions splits its
  // keys into a fixed number of chunks, not one per thread. decoder-threads:
  // the server decodes with one thread when another process holds a core.
  const model = await loadModel(realModelPath('base-q8_0'));
  try {
    const short: ReturnType<typeof hifittsClips> = [];
    for (const c of hifittsClips().filter((x) => x.seconds < 2.4)) if (short.reduce((a, x) => a + x.seconds, 0) + c.seconds <= 4.8) short.push(c);
    const clip = joinClips(short);
    const decode = async (threads: number, beamSize: number, decoderThreads?: number) => {
      const result = await model.transcribe(clip.pcm, { threads, decoderThreads, language: 'en', beamSize, temperatureFallback: false, tokenLogprobs: true });
      return { text: result.segments.map((s) => s.text).join(''), logprobs: result.segments.flatMap((s) => s.tokenLogprobs!.map((t) => t.logprob)) };
    };
    for (const beamSize of [1, 5]) {
      const one = await decode(1, beamSize);
      assert.ok(wer([{ reference: clip.reference, hypothesis: one.text }]) < 0.3, `real text (beam ${beamSize}): ${one.text}`);
      for (const threads of [2, 3, 4]) assert.deepEqual(await decode(threads, beamSize), one, `beam ${beamSize}, ${threads} threads`);
      assert.deepEqual(await decode(2, beamSize, 1), one, `beam ${beamSize}, 2 threads, the decoder's 1`);
    }
  } finally {
    await model.dispose();
  }
});

// Measured: 7.8 % on the full set (benchmarks/results/eval-2026-11-23.md) and 10.9 % on this
// subset (about 280 words; greedy, no fallback, as the test server decodes). 15 % allows about a
// dozen more errors for decoding differences across CPUs and ggml kernels; a broken resampler, mel
// front end or converter gives far more (random weights: over 100 %; a 2x resampling error turns
// speech into noise).
const WER_CEILING = 0.15;

test(`WER of base q8_0 through the server on every 4th clip stays under ${WER_CEILING * 100} %`, async (t) => {
  const clips = evalClips().filter((_, i) => i % 4 === 0);
  const server = await startRealServer('base-q8_0');
  try {
    const pairs = [];
    for (const clip of clips) {
      const res = await transcribe(server, form(clip.file), server.auth);
      const body = await res.json();
      assert.equal(res.status, 200, JSON.stringify(body));
      pairs.push({ reference: clip.reference, hypothesis: body.text as string });
    }
    const measured = wer(pairs);
    t.diagnostic(`WER ${(measured * 100).toFixed(2)} % on ${clips.length} clips`);
    assert.ok(measured < WER_CEILING, `WER ${(measured * 100).toFixed(2)} % on ${clips.length} clips`);
    assert.ok(pairs.some((p) => normalizeEnglish(p.hypothesis) === normalizeEnglish(p.reference)), 'some clips are transcribed exactly');
  } finally {
    await server.close();
  }
});
