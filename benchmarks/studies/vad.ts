// `npx tsx benchmarks/studies/vad.ts [--model base-q8_0] [--fallback]`: Silero VAD
// on and off, side by side in one run (each clip decoded both ways in turn).
// Two sets: the eval set (every clip of ../shared/audio, speech from end to
// end: does VAD cost accuracy?) and speech with long gaps of quiet noise
// (hifitts utterances with 5-60 s between them, fixtures/clips.ts gappedClip:
// time saved, WER, and words Whisper puts in the silences). Greedy, English,
// 2 threads, temperature fallback off unless --fallback (whisper.cpp's default),
// the server's default encoder window for the clip as sent (as the server does).
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { decodeWav, loadModel, type Transcription } from '../../src/native';
import { DEFAULT_ENCODER_WINDOW, encoderWindowFor } from '../../src/stt/local/encoder-window';
import { textErrors } from '../../scripts/lib/english-normalizer';
import { evalClips, gappedClip, realModelPath, VAD_FIXTURE, type RealModelName } from '../../fixtures';
import { saveReport, today } from '../lib/results';
import { fmt } from '../lib/stats';

const THREADS = 2;
interface Clip { id: string; seconds: number; pcm: Float32Array; reference: string; speech?: { start: number; end: number }[] }
interface Outcome { errors: number; words: number; ms: number; inSilence: number }

/** Gaps drawn from 5-60 s, seeded: eight clips of five utterances each. */
function gappedSet(): Clip[] {
  let seed = 7;
  const next = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  return Array.from({ length: 8 }, (_, k) => {
    const gaps = Array.from({ length: 5 }, () => Math.round(5 + next() * 55));
    const g = gappedClip(gaps, 0.003, k * 5);
    return { id: `gapped-${k}`, seconds: g.seconds, pcm: g.pcm, reference: g.reference, speech: g.speech };
  });
}

/** Words whose start lies outside every utterance (0.3 s of slack): text Whisper made up from noise. */
function wordsInSilence(r: Transcription, speech: Clip['speech']): number {
  if (!speech) return 0;
  const heard = (t: number) => speech.some((u) => t >= u.start - 0.3 && t <= u.end + 0.3);
  return r.segments.flatMap((s) => s.words ?? []).filter((w) => !heard(w.start)).length;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const name = (args.includes('--model') ? args[args.indexOf('--model') + 1] : 'base-q8_0') as RealModelName;
  const fallback = args.includes('--fallback');
  const model = await loadModel(realModelPath(name));
  const evalSet: Clip[] = [];
  for (const c of evalClips()) {
    const { pcm } = await decodeWav(readFileSync(c.file));
    evalSet.push({ id: c.id, seconds: pcm.length / 16000, pcm, reference: c.reference });
  }
  const sets = { 'eval set': evalSet, 'speech with 5-60 s gaps': gappedSet() };
  const run = async (clip: Clip, vad: boolean): Promise<Outcome> => {
    const t0 = performance.now();
    const r = await model.transcribe(clip.pcm, {
      threads: THREADS, language: 'en', temperatureFallback: fallback, wordTimestamps: true, vad: vad ? { modelPath: VAD_FIXTURE } : undefined,
      audioCtx: encoderWindowFor(DEFAULT_ENCODER_WINDOW, clip.seconds),
    });
    const ms = performance.now() - t0;
    const e = textErrors(clip.reference, r.text);
    return { errors: e.errors, words: e.words, ms, inSilence: wordsInSilence(r, clip.speech) };
  };
  await run(evalSet[0], true); // warm-up
  const lines = ['| set | clips | audio | VAD | WER (errors/words) | time | RTF | time ÷ off | words in silence |', '| --- | --- | --- | --- | --- | --- | --- | --- | --- |'];
  for (const [label, clips] of Object.entries(sets)) {
    const totals = { off: { errors: 0, words: 0, ms: 0, inSilence: 0 }, on: { errors: 0, words: 0, ms: 0, inSilence: 0 } };
    for (const [i, clip] of clips.entries()) {
      // Alternate which goes first, so neither always meets a warmer cache.
      for (const vad of i % 2 ? [true, false] : [false, true]) {
        const o = await run(clip, vad);
        const t = totals[vad ? 'on' : 'off'];
        t.errors += o.errors; t.words += o.words; t.ms += o.ms; t.inSilence += o.inSilence;
      }
      process.stdout.write('.');
    }
    const seconds = clips.reduce((a, c) => a + c.seconds, 0);
    for (const key of ['off', 'on'] as const) {
      const t = totals[key];
      lines.push(`| ${label} | ${clips.length} | ${fmt(seconds, 0)} s | ${key} | ${fmt((100 * t.errors) / t.words, 2)} % (${t.errors}/${t.words}) | ${fmt(t.ms / 1000, 1)} s | ${fmt(t.ms / 1000 / seconds, 3)} | ${fmt(t.ms / totals.off.ms, 2)} | ${clips[0].speech ? t.inSilence : '—'} |`);
    }
  }
  process.stdout.write('\n');
  await model.dispose();
  const md = [
    `# Silero VAD on and off, ${today()}`, '',
    `\`npx tsx benchmarks/studies/vad.ts --model ${name}${fallback ? ' --fallback' : ''}\`: real Whisper ${name}, the addon in-process, ${THREADS} threads, greedy, English, temperature fallback ${fallback ? 'on (whisper.cpp default)' : 'off'}, ${os.cpus().length} cores (${os.cpus()[0]?.model}). VAD: Silero v6.2.0 with whisper.cpp's default parameters (threshold 0.5, 250 ms minimum speech, 100 ms minimum silence, 30 ms padding); its time counts in "on".`,
    'Gapped clips: five consecutive hifitts utterances each, 5-60 s of uniform noise at about -56 dBFS before and after each (seeded). "Words in silence": words whose start lies more than 0.3 s outside every utterance.', '',
    ...lines, '',
  ].join('\n');
  saveReport(`vad-${today()}-${name}${fallback ? '-fallback' : ''}`, md);
}

main().catch((err) => {
  process.stderr.write(`vad: ${(err as Error).stack}\n`);
  process.exit(1);
});
