// Loading, parity with whisper.cpp's own tools, concurrency, cancellation and
// lifetime of the native Model.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import {
  createJobControl, decodeWav, enginesFreedOnJsThread, graphHooks, liveObjects, whisperPatches, loadModel, ModelLoadError, TranscriptionError, WavError,
  type JobControl, type JobControlStats, type Model, type ResumePoint, type Segment, type Transcription, type TranscribeOptions,
} from '../../src/native';
import { AUDIO_DIR, BIN_DIR, ROOT, SHARED, microModel, tinyModel, PARAKEET_FIXTURE, makeWhisperModel, speechClip, whisperCli } from '../../fixtures';

const run = promisify(execFile);
const JFK = path.join(AUDIO_DIR, 'jfk.wav');
const GREEDY = { threads: 2, language: 'en', temperatureFallback: false } as const;
let micro: string;
let tiny: string;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'stt-model-'));

before(async () => {
  micro = await microModel();
  tiny = await tinyModel();
});

const pcmOf = async (file: string) => (await decodeWav(readFileSync(file))).pcm;
const tokensOf = (r: Transcription) => r.segments.flatMap((s) => s.tokens);

test('the addon keeps whisper.cpp and ggml private: no symbol another module could bind to or interpose', async () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const addonFile: string = require('node-gyp-build').path(ROOT);
  const { stdout } = await run('nm', ['-D', '--defined-only', addonFile], { maxBuffer: 1 << 24 });
  const leaked = stdout.split('\n').filter((l) => / (ggml|gguf|whisper|parakeet)_/.test(l));
  assert.deepEqual(leaked, []);
  assert.match(stdout, / napi_register_module_v1\n/);
});

test("the addon carries our whisper.cpp patches, as third_party/whisper.cpp.json lists them (scripts/install.js rebuilds one that does not)", () => {
  const pin = JSON.parse(readFileSync(path.join(ROOT, 'third_party', 'whisper.cpp.json'), 'utf8')) as { patches: { id: string }[] };
  assert.ok(pin.patches.length > 0);
  assert.equal(whisperPatches, pin.patches.map((p) => p.id).join(','));
});

test('loadModel reads the family from the file', async () => {
  const w = await loadModel(micro);
  assert.equal(w.family, 'whisper');
  w.dispose();
  const p = await loadModel(PARAKEET_FIXTURE);
  assert.equal(p.family, 'parakeet');
  p.dispose();
});

test('missing, truncated, corrupt, foreign and weightless files reject with clear codes', async () => {
  const bytes = readFileSync(micro);
  const truncated = path.join(tmp, 'truncated.bin');
  writeFileSync(truncated, bytes.subarray(0, Math.floor(bytes.length / 2)));
  const corrupt = path.join(tmp, 'corrupt.bin');
  const bad = Buffer.from(bytes);
  // The first tensor record (2 dims) ends with its name: give it rank 100.
  const firstRecord = bad.indexOf('encoder.positional_embedding') - (12 + 2 * 4);
  bad.writeInt32LE(100, firstRecord);
  writeFileSync(corrupt, bad);
  const cases: [string, string][] = [
    [path.join(tmp, 'nope.bin'), 'model_file_missing'],
    [truncated, 'model_file_truncated'],
    [JFK, 'model_file_foreign'],
    [path.join(SHARED, 'fixtures', 'models', 'for-tests-ggml-base.bin'), 'model_file_incomplete'],
    [path.join(SHARED, 'fixtures', 'models', 'for-tests-silero-v6.2.0-ggml.bin'), 'model_file_foreign'],
  ];
  for (const [file, code] of cases) {
    await assert.rejects(loadModel(file), (e: Error & { code?: string }) => e.code === code, `${path.basename(file)} -> ${code}`);
  }
  await assert.rejects(loadModel(corrupt), (e: Error & { code?: string }) => e.code === 'model_file_invalid');
  const ok = await loadModel(micro); // still healthy
  assert.equal(ok.family, 'whisper');
  ok.dispose();
});


test('no samples transcribe to nothing, never to the audio the pooled state heard before (whisper.cpp keeps its last spectrogram when given none)', async () => {
  const m = await loadModel(micro);
  try {
    const pcm = await pcmOf(JFK);
    for (const language of ['en', undefined]) {
      assert.notEqual((await m.transcribe(pcm, GREEDY)).text.trim(), '');
      const none = await m.transcribe(new Float32Array(0), { ...GREEDY, language });
      assert.deepEqual([none.text, none.segments.length, none.noSpeech], ['', 0, true], `language ${language ?? 'detected'}`);
    }
  } finally {
    await m.dispose();
  }
});

test('what the addon throws and rejects with is an instance of the class src/native exports, with its code and message', async () => {
  const is = <T extends Error>(cls: new (...a: never[]) => T, code: string, message: RegExp) => (e: unknown) =>
    e instanceof cls && (e as T & { code: string }).code === code && message.test((e as Error).message);
  await assert.rejects(decodeWav(Buffer.from('junk')), is(WavError, 'not_riff_wave', /^not a RIFF file$/));
  // A file whisper.cpp refuses, handed to the addon past inspectModelFile() (which would refuse it first).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const addon = require('node-gyp-build')(ROOT);
  await assert.rejects(addon.loadModel(JFK, 'whisper', 0), is(ModelLoadError, 'model_load_failed', /^whisper\.cpp could not load the model file$/));
  const m = await loadModel(micro);
  // whisper_full fails on 40 samples with no language given: no mel frame to detect one in.
  await assert.rejects(m.transcribe(new Float32Array(40), { threads: 1, temperatureFallback: false }),
    is(TranscriptionError, 'runtime_error', /^whisper inference failed \(code -?\d+\)$/));
  const pcm = await pcmOf(JFK);
  await assert.rejects(m.transcribe(pcm, { ...GREEDY, signal: AbortSignal.abort() }), is(TranscriptionError, 'aborted', /^transcription aborted$/));
  assert.throws(() => m.transcribe(pcm, { ...GREEDY, decoderThreads: 0 }), /^RangeError: decoderThreads must be an integer in 1\.\.256$/);
  await m.dispose();
  assert.throws(() => m.transcribe(pcm), is(TranscriptionError, 'disposed', /^model has been disposed$/));
});


for (const [name, model] of [['micro', () => micro], ['tiny', () => tiny]] as const) {
  test(`parity: ${name} Whisper model gives whisper-cli's tokens and text (greedy, en, 2 threads)`, async () => {
    const m = await loadModel(model());
    for (const wav of [JFK, path.join(AUDIO_DIR, 'pocketsphinx_testdata', 'librivox', 'sense_and_sensibility_01_austen_64kb-0870.wav')]) {
      const ours = await m.transcribe(await pcmOf(wav), GREEDY);
      const cli = await whisperCli(model(), wav);
      assert.ok(cli.tokens.length > 0, 'the reference produced tokens');
      assert.deepEqual(tokensOf(ours), cli.tokens, path.basename(wav));
      assert.equal(ours.text, cli.text);
    }
    m.dispose();
  });
}

test('a q8_0 Whisper model transcribes with whisper-cli\'s tokens (regression: ggml AMX kernels crashed on quantised weights)', async () => {
  const q8 = await makeWhisperModel('micro-q8_0');
  const m = await loadModel(q8);
  const ours = await m.transcribe(await pcmOf(JFK), GREEDY);
  const cli = await whisperCli(q8, JFK);
  assert.deepEqual(tokensOf(ours), cli.tokens);
  m.dispose();
});

test("seek is each window's start as whisper.cpp's own progress reports it, also when the window's opening timestamp is dropped", async () => {
  const wavFile = path.join(tmp, 'speech-20s.wav');
  writeFileSync(wavFile, speechClip(20));
  const m = await loadModel(tiny);
  const ours = await m.transcribe(await pcmOf(wavFile), GREEDY);
  m.dispose();
  // Random weights open the first window past <|0.00|>: whisper.cpp keeps that timestamp out of
  // the segment and reads t0 from it, so seek 0 holds only if the opening was found again.
  assert.ok(ours.segments[0].tokensWithTimestamps[0] > 50364, `opening ${ours.segments[0].tokensWithTimestamps[0]}`);
  assert.equal(ours.segments[0].seek, 0);
  const windows = [...new Set(ours.segments.map((s) => s.seek))];
  assert.ok(windows.length >= 2, `more than one window: ${windows}`);
  // whisper-cli -pp prints 100 * seek / frames at each window (in 5 % steps), then 100.
  const { stderr } = await run(path.join(BIN_DIR, 'whisper-cli'), ['-m', tiny, '-f', wavFile, '-t', '2', '-l', 'en', '-bs', '1', '-nf', '-ng', '-pp', '-np']);
  const printed = [...stderr.matchAll(/progress = +(\d+)%/g)].map((x) => Number(x[1])).filter((p) => p < 100);
  const frames = 20 * 100;
  assert.deepEqual(windows.slice(1).map((seek) => Math.floor((100 * seek) / frames)), printed, `our seeks ${windows}`);
});

test("parity: Parakeet model gives parakeet-cli's tokens and text", async () => {
  const m = await loadModel(PARAKEET_FIXTURE);
  const ours = await m.transcribe(await pcmOf(JFK), { threads: 2 });
  const { stdout, stderr } = await run(path.join(BIN_DIR, 'parakeet-cli'), ['-m', PARAKEET_FIXTURE, '-t', '2', '-ng', '-ps', JFK]);
  const ids = [...stderr.matchAll(/^\s*\[\s*\d+\] id=\s*(\d+)/gm)].map((x) => Number(x[1]));
  assert.ok(ids.length > 0);
  assert.deepEqual(tokensOf(ours), ids);
  assert.equal(ours.text.trim(), stdout.trim());
  m.dispose();
});

test('a Parakeet file with rank-0 tensors (as the NeMo converter writes num_batches_tracked) loads and decodes the same', async () => {
  const name = Buffer.from('encoder.layers.0.conv.batch_norm.num_batches_tracked');
  const bytes = readFileSync(PARAKEET_FIXTURE);
  const record = bytes.indexOf(name) - (12 + 4);
  assert.equal(bytes.readInt32LE(record), 1, 'the fixture writes it with rank 1');
  const header = Buffer.alloc(12);
  header.writeInt32LE(0, 0);
  header.writeInt32LE(name.length, 4);
  header.writeInt32LE(bytes.readInt32LE(record + 8), 8);
  const scalar = path.join(tmp, 'parakeet-rank0.bin');
  writeFileSync(scalar, Buffer.concat([bytes.subarray(0, record), header, bytes.subarray(record + 16)]));
  const [a, b] = await Promise.all([loadModel(PARAKEET_FIXTURE), loadModel(scalar)]);
  const pcm = await pcmOf(JFK);
  assert.deepEqual(tokensOf(await b.transcribe(pcm, { threads: 2 })), tokensOf(await a.transcribe(pcm, { threads: 2 })));
  a.dispose();
  b.dispose();
});

test('onSegment streams each segment once, in order, while the job still runs; a callback that throws ends its job', async () => {
  const model = await loadModel(PARAKEET_FIXTURE);
  const pcm = (await decodeWav(speechClip(70))).pcm;
  const seen: { text: string; index: number; jobsRunning: number }[] = [];
  // 5-s pieces: the first is delivered while a dozen more are still to decode.
  const result = await model.transcribe(pcm, { threads: 2, pieceSeconds: 5, onSegment: (text, index) => seen.push({ text, index, jobsRunning: model.stats().jobsRunning }) });
  assert.ok(result.segments.length >= 10, `${result.segments.length} segments`);
  assert.deepEqual(seen.map((s) => [s.index, s.text]), result.segments.map((s, i) => [i, s.text]));
  // Delivered from the job's thread as pieces finished, not all at the end.
  assert.equal(seen[0].jobsRunning, 1);

  // A callback that throws ends its job with that error; the model goes on.
  await assert.rejects(model.transcribe(pcm, { threads: 2, pieceSeconds: 5, onSegment: () => { throw new Error('listener failed'); } }), /listener failed/);
  assert.deepEqual((await model.transcribe(pcm, { threads: 2, pieceSeconds: 5 })).segments.map((s) => s.text), result.segments.map((s) => s.text));
  assert.throws(() => model.transcribe(pcm, { onSegment: 'yes' as never }), TypeError);
  assert.throws(() => model.transcribe(pcm, { speechGate: true }), /speechGate needs vad/);
  await model.dispose();
});

/** Runs `pcm` through, keeping every checkpoint with the segments finished before it. */
async function withCheckpoints(m: Model, pcm: Float32Array, options: TranscribeOptions) {
  const checkpoints: { point: ResumePoint; before: Segment[]; gated: number }[] = [];
  let before: Segment[] = [];
  const result = await m.transcribe(pcm, { ...options, onCheckpoint: (point, segments, gated) => {
    before = [...before, ...segments];
    checkpoints.push({ point, before, gated });
  } });
  return { result, checkpoints };
}

test('a Whisper run resumed from any checkpoint ends as the uninterrupted run: segments, words, fallback windows, detected language', async () => {
  const m = await loadModel(micro);
  const pcm = (await decodeWav(speechClip(75))).pcm;
  // No language (detected once, then carried), word timestamps (a clock across windows), temperature fallback on.
  const options = { threads: 2, wordTimestamps: true, maxTokens: 24 };
  const { result: whole, checkpoints } = await withCheckpoints(m, pcm, options);
  assert.ok(checkpoints.length >= 2, `${checkpoints.length} checkpoints`);
  const afterFirst = whole.segments.slice(checkpoints[0].before.length);
  assert.ok(afterFirst.some((s) => s.temperature > 0), 'a window after a checkpoint fell back to sampling (the random-number states matter)');
  for (const { point, before } of checkpoints) {
    assert.deepEqual(before, whole.segments.slice(0, before.length), 'a checkpoint comes with the segments before it');
    assert.equal(point.language, whole.language);
    assert.ok(point.rngs.length > 0 && point.prompt.length > 0);
  }
  for (const { point, before } of checkpoints) {
    // Another clip on the same model first: the pooled state's history must not matter.
    await m.transcribe((await decodeWav(speechClip(7))).pcm, { threads: 2, maxTokens: 24 });
    const rest = await m.transcribe(pcm, { ...options, resumeFrom: point });
    assert.deepEqual([...before, ...rest.segments], whole.segments, `resumed at ${point.position}`);
    assert.ok(rest.segments.every((s) => s.start >= point.seconds - 30), 'times are the recording\'s');
  }
  assert.throws(() => m.transcribe(pcm, { resumeFrom: { ...checkpoints[0].point, clock: [1] } }), /resumeFrom must be a point onCheckpoint gave/);
  // A point from another model or recording is refused before whisper.cpp could assert on it.
  const point = checkpoints[0].point;
  await assert.rejects(m.transcribe(pcm, { resumeFrom: { ...point, prompt: [1_000_000] } }), /prompt does not fit this model/);
  await assert.rejects(m.transcribe(pcm.subarray(0, 16_000), { resumeFrom: point }), /outside this audio/);
  await assert.rejects(m.transcribe(pcm, { resumeFrom: { ...point, language: 'zz' } }), /language is unknown/);
  // A callback that throws ends its job with that error.
  await assert.rejects(m.transcribe(pcm, { ...options, onCheckpoint: () => { throw new Error('store failed'); } }), /store failed/);
  assert.deepEqual((await m.transcribe(pcm, options)).segments, whole.segments, 'the model goes on');
  await m.dispose();
});

test('a clip with fallback windows is answered the same whatever the pooled state decoded before (fresh-sampling-seed)', async () => {
  const m = await loadModel(micro);
  const options = { threads: 2, language: 'en', maxTokens: 24 };
  const clip = (await decodeWav(speechClip(20))).pcm;
  const first = await m.transcribe(clip, options);
  assert.ok(first.segments.some((s) => s.temperature > 0), 'a window fell back to sampling');
  await m.transcribe((await decodeWav(speechClip(25))).pcm, options);
  assert.equal(m.stats().statesCreated, 1, 'one state, reused');
  assert.deepEqual((await m.transcribe(clip, options)).segments, first.segments);
  await m.dispose();
});

test('a Parakeet run resumed from any checkpoint (between pieces) ends as the uninterrupted run', async () => {
  const m = await loadModel(PARAKEET_FIXTURE);
  const pcm = (await decodeWav(speechClip(40))).pcm;
  const options = { threads: 2, pieceSeconds: 8, wordTimestamps: true };
  const { result: whole, checkpoints } = await withCheckpoints(m, pcm, options);
  assert.ok(checkpoints.length >= 3, `${checkpoints.length} checkpoints`);
  for (const { point, before } of checkpoints) {
    const rest = await m.transcribe(pcm, { ...options, resumeFrom: point });
    assert.deepEqual([...before, ...rest.segments], whole.segments, `resumed at sample ${point.position}`);
  }
  await assert.rejects(m.transcribe(pcm.subarray(0, 16_000), { ...options, resumeFrom: checkpoints[0].point }), /outside this audio/);
  await m.dispose();
});

test('parallel transcriptions on one model equal the sequential results and reuse states', async () => {
  const m = await loadModel(tiny);
  const clips = await Promise.all([JFK, ...librivox(3)].map(pcmOf));
  const opts = { ...GREEDY, threads: 1, maxTokens: 16 };
  const sequential: Transcription[] = [];
  for (const c of clips) sequential.push(await m.transcribe(c, opts));
  assert.equal(m.stats().statesCreated, 1);
  const parallel = await Promise.all(clips.map((c) => m.transcribe(c, opts)));
  assert.deepEqual(parallel.map(tokensOf), sequential.map(tokensOf));
  const created = m.stats().statesCreated;
  assert.ok(created >= 2 && created <= clips.length);
  await Promise.all(clips.map((c) => m.transcribe(c, opts)));
  assert.equal(m.stats().statesCreated, created, 'a second burst reuses the pooled states');
  m.dispose();
});

test('aborting one job leaves the others and later ones correct', async () => {
  const m = await loadModel(tiny);
  const [a, b] = await Promise.all([pcmOf(JFK), pcmOf(librivox(1)[0])]);
  const opts = { ...GREEDY, threads: 1 };
  const expectedB = await m.transcribe(b, opts);
  const controller = new AbortController();
  const victim = m.transcribe(a, { ...opts, signal: controller.signal });
  const survivor = m.transcribe(b, opts);
  setTimeout(() => controller.abort(), 50);
  await assert.rejects(victim, (e: Error & { code?: string }) => e.code === 'aborted');
  assert.deepEqual(tokensOf(await survivor), tokensOf(expectedB));
  assert.deepEqual(tokensOf(await m.transcribe(b, opts)), tokensOf(expectedB), 'the aborted state went back clean');
  await assert.rejects(m.transcribe(b, { ...opts, signal: AbortSignal.abort() }), (e: Error & { code?: string }) => e.code === 'aborted');
  m.dispose();
});

test('a paused job waits at a safe point while another runs, then resumes to the same result', async () => {
  for (const file of [tiny, PARAKEET_FIXTURE]) {
    const m = await loadModel(file);
    const [a, b] = await Promise.all([pcmOf(JFK), pcmOf(librivox(1)[0])]);
    const opts = { ...GREEDY, threads: 1, maxTokens: 16 };
    const expectedA = await m.transcribe(a, opts);
    const control = createJobControl();
    control.pause(); // paused before it starts: it stops at its first checkpoint
    let settled = false;
    const paused = m.transcribe(a, { ...opts, control }).finally(() => (settled = true));
    await m.transcribe(b, opts);
    assert.equal(settled, false, `${path.basename(file)}: the paused job did not finish while paused`);
    assert.equal(m.stats().jobsRunning, 1);
    control.resume();
    assert.deepEqual(tokensOf(await paused), tokensOf(expectedA));

    // Paused once it has started (at its next window, token or graph node): it waits there, then gives the same tokens.
    const mid = createJobControl();
    let midSettled = false;
    const running = m.transcribe(a, { ...opts, control: mid }).finally(() => (midSettled = true));
    while (!mid.started() && !midSettled) await new Promise((r) => setImmediate(r));
    mid.pause();
    while (!mid.stats().waiting && !midSettled) await new Promise((r) => setImmediate(r));
    assert.ok(mid.stats().waiting, `${path.basename(file)}: the started job stopped at a pause point`);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(midSettled, false, `${path.basename(file)}: the job paused part-way did not finish while paused`);
    mid.resume();
    assert.deepEqual(tokensOf(await running), tokensOf(expectedA));
    m.dispose();
  }
});

/**
 * Pauses `control`'s running job inside a graph that has other threads to park
 * (`insideGraph`: the job does not wait at the safe points between graphs) and
 * waits until it waits there or has settled. Leaves the pause on when
 * `resumeAfter` is false. Returns the stats seen while it waited, or null when
 * the job settled first.
 */
async function pauseInsideGraph(control: JobControl, settled: () => boolean, resumeAfter = true): Promise<JobControlStats | null> {
  control.pause({ insideGraph: true });
  while (!control.stats().waiting && !settled()) await new Promise((r) => setImmediate(r));
  const stats = settled() ? null : control.stats();
  if (resumeAfter) control.resume();
  return stats;
}
const parkedWithWorkers = (s: JobControlStats | null) => s !== null && s.parkedInGraph > 0 && s.workersParked > 0;

test('a job paused inside a ggml graph parks there with its graph threads asleep, and resumes to the same result', { skip: !graphHooks && 'graph hooks are linked on Linux only' }, async () => {
  for (const file of [tiny, PARAKEET_FIXTURE]) {
    const m = await loadModel(file);
    const pcm = await pcmOf(librivox(1)[0]);
    const opts = { ...GREEDY, threads: 2, maxTokens: 16 };
    const expected = await m.transcribe(pcm, opts);
    const control = createJobControl();
    let settled = false;
    const job = m.transcribe(pcm, { ...opts, control }).finally(() => (settled = true));
    assert.equal(parkedWithWorkers(await pauseInsideGraph(control, () => settled)), true,
      `${path.basename(file)}: the job finished without waiting inside a graph with its second thread parked`);
    assert.deepEqual(tokensOf(await job), tokensOf(expected));
    m.dispose();
  }
});

test('pausing and resuming in quick succession, in any interleaving, never strands a graph thread', { timeout: 120_000 }, async () => {
  const m = await loadModel(tiny);
  const pcm = await pcmOf(librivox(1)[0]);
  const opts = { ...GREEDY, threads: 2, maxTokens: 16 };
  const expected = tokensOf(await m.transcribe(pcm, opts));
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let job = 0; job < 3; job++) {
    const control = createJobControl();
    let settled = false;
    const running = m.transcribe(pcm, { ...opts, control }).finally(() => (settled = true));
    while (!settled) {
      control.pause();
      // Resume at once, after a turn of the event loop, or once parked: each lands at a different point of a pause.
      const how = random();
      if (how < 0.4) control.resume();
      else {
        await new Promise((r) => (how < 0.7 ? setImmediate(r) : setTimeout(r, 1)));
        control.resume();
      }
      await new Promise((r) => setImmediate(r));
    }
    assert.deepEqual(tokensOf(await running), expected);
  }
  m.dispose();
});

test('a pause right after a resume parks the graph threads again (none spin beside the job that runs instead)', { skip: !graphHooks && 'graph hooks are linked on Linux only' }, async () => {
  const m = await loadModel(tiny);
  const pcm = await pcmOf(librivox(1)[0]);
  const opts = { ...GREEDY, threads: 2, maxTokens: 16 };
  let trials = 0;
  for (let job = 0; job < 4 && trials < 20; job++) {
    const control = createJobControl();
    const controller = new AbortController();
    let settled = false;
    const running = m.transcribe(pcm, { ...opts, control, signal: controller.signal }).finally(() => (settled = true));
    try {
      while (!settled && trials < 20) {
        const before = await pauseInsideGraph(control, () => settled, false);
        if (!parkedWithWorkers(before)) break;
        // Resume and pause again before the job's thread can run: it must park its workers again.
        control.resume();
        control.pause({ insideGraph: true });
        for (let i = 0; i < 2000 && !settled && control.stats().parkedInGraph === before!.parkedInGraph; i++) await new Promise((r) => setTimeout(r, 1));
        if (settled) break;
        const after = control.stats();
        assert.ok(after.parkedInGraph > before!.parkedInGraph, `trial ${trials}: the job waits again without parking its graph threads`);
        trials++;
        control.resume();
        await new Promise((r) => setTimeout(r, 2));
      }
      await running;
    } finally {
      // A failed trial leaves the job paused: abort it, or the test process never ends.
      controller.abort();
      await running.catch(() => {});
    }
  }
  assert.ok(trials >= 5, `only ${trials} re-pauses landed inside a graph`);
  m.dispose();
});

test('a job aborted while parked inside a graph stops there and its state goes back clean', { skip: !graphHooks && 'graph hooks are linked on Linux only' }, async () => {
  const m = await loadModel(PARAKEET_FIXTURE);
  const pcm = await pcmOf(librivox(1)[0]);
  const opts = { ...GREEDY, threads: 2 };
  const expected = await m.transcribe(pcm, opts);
  const control = createJobControl();
  const controller = new AbortController();
  let settled = false;
  const job = m.transcribe(pcm, { ...opts, control, signal: controller.signal }).finally(() => (settled = true));
  assert.equal(parkedWithWorkers(await pauseInsideGraph(control, () => settled, false)), true);
  controller.abort();
  await assert.rejects(job, (e: Error & { code?: string }) => e.code === 'aborted');
  assert.deepEqual(tokensOf(await m.transcribe(pcm, opts)), tokensOf(expected), 'the state aborted mid-graph went back clean');
  m.dispose();
});

test('aborting or disposing a paused job settles it', { timeout: 60_000 }, async () => {
  const m = await loadModel(tiny);
  const pcm = await pcmOf(JFK);
  const control = createJobControl();
  control.pause();
  const controller = new AbortController();
  const aborted = m.transcribe(pcm, { ...GREEDY, threads: 1, control, signal: controller.signal });
  controller.abort();
  await assert.rejects(aborted, (e: Error & { code?: string }) => e.code === 'aborted');
  const held = createJobControl();
  held.pause();
  const disposed = m.transcribe(pcm, { ...GREEDY, threads: 1, control: held });
  const freed = m.dispose();
  await assert.rejects(disposed, (e: Error & { code?: string }) => e.code === 'aborted' || e.code === 'disposed');
  assert.throws(() => m.transcribe(pcm, { control: {} as never }), TypeError);
  await freed;
});

test('disposing with jobs in flight aborts them, rejects new work, and frees every engine and state', async () => {
  const pcm = await pcmOf(JFK);
  // An earlier test's model may still be on its way out (its last hold is dropped on a pool thread):
  // take the baseline once nothing is being freed, or the count falls below it during this test.
  const liveBefore = await settledLiveObjects();
  for (let i = 0; i < 6; i++) {
    const m = await loadModel(tiny);
    // Held paused at their first pause point, so all three are surely in flight when dispose() comes.
    const controls = [1, 2, 3].map(() => {
      const control = createJobControl();
      control.pause();
      return control;
    });
    const jobs = controls.map((control) => m.transcribe(pcm, { ...GREEDY, threads: 1, control }).then(() => 'done', (e) => e.code));
    for (const control of controls) for (let t = 0; t < 2000 && !control.stats().waiting; t++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(m.stats().jobsRunning, 3);
    const disposed = m.dispose();
    assert.deepEqual(await Promise.all(jobs), ['aborted', 'aborted', 'aborted']);
    await disposed;
    assert.throws(() => m.transcribe(pcm), (e: Error & { code?: string }) => e.code === 'disposed');
    assert.equal(m.stats().disposed, true);
  }
  // The last job's worker drops the engine on a pool thread: give it a bounded moment.
  for (let i = 0; i < 400 && liveObjects().engines + liveObjects().states > liveBefore.engines + liveBefore.states; i++) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(liveObjects(), liveBefore, 'six load/dispose cycles with three jobs each left engines or states alive');
});

/** liveObjects() once it has stopped changing (bounded: 4 s), so engines freed late are counted. */
async function settledLiveObjects(): Promise<ReturnType<typeof liveObjects>> {
  let last = liveObjects();
  for (let steady = 0, i = 0; steady < 10 && i < 400; i++) {
    await new Promise((r) => setTimeout(r, 10));
    const now = liveObjects();
    steady = now.engines === last.engines && now.states === last.states ? steady + 1 : 0;
    last = now;
  }
  return last;
}

test('models are freed on pool threads, never on the JS thread, with or without jobs in flight', async () => {
  const pcm = await pcmOf(JFK);
  const freedBefore = enginesFreedOnJsThread();
  const idle = await loadModel(tiny);
  await idle.transcribe(pcm, { ...GREEDY, threads: 1, maxTokens: 4 });
  await idle.dispose(); // no job holds the engine: this hold is the last one
  assert.equal(idle.stats().disposed, true);
  await idle.dispose(); // a second dispose settles too
  const busy = await loadModel(tiny);
  const job = busy.transcribe(pcm, { ...GREEDY, threads: 1 }).then(() => 'done', (e) => e.code);
  await busy.dispose(); // the job's worker holds the last reference
  assert.ok(['done', 'aborted'].includes(await job));
  assert.equal(enginesFreedOnJsThread() - freedBefore, 0);
});

test('the addon loads and transcribes inside a worker thread', async () => {
  const code = `
    const { workerData, parentPort } = require('node:worker_threads');
    const addon = require('node-gyp-build')(workerData.root);
    (async () => {
      const audio = await addon.decodeWav(require('node:fs').readFileSync(workerData.wav));
      const model = await addon.loadModel(workerData.model, 'whisper', 0);
      const r = await model.transcribe(audio.pcm, { threads: 2, language: 'en', temperatureFallback: false }, new addon.JobControl());
      model.dispose();
      parentPort.postMessage(r.segments.flatMap((s) => s.tokens));
    })().catch((e) => parentPort.postMessage({ error: e.message }));`;
  const worker = new Worker(code, { eval: true, workerData: { root: ROOT, wav: JFK, model: micro } });
  const tokens = await new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject));
  await worker.terminate();
  const m = await loadModel(micro);
  assert.deepEqual(tokens, tokensOf(await m.transcribe(await pcmOf(JFK), GREEDY)));
  m.dispose();
});

function librivox(n: number): string[] {
  const dir = path.join(AUDIO_DIR, 'pocketsphinx_testdata', 'librivox');
  return require('node:fs').readdirSync(dir).filter((f: string) => f.endsWith('.wav')).sort().slice(0, n).map((f: string) => path.join(dir, f));
}

for (const how of ['exit', 'throw', 'reject'] as const) {
  test(`the process terminates on ${how} while a job is paused (jobs are aborted on exit)`, async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/helpers/exit-while-paused.ts'), how], { cwd: ROOT });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const code = await Promise.race([
      new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c))),
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 30_000)),
    ]);
    if (code === 'hung') child.kill('SIGKILL');
    assert.notEqual(code, 'hung', `still running 30 s after ${how}: ${out}`);
    assert.match(out, /paused/);
    assert.equal(code, how === 'exit' ? 0 : 1, out);
  });
}

test('zero or ill-fitting hyper-parameters are refused before whisper.cpp or parakeet.cpp can divide by them', async () => {
  const patched = (file: string, index: number, value: number, name: string) => {
    const b = readFileSync(file);
    b.writeInt32LE(value, 4 + 4 * index);
    const out = path.join(tmp, name);
    writeFileSync(out, b);
    return out;
  };
  const cases: [string, RegExp][] = [
    [patched(micro, 3, 0, 'audio-head-0.bin'), /n_audio_head is 0/],
    [patched(micro, 7, 0, 'text-head-0.bin'), /n_text_head is 0/],
    [patched(micro, 3, 3, 'audio-head-3.bin'), /n_audio_state 64 does not divide into 3 heads/],
    [patched(micro, 8, 0, 'text-layers-0.bin'), /n_text_layer is 0/],
    [patched(PARAKEET_FIXTURE, 7, 0, 'parakeet-fft-0.bin'), /n_fft is 0/],
    [patched(PARAKEET_FIXTURE, 8, 0, 'parakeet-subsampling-0.bin'), /subsampling_factor is 0/],
  ];
  for (const [file, message] of cases) {
    await assert.rejects(loadModel(file), (e: Error & { code?: string }) => e.code === 'model_file_invalid' && message.test(e.message), path.basename(file));
  }
});

test("mel filters or a window that do not fit the FFT are refused at load, not met at the first request (outside the mel code's buffers)", async () => {
  const saved = (name: string, b: Buffer) => {
    const out = path.join(tmp, name);
    writeFileSync(out, b);
    return out;
  };
  const int32 = (v: number) => {
    const b = Buffer.alloc(4);
    b.writeInt32LE(v);
    return b;
  };
  // The Parakeet fixture: n_fft 64 (hyper-parameter 7), then 16 mel filters of 33 bins, then a 64-sample window.
  const pk = readFileSync(PARAKEET_FIXTURE);
  const filters = 4 + 15 * 4;
  const windowAt = filters + 8 + pk.readInt32LE(filters) * pk.readInt32LE(filters + 4) * 4;
  assert.deepEqual([pk.readInt32LE(4 + 7 * 4), pk.readInt32LE(filters + 4), pk.readInt32LE(windowAt)], [64, 33, 64], 'the fixture as this test reads it');
  const withFft = (v: number) => {
    const b = Buffer.from(pk);
    b.writeInt32LE(v, 4 + 7 * 4);
    return b;
  };
  // 32 more window samples: the file stays well-formed, and the window no longer fits in the frame.
  const longWindow = Buffer.concat([pk.subarray(0, windowAt), int32(96), pk.subarray(windowAt + 4, windowAt + 4 + 64 * 4), Buffer.alloc(32 * 4), pk.subarray(windowAt + 4 + 64 * 4)]);
  // Whisper: whisper.cpp's frame is 400 samples (201 bins), whatever the file; the micro model's 80 filters cut to 200 bins.
  const w = readFileSync(micro);
  const wFilters = 4 + 11 * 4;
  assert.deepEqual([w.readInt32LE(wFilters), w.readInt32LE(wFilters + 4)], [80, 201]);
  const whisper200 = Buffer.concat([w.subarray(0, wFilters), int32(80), int32(200), w.subarray(wFilters + 8, wFilters + 8 + 80 * 200 * 4), w.subarray(wFilters + 8 + 80 * 201 * 4)]);
  const cases: [string, RegExp][] = [
    [saved('parakeet-fft-32.bin', withFft(32)), /^mel filters have 33 frequency bins; an FFT of 32 has 17$/],
    [saved('parakeet-fft-128.bin', withFft(128)), /^mel filters have 33 frequency bins; an FFT of 128 has 65$/],
    [saved('parakeet-fft-huge.bin', withFft(1 << 20)), /^n_fft is 1048576; at most 4096 is accepted$/],
    [saved('parakeet-window-96.bin', longWindow), /^the 96-sample window is longer than n_fft 64$/],
    [saved('whisper-bins-200.bin', whisper200), /^mel filters have 200 frequency bins; an FFT of 400 has 201$/],
  ];
  for (const [file, message] of cases) {
    await assert.rejects(loadModel(file), (e: Error & { code?: string }) => e.code === 'model_file_invalid' && message.test(e.message), path.basename(file));
  }
});
