// Speech clips of a given length, built by concatenating the shared corpus
// (16 kHz mono PCM16) in manifest order.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AUDIO_DIR } from './paths';
import { readPcm16Mono, writeWav } from './wav-writer';

let corpus: Float32Array | null = null;

function loadCorpus(): Float32Array {
  if (corpus) return corpus;
  const rows = readFileSync(path.join(AUDIO_DIR, 'manifest.tsv'), 'utf8').trim().split('\n').slice(1);
  const parts = rows.map((r) => readPcm16Mono(readFileSync(path.join(AUDIO_DIR, r.split('\t')[1]))).samples);
  const total = parts.reduce((n, p) => n + p.length, 0);
  corpus = new Float32Array(total);
  let at = 0;
  for (const p of parts) {
    corpus.set(p, at);
    at += p.length;
  }
  return corpus;
}

export function speechClip(seconds: number): Buffer {
  const all = loadCorpus();
  const n = Math.round(seconds * 16000);
  if (n > all.length) throw new Error(`corpus has only ${all.length / 16000} s`);
  return writeWav({ rate: 16000, encoding: 'pcm_s16', channels: [all.slice(0, n)] });
}
