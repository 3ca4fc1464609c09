// Real speech with long gaps of quiet noise between the utterances: whole
// clips of the shared corpus (one speaker of hifitts), in order, each
// followed by a gap. For VAD: what is said, and where, is known exactly.
import { readFileSync } from 'node:fs';
import { readPcm16Mono, writeWav } from './wav-writer';
import { evalClips } from '../../benchmarks/lib/eval-clips';

export interface GappedClip {
  wav: Buffer;
  pcm: Float32Array;
  reference: string;
  /** Where each utterance lies in the clip, in seconds. */
  speech: { start: number; end: number }[];
  seconds: number;
}

/**
 * `gaps[i]` seconds of noise follow utterance i (and one gap leads, gaps[0]
 * long), so the clip holds gaps.length utterances. The noise is uniform, at
 * `noise` of full scale (0.003: about -56 dBFS RMS, a quiet room), seeded so
 * every run builds the same bytes. `firstClip`: the corpus clip to start from.
 */
export function gappedClip(gaps: number[], noise = 0.003, firstClip = 0): GappedClip {
  const clips = evalClips().filter((c) => c.set === 'hifitts_6097').slice(firstClip, firstClip + gaps.length);
  if (clips.length < gaps.length) throw new Error(`the corpus has ${clips.length} hifitts clips, ${gaps.length} asked for`);
  const utterances = clips.map((c) => readPcm16Mono(readFileSync(c.file)).samples);
  const rate = 16000;
  const lead = Math.round(gaps[0] * rate);
  const total = lead + utterances.reduce((n, u, i) => n + u.length + Math.round(gaps[i] * rate), 0);
  const pcm = new Float32Array(total);
  let seed = 0x5eed;
  for (let i = 0; i < total; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    pcm[i] = ((seed / 2 ** 32) * 2 - 1) * noise;
  }
  const speech: GappedClip['speech'] = [];
  let at = lead;
  utterances.forEach((u, i) => {
    for (let j = 0; j < u.length; j++) pcm[at + j] += u[j];
    speech.push({ start: at / rate, end: (at + u.length) / rate });
    at += u.length + Math.round(gaps[i] * rate);
  });
  return {
    wav: writeWav({ rate, encoding: 'pcm_s16', channels: [pcm] }),
    pcm,
    reference: clips.map((c) => c.reference).join(' '),
    speech,
    seconds: total / rate,
  };
}
