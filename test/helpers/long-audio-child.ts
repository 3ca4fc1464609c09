// Child process for test/native/long-audio.test.ts: builds a long input
// itself (so the parent never holds it), transcribes it once, and prints one
// line of JSON: its peak RSS and the segments' (and words') times. Running in
// a process of its own makes process.resourceUsage().maxRSS this one job's peak.
// Usage: node --import tsx test/helpers/long-audio-child.ts '<Job as JSON>'
import { readFileSync } from 'node:fs';
import { loadModel, type TranscribeOptions } from '../../src/native';
import { longClip } from './long-clip';
import { readPcm16Mono } from './wav-writer';

export type Input =
  /** Tones and noise bursts with a 0.6-s pause (quiet noise) every 20 s: the pieces are cut at the pauses. */
  | 'paused'
  /** The same sound with no pause anywhere: the pieces overlap by 2 s. */
  | 'unbroken'
  /** Real speech (hifitts clips joined, test/helpers/long-clip.ts). */
  | 'speech';

export interface Job {
  model: string;
  seconds: number;
  input: Input;
  options: Omit<TranscribeOptions, 'signal' | 'control'>;
}

export interface SegmentSummary {
  start: number;
  end: number;
  /** Start of the segment's window, in mel frames (100 a second): Whisper's 30-s window; 0 for Parakeet. */
  seek: number;
  /** Text tokens. */
  tokens: number;
  /** [start, end] of each word (with wordTimestamps). */
  words: [number, number][];
}

export interface Summary {
  /** Peak resident set of the child, KiB (process.resourceUsage().maxRSS). */
  maxRSS: number;
  /** maxRSS once the input was built and the model loaded, before transcribing, KiB. */
  rssBeforeTranscribe: number;
  /** Seconds of audio sent, and the duration the transcription reports. */
  seconds: number;
  duration: number;
  segments: SegmentSummary[];
  /** Wall time of transcribe(), seconds (reported, never asserted). */
  transcribeSeconds: number;
}

export const RATE = 16000;
/** Where the `paused` input pauses, and for how long. */
export const PAUSE_EVERY = 20;
export const PAUSE_LENGTH = 0.6;

/**
 * Never silent: a tone always sounds (0.3 of full scale, its pitch changing
 * every 0.4 s), with a burst of noise (0.3) for 0.3 s of every 1.5 s. Every
 * 0.2 s of it has a mean square of at least 0.045, far above 1 % of the median
 * 20-ms frame's, so plan_pieces finds no pause in it. `paused` puts 0.6 s of
 * quiet noise (0.002 of full scale, a mean square of ~1e-6) at every multiple
 * of 20 s. Seeded: the same bytes every run.
 */
export function synthetic(seconds: number, paused: boolean): Float32Array {
  const n = Math.round(seconds * RATE);
  const pcm = new Float32Array(n);
  const pitches = [220, 330, 440, 587, 740, 880, 1175];
  let seed = 0x1ead;
  const noise = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  let phase = 0;
  const toneStep = Math.round(0.4 * RATE);
  const burstEvery = Math.round(1.5 * RATE);
  const burstLength = Math.round(0.3 * RATE);
  const pauseEvery = PAUSE_EVERY * RATE;
  const pauseLength = Math.round(PAUSE_LENGTH * RATE);
  for (let i = 0; i < n; i++) {
    if (paused && i >= pauseEvery && i % pauseEvery < pauseLength) {
      pcm[i] = 0.002 * noise();
      continue;
    }
    phase += (2 * Math.PI * pitches[Math.floor(i / toneStep) % pitches.length]) / RATE;
    let v = 0.3 * Math.sin(phase);
    if (i % burstEvery < burstLength) v += 0.3 * noise();
    pcm[i] = v;
  }
  return pcm;
}

function build(job: Job): Float32Array {
  if (job.input === 'speech') return readPcm16Mono(longClip(job.seconds).wav).samples;
  return synthetic(job.seconds, job.input === 'paused');
}

if (require.main === module) {
  (async () => {
    const job = JSON.parse(process.argv[2] ?? readFileSync(0, 'utf8')) as Job;
    const pcm = build(job);
    const model = await loadModel(job.model);
    const rssBeforeTranscribe = process.resourceUsage().maxRSS;
    const t0 = process.hrtime.bigint();
    const result = await model.transcribe(pcm, job.options);
    const transcribeSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
    await model.dispose();
    const summary: Summary = {
      maxRSS: process.resourceUsage().maxRSS,
      rssBeforeTranscribe,
      seconds: pcm.length / RATE,
      duration: result.duration,
      segments: result.segments.map((s) => ({
        start: s.start,
        end: s.end,
        seek: s.seek,
        tokens: s.tokens.length,
        words: (s.words ?? []).map((w): [number, number] => [w.start, w.end]),
      })),
      transcribeSeconds,
    };
    process.stdout.write(`SUMMARY ${JSON.stringify(summary)}\n`);
  })().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
