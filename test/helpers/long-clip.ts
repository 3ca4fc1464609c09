// A long clip of real speech with its reference: whole clips of the shared
// corpus (one speaker of hifitts), in order, until a length is reached.
import { readFileSync } from 'node:fs';
import { readPcm16Mono, writeWav } from './wav-writer';
import { evalClips } from '../../benchmarks/lib/eval-clips';

/** Whole clips of the shared corpus, in order, until `seconds`: a long clip that ends between words, and its reference. */
export function longClip(seconds: number): { wav: Buffer; reference: string } {
  const parts: Float32Array[] = [];
  const references: string[] = [];
  let samples = 0;
  for (const clip of evalClips().filter((c) => c.set === 'hifitts_6097')) {
    if (samples >= seconds * 16000) break;
    const pcm = readPcm16Mono(readFileSync(clip.file)).samples;
    parts.push(pcm);
    references.push(clip.reference);
    samples += pcm.length;
  }
  const all = new Float32Array(samples);
  parts.reduce((at, p) => (all.set(p, at), at + p.length), 0);
  return { wav: writeWav({ rate: 16000, encoding: 'pcm_s16', channels: [all] }), reference: references.join(' ') };
}

