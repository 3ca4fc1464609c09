// `npx tsx benchmarks/studies/pauses.ts [--pairs 16] [--rescore FILE]`: is
// speech after a long pause kept, greedy against beam 5?
// (--rescore: the tables again from a report's JSON, nothing decoded.)
//
// Why: on JFK, a minute of quiet and JFK again, greedy decoding loses the
// second sentence where beam 5 keeps it, and every clip of the eval set is
// one window of speech, so `npm run eval` cannot see such a loss. Here held-out speech (the eval
// set's test half, English clips of 3-20 s, none tuned on) is joined in
// pairs: A, a pause of 10, 30 or 60 s, B, a second of the same quiet. The
// quiet is digital zero for even pairs and faint noise (uniform, 0.003, as
// fixtures/clips.ts' gappedClip) for odd ones. Each recording goes to ours
// greedy and beam 5 (the full window, temperature fallback as shipped; with
// no Silero model, and with it installed, so the speech gate runs) and to
// faster-whisper greedy and beam 5 (int8, its fallback), in turn, the order
// rotated, language given.
//
// A part (A or B) counts as lost when fewer than half its words are found in
// an alignment of the answer against A + B (benchmarks/lib/scoring.ts
// partsFound). Differences between two systems are read with a paired
// bootstrap over the pairs of clips (95 %): a pair's three recordings are
// not independent of each other.
import { createReadStream, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeWav } from '../../src/native';
import { readEvalSet, type EvalSetClip } from '../../scripts/eval-set';
import { wav16k } from '../../fixtures';
import { startOurs, type OurConfig } from '../lib/eval-server';
import { modelDir, startFasterWhisper } from '../faster-whisper';
import { alignErrors, errorCount, failuresOf, partsFound, scoringWords, type Errors } from '../lib/scoring';
import { provenance, commitState } from '../lib/provenance';
import { saveReport, today } from '../lib/results';
import { fmt, seededRandom } from '../lib/stats';

const RATE = 16000;
const GAPS_S = [10, 30, 60];
const NOISE = 0.003;
const SETTLE_MS = 100;
const LOST_BELOW = 0.5;
const THREADS = 2;

type System =
  | { id: string; label: string; kind: 'ours'; config: OurConfig; silero: boolean }
  | { id: string; label: string; kind: 'fw'; beam: number };
const SYSTEMS: System[] = [
  { id: 'ours-g', label: 'ours greedy, no Silero', kind: 'ours', config: { beam: 1, window: 'full' }, silero: false },
  { id: 'ours-b5', label: 'ours beam 5, no Silero', kind: 'ours', config: { beam: 5, window: 'full' }, silero: false },
  { id: 'ours-g-gate', label: 'ours greedy, speech gate', kind: 'ours', config: { beam: 1, window: 'full' }, silero: true },
  { id: 'ours-b5-gate', label: 'ours beam 5, speech gate', kind: 'ours', config: { beam: 5, window: 'full' }, silero: true },
  { id: 'fw-g', label: 'faster-whisper int8, greedy', kind: 'fw', beam: 1 },
  { id: 'fw-b5', label: 'faster-whisper int8, beam 5', kind: 'fw', beam: 5 },
];
/** The pairs read against each other: the default's question first. */
const COMPARED: [string, string][] = [['ours-g', 'ours-b5'], ['ours-g-gate', 'ours-b5-gate'], ['ours-b5', 'fw-b5'], ['fw-g', 'fw-b5']];

interface Recording { id: string; pair: number; file: string; seconds: number; gap: number; quiet: 'digital' | 'noise'; a: string[]; b: string[] }
interface SavedPauses { date: string; command: string; provenance: ReturnType<typeof provenance>; versions: Record<string, string>; recordings: (Omit<Recording, 'file'> & { runs: Record<string, { text: string; ms: number }> })[] }
interface Run { text: string; ms: number; foundA: number; foundB: number; errors: Errors }

async function recordings(pairs: number, dir: string): Promise<Recording[]> {
  const pool = readEvalSet().filter((c) => c.split === 'test' && c.language === 'en' && c.seconds >= 3 && c.seconds <= 20).sort((x, y) => x.id.localeCompare(y.id));
  const rand = seededRandom(7);
  for (let i = pool.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  if (pool.length < 2 * pairs) throw new Error(`the test half has ${pool.length} English clips of 3-20 s, ${2 * pairs} asked for`);
  const pcmOf = async (c: EvalSetClip) => (await decodeWav(readFileSync(c.file))).pcm;
  const out: Recording[] = [];
  for (let k = 0; k < pairs; k++) {
    const [ca, cb] = [pool[2 * k], pool[2 * k + 1]];
    const [pa, pb] = [await pcmOf(ca), await pcmOf(cb)];
    const quiet = k % 2 === 0 ? 'digital' : 'noise';
    for (const gap of GAPS_S) {
      const pcm = new Float32Array(pa.length + gap * RATE + pb.length + RATE);
      if (quiet === 'noise') {
        const r = seededRandom(1000 * k + gap);
        for (let i = 0; i < pcm.length; i++) pcm[i] = (r() * 2 - 1) * NOISE;
      }
      const add = (src: Float32Array, at: number) => { for (let i = 0; i < src.length; i++) pcm[at + i] += src[i]; };
      add(pa, 0);
      add(pb, pa.length + gap * RATE);
      const id = `${ca.id}+${gap}s+${cb.id}`;
      const file = path.join(dir, `${k}-${gap}.wav`);
      writeFileSync(file, wav16k(pcm));
      out.push({ id, pair: k, file, seconds: pcm.length / RATE, gap, quiet, a: scoringWords(ca.reference, 'en'), b: scoringWords(cb.reference, 'en') });
    }
  }
  return out;
}

/**
 * A paired bootstrap over clusters (the pairs of clips): the point value and
 * 95 % interval of stat over the recordings of the clusters drawn.
 */
function clusterBootstrap(clusters: number[][], stat: (idx: number[]) => number, rounds = 2000): [number, number, number] {
  const rand = seededRandom(1);
  const all = clusters.map((_, i) => i);
  const pick = (drawn: number[]) => drawn.flatMap((c) => clusters[c]);
  const draws = Array.from({ length: rounds }, () => stat(pick(all.map(() => Math.floor(rand() * all.length))))).sort((p, q) => p - q);
  return [stat(pick(all)), draws[Math.round(0.025 * (rounds - 1))], draws[Math.round(0.975 * (rounds - 1))]];
}

type Answers = Record<string, { text: string; ms: number }[]>;

/** The recordings, decoded by every system in turn (the order rotated), one warm-up each. */
async function measure(pairs: number): Promise<{ prov: ReturnType<typeof provenance>; versions: Record<string, string>; recs: Recording[]; answers: Answers }> {
  const prov = provenance();
  const recs = await recordings(pairs, mkdtempSync(path.join(os.tmpdir(), 'stt-pauses-')));
  const ours = new Map<string, Awaited<ReturnType<typeof startOurs>>>();
  for (const s of SYSTEMS) if (s.kind === 'ours') ours.set(s.id, await startOurs(s.config, { silero: s.silero }));
  const fw = startFasterWhisper(modelDir());
  const versions = await fw.versions;
  const ask = async (s: System, file: string): Promise<{ text: string; ms: number }> => {
    await sleep(SETTLE_MS);
    if (s.kind === 'fw') return fw.ask({ wav: file, compute_type: 'int8', beam_size: s.beam, language: 'en', fallback: true });
    const t0 = performance.now();
    const r = await ours.get(s.id)!.client.audio.transcriptions.create({ file: createReadStream(file), model: 'service-local-stt', language: 'en' });
    return { text: r.text, ms: performance.now() - t0 };
  };
  for (const s of SYSTEMS) await ask(s, recs[0].file); // warm-up, not counted
  const answers: Answers = Object.fromEntries(SYSTEMS.map((s) => [s.id, []]));
  for (const [i, rec] of recs.entries()) {
    for (const k of SYSTEMS.map((_, n) => (n + i) % SYSTEMS.length)) {
      const r = await ask(SYSTEMS[k], rec.file);
      answers[SYSTEMS[k].id][i] = { text: r.text.trim(), ms: r.ms };
    }
    process.stdout.write('.');
  }
  process.stdout.write('\n');
  await fw.stop();
  for (const o of ours.values()) await o.close();
  return { prov, versions, recs, answers };
}

/** A saved report's recordings and answers (its first runs had no pair number: three recordings a pair, in order). */
function fromSaved(saved: SavedPauses): { prov: ReturnType<typeof provenance>; versions: Record<string, string>; recs: Recording[]; answers: Answers } {
  const recs = saved.recordings.map((r, i) => ({ ...r, pair: r.pair ?? Math.floor(i / GAPS_S.length), file: '' }));
  const answers: Answers = Object.fromEntries(SYSTEMS.map((s) => [s.id, saved.recordings.map((r) => ({ text: r.runs[s.id].text, ms: r.runs[s.id].ms }))]));
  return { prov: saved.provenance, versions: saved.versions, recs, answers };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const saved = args.includes('--rescore') ? JSON.parse(readFileSync(args[args.indexOf('--rescore') + 1], 'utf8')) as SavedPauses : null;
  const { prov, versions, recs, answers } = saved ? fromSaved(saved) : await measure(args.includes('--pairs') ? Number(args[args.indexOf('--pairs') + 1]) : 16);
  const pairs = new Set(recs.map((r) => r.pair)).size;
  // Scored here, from the answers' text, so a report's JSON can be scored again.
  const runs: Record<string, Run[]> = Object.fromEntries(SYSTEMS.map((s) => [s.id, recs.map((rec, i) => {
    const { text, ms } = answers[s.id][i];
    const words = scoringWords(text, 'en');
    return { text, ms, ...partsFound(words, rec.a, rec.b), errors: alignErrors([...rec.a, ...rec.b], words) };
  })]));

  const lost = (id: string) => runs[id].map((r) => Number(r.foundA < LOST_BELOW) + Number(r.foundB < LOST_BELOW));
  const loops = (id: string) => runs[id].filter((r, i) => failuresOf([...recs[i].a, ...recs[i].b], scoringWords(r.text, 'en')).loop).length;
  const table = [
    `| system | parts lost (of ${2 * recs.length}) | A lost | B lost | by pause ${GAPS_S.map((g) => `${g} s`).join(' / ')}: parts lost | loops | WER % | time s |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const s of SYSTEMS) {
    const rs = runs[s.id];
    const l = lost(s.id);
    const e = rs.reduce((n, r) => n + errorCount(r.errors), 0);
    const w = rs.reduce((n, r) => n + r.errors.words, 0);
    const byGap = GAPS_S.map((g) => recs.reduce((n, rec, i) => n + (rec.gap === g ? l[i] : 0), 0)).join(' / ');
    table.push(`| ${s.label} | ${l.reduce((a, b) => a + b, 0)} | ${rs.filter((r) => r.foundA < LOST_BELOW).length} | ${rs.filter((r) => r.foundB < LOST_BELOW).length} | ${byGap} | ${loops(s.id)} | ${fmt((100 * e) / w, 2)} | ${fmt(rs.reduce((n, r) => n + r.ms, 0) / 1000, 1)} |`);
  }
  const clusters = [...new Set(recs.map((r) => r.pair))].map((k) => recs.flatMap((r, i) => (r.pair === k ? [i] : [])));
  const sum = (idx: number[], f: (i: number) => number) => idx.reduce((n, i) => n + f(i), 0);
  const points = (x: number) => `${x >= 0 ? '+' : ''}${fmt(x, 1)}`;
  const interval = ([v, lo, hi]: [number, number, number], f: (x: number) => string) => `${f(v)} (${f(lo)} .. ${f(hi)})`;
  const compared = COMPARED.map(([x, y]) => {
    const [lx, ly, rx, ry] = [lost(x), lost(y), runs[x], runs[y]];
    const lostPoints = clusterBootstrap(clusters, (idx) => (100 * sum(idx, (i) => lx[i] - ly[i])) / (2 * idx.length));
    const werPoints = clusterBootstrap(clusters, (idx) => 100 * (sum(idx, (i) => errorCount(rx[i].errors)) - sum(idx, (i) => errorCount(ry[i].errors))) / sum(idx, (i) => rx[i].errors.words));
    const time = clusterBootstrap(clusters, (idx) => sum(idx, (i) => rx[i].ms) / sum(idx, (i) => ry[i].ms));
    return `- ${x} against ${y}: parts lost ${interval(lostPoints, points)} points of all parts; WER ${interval(werPoints, points)} points; time ${interval(time, (t) => `${fmt(t, 2)}x`)}.`;
  });
  const losses = recs.flatMap((rec, i) => SYSTEMS.filter((s) => runs[s.id][i].foundA < LOST_BELOW || runs[s.id][i].foundB < LOST_BELOW)
    .map((s) => `- ${rec.id} (${rec.quiet} quiet), ${s.id}: A ${fmt(100 * runs[s.id][i].foundA, 0)} %, B ${fmt(100 * runs[s.id][i].foundB, 0)} % found: "${runs[s.id][i].text.slice(0, 160)}"`));

  const date = saved?.date ?? today();
  const command = saved?.command ?? `npx tsx benchmarks/studies/pauses.ts ${args.join(' ')}`.trim();
  const md = [
    `# Speech after a pause: greedy against beam 5, ${date}`, '',
    `\`${command}\`${saved ? ` (tables scored again by \`npx tsx benchmarks/studies/pauses.ts ${args.join(' ')}\`)` : ''}` + ` on commit ${commitState(prov)}; addon sha256 ${prov.binaries['stt_native.node']}; ${prov.cores} cores (${prov.cpu}), ${THREADS} threads each side.`,
    `${recs.length} recordings: ${pairs} pairs of held-out English clips (the eval set's test half, 3-20 s), each joined as A, a pause of ${GAPS_S.join(', ')} s, B, 1 s more; the quiet digital zero for even pairs, uniform noise of ${NOISE} for odd ones. ` +
      `Ours: the server over HTTP (the openai client), real base q8_0, the full window, temperature fallback as shipped, without the Silero model and with it (the speech gate, on by default when it is installed). ` +
      `faster-whisper ${versions['faster-whisper']}, int8, its fallback. Language given. A part is lost when fewer than ${100 * LOST_BELOW} % of its words are found in an alignment of the answer against A + B (a word both parts say counts for the part measured). Loops: a 4-gram said three or more times. Intervals: paired bootstrap over the ${pairs} pairs of clips (a pair's three recordings together), 2,000 resamples.`, '',
    ...table, '',
    '## Paired differences', '', ...compared, '',
    '## Every lost part', '', ...(losses.length ? losses : ['- none']), '',
  ].join('\n');
  const json: SavedPauses = { date, command, provenance: prov, versions, recordings: recs.map(({ file: _file, ...r }, i) => ({ ...r, runs: Object.fromEntries(SYSTEMS.map((s) => [s.id, runs[s.id][i]])) })) };
  saveReport(`pauses-${date}`, md, json);
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`pauses: ${(err as Error).stack}\n`);
    process.exit(1);
  });
}
