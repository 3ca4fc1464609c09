// `npx tsx benchmarks/studies/window-policy.ts [--model base-q8_0] [--fallback] [--guarded | --floors | --default | --shipped]`:
// Whisper's encoder window for short clips. Every clip of ../shared/audio
// (1-11 s) and concatenations of them to about 10, 20 and 29 s are decoded by
// the addon with the full 30-s window and with windows shrunk to the clip's
// length plus a margin (audio_ctx), round-robin so every policy sees the same
// machine state; it prints, per policy and length band, WER and time per clip,
// and the ratio of each to the full window's. Greedy, English, 2 threads,
// temperature fallback off unless --fallback (then whisper.cpp's default).
// --guarded: shrunk windows whose result looks wrong are decoded again at full size.
// --floors: windows never shorter than 10, 15 or 20 s (shrunk only part way).
// --default: the server's default window (src/stt/local/encoder-window.ts) against the full one.
// --shipped: every window policy the server offers (STT_ENCODER_WINDOW).
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { decodeWav, loadModel, type Model, type Transcription } from '../../src/native';
import { compressionRatio } from '../../src/stt/formats';
import { textErrors } from '../../scripts/lib/english-normalizer';
import { concat, evalClips, realModelPath, type RealModelName } from '../../fixtures';
import { DEFAULT_ENCODER_WINDOW, ENCODER_WINDOWS, ENCODER_WINDOW_RULES, encoderWindowFor } from '../../src/stt/local/encoder-window';
import { saveReport, today } from '../lib/results';
import { fmt } from '../lib/stats';

const FRAMES_PER_SECOND = 50; // encoder positions per second of audio; 1500 is the full window
const THREADS = 2;

interface Clip { id: string; seconds: number; pcm: Float32Array; reference: string }
interface Policy { name: string; audioCtx: (seconds: number) => number; guarded?: boolean }

const shrink = (margin: number, guarded = false): Policy => ({
  name: `shrink +${margin}${guarded ? ', guarded' : ''}`,
  audioCtx: (s) => (s >= 30 ? 0 : Math.min(1500, Math.ceil(s * FRAMES_PER_SECOND) + margin)),
  guarded,
});
/** At least `positions` encoder positions (a window of positions ÷ 50 s), more for a longer clip: short windows are where Whisper loops. */
const floor = (positions: number): Policy => ({
  name: `floor ${positions / FRAMES_PER_SECOND} s`,
  audioCtx: (s) => (s >= 30 ? 0 : Math.min(1500, Math.max(positions, Math.ceil(s * FRAMES_PER_SECOND) + 64))),
});
const FLOORS: Policy[] = [{ name: 'full', audioCtx: () => 0 }, floor(500), floor(750), floor(1000)];
const PLAIN: Policy[] = [{ name: 'full', audioCtx: () => 0 }, shrink(0), shrink(32), shrink(64), shrink(128), shrink(256)];
const DEFAULT: Policy[] = [{ name: 'full', audioCtx: () => 0 }, { name: 'default', audioCtx: (s) => encoderWindowFor(DEFAULT_ENCODER_WINDOW, s) }];
/** Every policy the server offers, as it computes them. */
const SHIPPED: Policy[] = ENCODER_WINDOWS.map((w) => ({
  name: w === DEFAULT_ENCODER_WINDOW ? `${w} (default)` : w, audioCtx: (s: number) => encoderWindowFor(w, s),
}));
const GUARDED: Policy[] = [{ name: 'full', audioCtx: () => 0 }, shrink(0, true), shrink(64, true), shrink(128, true)];

/**
 * The guard: a shrunk window's result that looks like Whisper failing is
 * decoded again with the full window. Whisper's own thresholds (compression
 * ratio 2.4, mean log-probability -1) and a rate no speech reaches (tokens
 * per second of audio: a repetition loop fills the token budget).
 */
export const GUARD = { compressionRatio: 2.4, avgLogprob: -1, tokensPerSecond: 10 };
function looksWrong(r: Transcription, seconds: number): boolean {
  const tokens = r.segments.reduce((n, s) => n + s.tokens.length, 0);
  const logprob = tokens ? r.segments.reduce((a, s) => a + s.avgLogprob * s.tokens.length, 0) / tokens : 0;
  return compressionRatio(r.text.trim()) > GUARD.compressionRatio || logprob < GUARD.avgLogprob || tokens / seconds > GUARD.tokensPerSecond;
}

async function clips(): Promise<Clip[]> {
  const singles: Clip[] = [];
  for (const c of evalClips()) {
    const { pcm } = await decodeWav(readFileSync(c.file));
    singles.push({ id: c.id, seconds: pcm.length / 16000, pcm, reference: c.reference });
  }
  // Concatenations of consecutive clips of one set (one speaker, one book) to each target length.
  const joined: Clip[] = [];
  const hifi = singles.filter((_, i) => evalClips()[i].set.startsWith('hifitts'));
  for (const target of [10, 20, 29]) {
    let at = 0;
    for (let n = 0; n < 6 && at < hifi.length; n++) {
      const parts: Clip[] = [];
      let seconds = 0;
      while (at < hifi.length && seconds + hifi[at].seconds <= target) {
        parts.push(hifi[at]);
        seconds += hifi[at++].seconds;
      }
      if (parts.length < 2) { at++; continue; }
      joined.push({ id: `${target}s-${n}`, seconds, pcm: concat(parts.map((p) => p.pcm)), reference: parts.map((p) => p.reference).join(' ') });
    }
  }
  return [...singles, ...joined];
}

const band = (s: number) => (s < 5 ? '1-5 s' : s < 12 ? '5-12 s' : s < 25 ? '12-25 s' : '25-30 s');

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const name = (args.includes('--model') ? args[args.indexOf('--model') + 1] : 'base-q8_0') as RealModelName;
  const fallback = args.includes('--fallback');
  const VARIANTS: [string, Policy[]][] = [['--guarded', GUARDED], ['--floors', FLOORS], ['--default', DEFAULT], ['--shipped', SHIPPED]];
  const [variant, POLICIES] = VARIANTS.find(([flag]) => args.includes(flag)) ?? ['', PLAIN];
  const model: Model = await loadModel(realModelPath(name));
  const all = await clips();
  // [policy][clip] -> errors, words, ms
  const results = POLICIES.map(() => all.map(() => ({ errors: 0, words: 0, ms: 0, text: '', rerun: false })));
  await model.transcribe(all[0].pcm, { threads: THREADS, language: 'en' }); // warm-up
  for (const [ci, clip] of all.entries()) {
    for (const [pi, policy] of POLICIES.entries()) {
      const t0 = performance.now();
      const decode = (audioCtx: number) => model.transcribe(clip.pcm, { threads: THREADS, language: 'en', temperatureFallback: fallback, audioCtx });
      let r = await decode(policy.audioCtx(clip.seconds));
      const rerun = !!policy.guarded && policy.audioCtx(clip.seconds) !== 0 && looksWrong(r, clip.seconds);
      if (rerun) r = await decode(0);
      const ms = performance.now() - t0;
      const e = textErrors(clip.reference, r.text);
      results[pi][ci] = { errors: e.errors, words: e.words, ms, text: r.text, rerun };
    }
    process.stdout.write('.');
  }
  process.stdout.write('\n');
  model.dispose();

  const bands = ['1-5 s', '5-12 s', '12-25 s', '25-30 s'].filter((b) => all.some((c) => band(c.seconds) === b));
  const sum = (pi: number, pick: (i: number) => boolean) => {
    let errors = 0, n = 0, ms = 0, seconds = 0, count = 0;
    all.forEach((c, i) => { if (pick(i)) { errors += results[pi][i].errors; n += results[pi][i].words; ms += results[pi][i].ms; seconds += c.seconds; count++; } });
    return { wer: n ? (100 * errors) / n : 0, errors, n, ms: count ? ms / count : 0, rtf: seconds ? ms / 1000 / seconds : 0 };
  };
  const lines: string[] = [];
  lines.push(`| policy | ${bands.map((b) => `${b}: WER, ms/clip`).join(' | ')} | all: WER (errors/words) | all: RTF | time ÷ full | guard fired |`);
  lines.push(`|${' --- |'.repeat(bands.length + 5)}`);
  const full = sum(0, () => true);
  for (const [pi, policy] of POLICIES.entries()) {
    const cells = bands.map((b) => { const r = sum(pi, (i) => band(all[i].seconds) === b); return `${fmt(r.wer, 2)} %, ${fmt(r.ms, 0)}`; });
    const a = sum(pi, () => true);
    const fired = results[pi].filter((x) => x.rerun).length;
    lines.push(`| ${policy.name} | ${cells.join(' | ')} | ${fmt(a.wer, 2)} % (${a.errors}/${a.n}) | ${fmt(a.rtf, 3)} | ${fmt(a.ms / full.ms, 2)} | ${policy.guarded ? `${fired} of ${all.length}` : '—'} |`);
  }
  const worst = POLICIES.slice(1).map((policy, k) => {
    const pi = k + 1;
    const worse = all.map((c, i) => ({ c, d: results[pi][i].errors - results[0][i].errors, text: results[pi][i].text })).filter((x) => x.d > 0).sort((x, y) => y.d - x.d).slice(0, 3);
    return `- ${policy.name}: ${worse.length ? worse.map((x) => `${x.c.id} (${fmt(x.c.seconds, 1)} s) +${x.d}: "${x.text.trim().slice(0, 120)}"`).join('; ') : 'no clip worse than the full window'}`;
  });
  const count = (b: string) => all.filter((c) => band(c.seconds) === b).length;
  const md = [
    `# Encoder window for short clips, ${today()}`, '',
    `\`npx tsx benchmarks/studies/window-policy.ts --model ${name}${fallback ? ' --fallback' : ''}${variant ? ` ${variant}` : ''}\`: real Whisper ${name}, the addon in-process, ${THREADS} threads, greedy, English, temperature fallback ${fallback ? 'on (whisper.cpp default)' : 'off'}, ${os.cpus().length} cores (${os.cpus()[0]?.model}).`,
    `${all.length} clips: ${bands.map((b) => `${count(b)} of ${b}`).join(', ')} (the shared corpus and concatenations of consecutive hifitts clips); every clip decoded by every policy in turn.`,
    '`shrink +m`: audio_ctx = ceil(seconds × 50) + m encoder positions (20 ms each), the full 1500 from 30 s. `floor N s`: the larger of N × 50 positions and the clip\'s + 64.',
    `The server's policies (src/stt/local/encoder-window.ts): ${ENCODER_WINDOWS.map((w) => `\`${w}\`: ${ENCODER_WINDOW_RULES[w]}`).join('; ')}.`,
    `\`guarded\`: a result with compression ratio over ${GUARD.compressionRatio}, mean log-probability under ${GUARD.avgLogprob} or over ${GUARD.tokensPerSecond} tokens per second of audio is decoded again with the full window (its time counts both).`, '',
    ...lines, '', 'Clips a shrunk window made worse than the full one (most added errors first):', '', ...worst, '',
  ].join('\n');
  saveReport(`window-policy-${today()}-${name}${fallback ? '-fallback' : ''}${variant.replace('--', '-')}`, md);
}

main().catch((err) => {
  process.stderr.write(`window-policy: ${(err as Error).stack}\n`);
  process.exit(1);
});
