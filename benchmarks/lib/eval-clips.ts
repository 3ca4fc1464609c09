// The evaluation set: every clip of ../shared/audio/manifest.tsv with its reference.
import { readFileSync } from 'node:fs';
import path from 'node:path';

export const AUDIO = path.resolve(__dirname, '..', '..', '..', 'shared', 'audio');

export interface EvalClip {
  set: string;
  id: string;
  file: string;
  seconds: number;
  reference: string;
}

export function evalClips(): EvalClip[] {
  const [, ...rows] = readFileSync(path.join(AUDIO, 'manifest.tsv'), 'utf8').trim().split('\n');
  return rows.map((row) => {
    const [set, rel, , seconds, , reference] = row.split('\t');
    return { set, id: path.basename(rel, '.wav'), file: path.join(AUDIO, rel), seconds: Number(seconds), reference };
  });
}
