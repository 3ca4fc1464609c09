// What a change that is not bit for bit did to our texts: two saved eval
// reports (their JSON) of the same clips, the build before and the build
// after. For each of our systems in both: how many clips' texts changed,
// the WER of each and the difference after - before with its paired
// bootstrap 95 % interval over clips. Times are not compared: the two runs
// were not side by side (each report reads its own times against
// faster-whisper's in the same run).
// Usage: npx tsx benchmarks/studies/eval-diff.ts BEFORE.json AFTER.json
import { readFileSync } from 'node:fs';
import { corpusWer, pairedBootstrap, scoreAnswer, toPerClip, type PerClip } from '../lib/scoring.js';

interface Saved {
  provenance: { commit: string };
  clips: { id: string; reference: string; language: string; runs: Record<string, { text: string; ms: number }> }[];
}

const [beforeFile, afterFile] = process.argv.slice(2);
if (!beforeFile || !afterFile) throw new Error('usage: eval-diff.ts BEFORE.json AFTER.json');
const before = JSON.parse(readFileSync(beforeFile, 'utf8')) as Saved;
const after = JSON.parse(readFileSync(afterFile, 'utf8')) as Saved;
if (before.clips.map((c) => c.id).join() !== after.clips.map((c) => c.id).join()) throw new Error('the two reports are not of the same clips in the same order');

const ours = Object.keys(after.clips[0].runs).filter((id) => id.startsWith('ours-') && id in before.clips[0].runs);
// Scored again from the texts, so both reports are read with today's scoring; each system's clips once per report.
const perClip = (saved: Saved, id: string): PerClip[] => saved.clips.map((c) => toPerClip({ ms: c.runs[id].ms, ...scoreAnswer(c.reference, c.runs[id].text, c.language) }));
const scores = Object.fromEntries(ours.map((id) => [id, { before: perClip(before, id), after: perClip(after, id) }]));
const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(2)}`;

console.log(`before: ${before.provenance.commit.slice(0, 7)} (${beforeFile}); after: ${after.provenance.commit.slice(0, 7)} (${afterFile}); ${after.clips.length} clips`);
console.log('');
console.log('| system | texts changed | WER before % | WER after % | after − before, points (95 % CI) |');
console.log('| --- | --- | --- | --- | --- |');
for (const id of ours) {
  const changed = after.clips.filter((c, i) => c.runs[id].text !== before.clips[i].runs[id].text);
  const { before: b, after: a } = scores[id];
  const { werDiff } = pairedBootstrap(a, b);
  console.log(`| ${id} | ${changed.length} of ${after.clips.length} | ${corpusWer(b).toFixed(2)} | ${corpusWer(a).toFixed(2)} | ${signed(werDiff[0])} (${signed(werDiff[1])} .. ${signed(werDiff[2])}) |`);
}
for (const id of ours) {
  for (const [i, c] of after.clips.entries()) {
    const old = before.clips[i].runs[id];
    if (c.runs[id].text === old.text) continue;
    console.log(`\n${id} ${c.id}: errors ${scores[id].before[i].errors} → ${scores[id].after[i].errors}\n  before: ${old.text}\n  after:  ${c.runs[id].text}`);
  }
}
