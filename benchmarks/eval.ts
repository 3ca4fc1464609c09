// `npm run eval`: accuracy and time of this server against faster-whisper on
// the held-out set (`npm run eval:set`), one half at a time: `--split dev`
// for choosing settings, `--split test` (the default) for reporting them.
//
// Every clip goes to every system in turn, the order rotated clip by clip, one
// request at a time: ours through the server over HTTP with the official
// openai client (each configuration its own server in this process, real
// base q8_0), faster-whisper 1.2.1 in its own Python process on the same
// CTranslate2 weights (int8, cpu_threads 2). Each difference is read against
// faster-whisper's defaults (int8, beam 5, temperature fallback) with a
// paired bootstrap 95 % interval over clips, and the default is chosen by
// rule: the cheapest of ours whose WER is within 0.3 points of it, a window
// other than full only where it is shown to cost nothing, else beam 5 full.
// Ours against faster-whisper with the same decoding is read three ways: the
// clips' total times, the median clip's ratio, and apart on the clips where
// faster-whisper made one pass and where it made more (a second window where
// the text of its first stopped short of the end, or a fallback temperature),
// which the runner counts.
// Usage: tsx benchmarks/eval.ts [--split dev|test|all] [--limit N] [--systems id,id] [--rescore FILE] [--name SUFFIX]
//   [--pool-reference FILE,FILE] [--panel ends|noise|accents]
// (--systems: a subset of SYSTEMS by id; the reference is always run;
// --rescore: the tables again from a report's JSON, nothing decoded: its texts scored again, with today's scoring;
// --pool-reference: the rule read once more against faster-whisper's default
// pooled over this run and the saved runs named, which must be of the same
// clips, faster-whisper version and CPU flags: its temperature fallback
// samples, so one run is a noisy reference;
// --panel ends: the half's clips cut where their sound ends, so no pause
// follows the last word; --panel noise: the half's clips with a real noise
// recording added; --panel accents: Common Voice clips, a source outside
// the set, split the same way (all three scripts/eval-set.ts); its own
// report, and no rule read on it: the default is chosen on the whole half;
// --split all reads both halves of a panel outside the set (accents) together,
// as nothing is chosen on it; a rescore is of its report's half and panel).
// ours-b5-full-f16 (beam 5 on the f16 weights q8_0 is quantised from) runs
// only when --systems names it: it asks whether q8_0 costs beam 5 accuracy,
// and is no candidate for the default, which ships q8_0.
import { createReadStream, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { ENCODER_WINDOW_RULES } from '../src/stt/local/encoder-window';
import { EVAL_SET_MANIFEST, EVAL_SET_PANELS, readEvalSet, type EvalSetClip } from '../scripts/eval-set';
import { modelDir, startFasterWhisper } from './faster-whisper';
import { corpusWer, errorCount, meanOverRuns, medianClipRatio, pairedBootstrap, scoreAnswer, toPerClip, type Errors, type Failures, type PerClip } from './lib/scoring';
import { numberOption, optionValue, reportSuffix } from './lib/args';
import { provenance, commitState } from './lib/provenance';
import { saveReport, today } from './lib/results';
import { fmt } from './lib/stats';
import { holdingOf, windowCostsNothing, WITHIN_POINTS } from './lib/default-rule';
import { EVAL_THREADS as THREADS, startOurs, type EvalServer, type OurConfig } from './lib/eval-server';

// So that neither side's worker threads are still busy when the other starts on 2 cores.
const SETTLE_MS = 100;
/** The duration bands every table is also read in, in seconds. */
const BANDS: [number, number][] = [[0, 5], [5, 10], [10, 20], [20, 30.01]];

/** onlyWhenNamed: a diagnostic, run only when --systems names it. */
type System = { id: string; label: string; autoLanguage?: boolean; onlyWhenNamed?: boolean } & (
  | { kind: 'ours'; config: OurConfig }
  | { kind: 'fw'; beam: number });

const SYSTEMS: System[] = [
  { id: 'fw-b5', label: 'faster-whisper int8, beam 5 (its defaults)', kind: 'fw', beam: 5 },
  { id: 'fw-g', label: 'faster-whisper int8, greedy', kind: 'fw', beam: 1 },
  { id: 'ours-g-tail', label: 'ours q8_0, greedy, tail window', kind: 'ours', config: { beam: 1, window: 'tail' } },
  { id: 'ours-g-full', label: 'ours q8_0, greedy, full window', kind: 'ours', config: { beam: 1, window: 'full' } },
  { id: 'ours-b5-tail', label: 'ours q8_0, beam 5, tail window', kind: 'ours', config: { beam: 5, window: 'tail' } },
  { id: 'ours-b5-full', label: 'ours q8_0, beam 5, full window', kind: 'ours', config: { beam: 5, window: 'full' } },
  { id: 'ours-b5-full-f16', label: 'ours f16, beam 5, full window', kind: 'ours', config: { beam: 5, window: 'full', weights: 'base-f16' }, onlyWhenNamed: true },
  { id: 'fw-b5-auto', label: 'faster-whisper int8, beam 5, no language', kind: 'fw', beam: 5, autoLanguage: true },
  { id: 'ours-shipped-auto', label: 'ours as shipped, no language', kind: 'ours', config: { beam: 0, window: 'full' }, autoLanguage: true }, // beam 0: the shipped defaults (the window is not set)
];
const REFERENCE = 'fw-b5';

/** faster-whisper's passes on a clip: 30-s windows encoded, and decodes (one per window, plus one per fallback temperature). */
interface Passes { windows: number; decodes: number }
interface Result { text: string; ms: number; errors: Errors; failures: Failures; passes?: Passes }

/** What a report's JSON keeps: enough to print its tables again (`--rescore`). */
interface SavedEval {
  split: string;
  /** The panel the clips came from ("ends", "noise"), absent for the set itself. */
  panel?: string;
  /** How the panel was made, as the run's code said: a rescore prints it, not today's. */
  panelRule?: string;
  date?: string;
  command?: string;
  provenance: ReturnType<typeof provenance>;
  versions: Record<string, string>;
  clips: { id: string; source?: string; seconds: number; language: string; reference: string; runs: Record<string, Result> }[];
}

/** A system's answer on a clip, scored. Saved runs are scored again from their texts, so a report rescored reads today's scoring. */
function scored(clip: { reference: string; language: string }, text: string, ms: number, passes?: Passes): Result {
  return { text: text.trim(), ms, ...scoreAnswer(clip.reference, text, clip.language), ...(passes ? { passes } : {}) };
}

/** The saved runs, on the saved clips (which replace `clips`' contents) and the systems they hold. */
function fromSaved(saved: SavedEval, clips: EvalSetClip[]): { results: Record<string, Result[]>; versions: Record<string, string> } {
  clips.splice(0, clips.length, ...saved.clips.map((c) => ({ id: c.id, source: c.source ?? c.id.split('/')[0], language: c.language, seconds: c.seconds, split: saved.split as 'dev' | 'test', file: '', reference: c.reference })));
  const held = Object.keys(saved.clips[0].runs);
  SYSTEMS.splice(0, SYSTEMS.length, ...SYSTEMS.filter((s) => held.includes(s.id)));
  return { results: Object.fromEntries(held.map((id) => [id, saved.clips.map((c) => scored(c, c.runs[id].text, c.runs[id].ms, c.runs[id].passes))])), versions: saved.versions };
}

/**
 * The reference's per-clip results in saved runs, checked to be comparable
 * with this one: the same split and clips, faster-whisper version and CPU
 * flags (CTranslate2 picks its kernels by instruction set), and not this run again.
 */
function savedReferenceRuns(files: string[], split: string, clips: EvalSetClip[], versions: Record<string, string>, cpuFlags: string[], thisRun: Result[]): Result[][] {
  // A run is known by its reference's times: a report rescored under another name holds the same run.
  const timesOf = (saved: SavedEval) => saved.clips.map((c) => c.runs[REFERENCE].ms).join(',');
  const seen = [thisRun.map((r) => r.ms).join(',')];
  return files.map((file) => {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as SavedEval;
    const why =
      saved.split !== split ? `it is of the ${saved.split} half` :
      saved.clips.length !== clips.length || saved.clips.some((c, i) => c.id !== clips[i].id) ? 'its clips are not these' :
      !saved.clips.every((c) => c.runs[REFERENCE]) ? `it has no ${REFERENCE} run` :
      ['faster-whisper', 'ctranslate2'].some((k) => saved.versions[k] !== versions[k]) ? `its faster-whisper is ${saved.versions['faster-whisper']} / CTranslate2 ${saved.versions.ctranslate2}` :
      [...saved.provenance.cpuFlags].sort().join(' ') !== [...cpuFlags].sort().join(' ') ? 'it ran on a CPU with other flags' :
      seen.includes(timesOf(saved)) ? 'it is this run or one already named' : null;
    if (why) throw new Error(`--pool-reference ${file}: ${why}`);
    seen.push(timesOf(saved));
    return saved.clips.map((c) => scored(c, c.runs[REFERENCE].text, c.runs[REFERENCE].ms));
  });
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  // --rescore FILE: the tables again from a saved report's JSON, nothing decoded (its clips and systems).
  const rescoreFile = optionValue(args, '--rescore');
  const rescore = rescoreFile ? JSON.parse(readFileSync(rescoreFile, 'utf8')) as SavedEval : null;
  // A rescored report is of the half (or both) and the panel its run read: its name and title say so.
  const splitFlag = optionValue(args, '--split');
  if (rescore && splitFlag !== undefined && splitFlag !== rescore.split) throw new Error(`--split ${splitFlag}: ${rescoreFile} is of ${rescore.split === 'all' ? 'both halves' : `the ${rescore.split} half`}`);
  const split = rescore ? rescore.split : splitFlag ?? 'test';
  if (split !== 'dev' && split !== 'test' && split !== 'all') throw new Error('--split is dev, test or (with a panel outside the set) all');
  const limit = numberOption(args, '--limit', Infinity);
  // --name: a part-run (other systems, fewer clips) goes beside the full report, not over it. Read
  // before the run, so a bad name stops it at once, not after the decoding.
  const name = reportSuffix(args);
  const panelFlag = optionValue(args, '--panel');
  if (panelFlag !== undefined && !Object.hasOwn(EVAL_SET_PANELS, panelFlag)) throw new Error(`--panel is one of ${Object.keys(EVAL_SET_PANELS).join(', ')}`);
  const panel = rescore ? rescore.panel : panelFlag;
  if (rescore && panelFlag !== undefined && panelFlag !== rescore.panel) throw new Error(`--panel ${panelFlag}: ${rescoreFile} is ${rescore.panel ? `of the ${rescore.panel} panel` : 'of the set itself'}`);
  // The set's halves are never read together (settings are chosen on dev), nor are those of the panels
  // made from its clips; a panel of other clips, where nothing is chosen, may be.
  if (split === 'all' && !(panel && EVAL_SET_PANELS[panel].outsideSet)) {
    throw new Error(`--split all reads both halves of a panel outside the set (${Object.keys(EVAL_SET_PANELS).filter((p) => EVAL_SET_PANELS[p].outsideSet).join(', ')}); the set and its own panels are read one half at a time`);
  }
  const clips = readEvalSet(panelFlag ? EVAL_SET_PANELS[panelFlag].manifest : EVAL_SET_MANIFEST).filter((c) => split === 'all' || c.split === split).slice(0, limit);
  const systems = optionValue(args, '--systems');
  const wanted = systems ? new Set([REFERENCE, ...systems.split(',')]) : null;
  const unknown = [...(wanted ?? [])].filter((id) => !SYSTEMS.some((s) => s.id === id));
  if (unknown.length) throw new Error(`--systems: no system ${unknown.join(', ')}; the systems are ${SYSTEMS.map((s) => s.id).join(', ')}`);
  // A rescore keeps every system its report holds (fromSaved), those run only when named too.
  SYSTEMS.splice(0, SYSTEMS.length, ...SYSTEMS.filter((s) => (wanted ? wanted.has(s.id) : rescoreFile !== undefined || !s.onlyWhenNamed)));
  if (panel && optionValue(args, '--pool-reference')) throw new Error('--pool-reference reads the rule, which is read on the whole half, not on a panel');
  // A rescored report keeps the run's provenance and names the commit whose scoring read it.
  const scoredAt = provenance();
  const prov = rescore ? rescore.provenance : scoredAt;
  if (prov.uncommitted.length) process.stderr.write(`eval: uncommitted changes (${prov.uncommitted.join(', ')}): the report will say so\n`);
  const measure = async (): Promise<{ results: Record<string, Result[]>; versions: Record<string, string> }> => {

    const ours = new Map<string, EvalServer>();
    for (const s of SYSTEMS) if (s.kind === 'ours') ours.set(s.id, await startOurs(s.config));
    const fw = startFasterWhisper(modelDir());
    const versions = await fw.versions;

    const run = async (s: System, clip: EvalSetClip): Promise<{ text: string; ms: number; passes?: Passes }> => {
      await sleep(SETTLE_MS);
      const language = s.autoLanguage ? undefined : clip.language;
      if (s.kind === 'fw') {
        const r = await fw.ask({ wav: clip.file, compute_type: 'int8', beam_size: s.beam, language: language ?? null, fallback: true });
        // The runner counts through faster-whisper's internals; a version that encodes another way counts no window: then no passes.
        return { text: r.text, ms: r.ms, passes: r.windows >= 1 ? { windows: r.windows, decodes: r.decodes } : undefined };
      }
      const t0 = performance.now();
      const r = await ours.get(s.id)!.client.audio.transcriptions.create({ file: createReadStream(clip.file), model: 'service-local-stt', ...(language ? { language } : {}) });
      return { text: r.text, ms: performance.now() - t0 };
    };

    for (const s of SYSTEMS) await run(s, clips[0]); // warm-up, not counted
    const results: Record<string, Result[]> = Object.fromEntries(SYSTEMS.map((s) => [s.id, []]));
    for (const [i, clip] of clips.entries()) {
      const order = SYSTEMS.map((_, k) => (k + i) % SYSTEMS.length);
      for (const k of order) {
        const s = SYSTEMS[k];
        const r = await run(s, clip);
        results[s.id][i] = scored(clip, r.text, r.ms, r.passes);
      }
      process.stdout.write('.');
    }
    process.stdout.write('\n');
    await fw.stop();
    for (const o of ours.values()) await o.close();
    return { results, versions };
  };
  const { results, versions } = rescore ? fromSaved(rescore, clips) : await measure();

  const perClip = (id: string, idx: number[]): PerClip[] => idx.map((i) => toPerClip(results[id][i]));
  const all = clips.map((_, i) => i);
  const pct = (x: number) => `${fmt(x, 2)}`;
  const signed = (x: number) => `${x >= 0 ? '+' : ''}${fmt(x, 2)}`;
  const vs = (id: string, idx: number[]) => {
    const b = pairedBootstrap(perClip(id, idx), perClip(REFERENCE, idx));
    return { b, wer: `${signed(b.werDiff[0])} (${signed(b.werDiff[1])} .. ${signed(b.werDiff[2])})`, time: `${fmt(b.timeRatio[0], 2)} (${fmt(b.timeRatio[1], 2)} .. ${fmt(b.timeRatio[2], 2)})` };
  };
  const audio = clips.reduce((s, c) => s + c.seconds, 0);
  const words = clips.reduce((s, _, i) => s + results[REFERENCE][i].errors.words, 0);

  const table = [
    '| system | WER % | sub / del / ins | WER − faster-whisper default, points (95 % CI) | time ÷ faster-whisper default (95 % CI) | RTF | loops | over 1.5x words | empty | last word missing |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const s of SYSTEMS) {
    const rs = results[s.id];
    const e = rs.reduce((a, r) => ({ sub: a.sub + r.errors.sub, del: a.del + r.errors.del, ins: a.ins + r.errors.ins, words: a.words + r.errors.words }), { sub: 0, del: 0, ins: 0, words: 0 });
    const ms = rs.reduce((a, r) => a + r.ms, 0);
    const count = (f: keyof Failures) => rs.filter((r) => r.failures[f]).length;
    const d = s.id === REFERENCE ? { wer: '—', time: '1.00' } : vs(s.id, all);
    table.push(`| ${s.label} | ${pct((100 * errorCount(e)) / e.words)} | ${e.sub} / ${e.del} / ${e.ins} | ${d.wer} | ${d.time} | ${fmt(ms / 1000 / audio, 3)} | ${count('loop')} | ${count('long')} | ${count('empty')} | ${count('lastWordMissing')} |`);
  }

  // WER per group of clips (a language, a source), each system a row.
  const perGroup = (groupOf: (c: EvalSetClip) => string): string[] => {
    const groups = [...new Set(clips.map(groupOf))];
    const rows = ['| system | ' + groups.map((g) => {
      const n = all.filter((i) => groupOf(clips[i]) === g).length;
      return `${g} (${n} ${n === 1 ? 'clip' : 'clips'})`;
    }).join(' | ') + ' |', `|${' --- |'.repeat(groups.length + 1)}`];
    for (const s of SYSTEMS) {
      rows.push(`| ${s.label} | ${groups.map((g) => {
        const rs = all.filter((i) => groupOf(clips[i]) === g).map((i) => results[s.id][i].errors);
        return `${fmt((100 * rs.reduce((a, e) => a + errorCount(e), 0)) / rs.reduce((a, e) => a + e.words, 0), 2)} %`;
      }).join(' | ')} |`);
    }
    return rows;
  };
  // Per language: the pooled WER above counts Chinese characters beside other languages' words.
  const perLanguage = perGroup((c) => c.language);
  const perSource = perGroup((c) => c.source);

  const bands = ['| system | ' + BANDS.map(([lo, hi]) => `${lo}-${Math.round(hi)} s: WER diff, time ratio`).join(' | ') + ' |', `|${' --- |'.repeat(BANDS.length + 1)}`];
  const bandIdx = BANDS.map(([lo, hi]) => all.filter((i) => clips[i].seconds >= lo && clips[i].seconds < hi));
  bands.push(`| clips (seconds) | ${bandIdx.map((idx) => `${idx.length} (${fmt(idx.reduce((s, i) => s + clips[i].seconds, 0), 0)} s)`).join(' | ')} |`);
  for (const s of SYSTEMS.filter((x) => x.id !== REFERENCE)) {
    bands.push(`| ${s.label} | ${bandIdx.map((idx) => {
      if (idx.length < 2) return '—';
      const d = vs(s.id, idx);
      return `${d.wer}, ${d.time}`;
    }).join(' | ')} |`);
  }

  // Within one window: ours against faster-whisper with the same decoding, both in the full 30-s window.
  const ran = (id: string) => SYSTEMS.some((s) => s.id === id);
  // Each pair over all clips, then by clip length (issue 32 reads clips over 20 s apart).
  const matched = [['ours-g-full', 'fw-g'], ['ours-b5-full', 'fw-b5'], ['ours-b5-full-f16', 'fw-b5']].filter(([a, b]) => ran(a) && ran(b)).flatMap(([a, b]) => {
    const read = (idx: number[]) => {
      const m = pairedBootstrap(perClip(a, idx), perClip(b, idx));
      const c = medianClipRatio(perClip(a, idx), perClip(b, idx));
      const covers = c.coverage < 0.95 ? `, covering ${fmt(c.coverage * 100, 1)} %` : '';
      return `WER ${signed(m.werDiff[0])} points (${signed(m.werDiff[1])} .. ${signed(m.werDiff[2])}), time ${fmt(m.timeRatio[0], 2)}x (${fmt(m.timeRatio[1], 2)} .. ${fmt(m.timeRatio[2], 2)}), the median clip ${fmt(c.median, 2)}x (${fmt(c.lo, 2)} .. ${fmt(c.hi, 2)}${covers})`;
    };
    // Where faster-whisper made one pass (one window, no fallback), the engines alone: the clips where it
    // encoded a second window or fell back are read apart (reports before the runner counted passes have none).
    const passesOf = (i: number) => results[b][i].passes;
    const onePass = all.filter((i) => passesOf(i)?.windows === 1 && passesOf(i)?.decodes === 1);
    const more = all.filter((i) => passesOf(i) && !onePass.includes(i));
    const passLines = all.every((i) => passesOf(i)) && onePass.length >= 2 ? [
      `  - the ${onePass.length} clips where ${b} made one pass (one window, no fallback): ${read(onePass)}.`,
      `  - the other ${more.length} (${more.filter((i) => passesOf(i)!.windows > 1).length} with more than one window, ${more.filter((i) => passesOf(i)!.decodes > passesOf(i)!.windows).length} with a fallback; a clip can have both): ${more.length >= 2 ? read(more) : '—'}.`,
    ] : [];
    return [
      `- ${a} against ${b} (both the full window): ${read(all)}.`,
      ...passLines,
      ...BANDS.map(([lo, hi], k) => (bandIdx[k].length < 2 ? null : `  - ${lo}-${Math.round(hi)} s (${bandIdx[k].length} clips): ${read(bandIdx[k])}.`)).filter((line): line is string => line !== null),
    ];
  });

  // Ours against ours: what the window and the beams cost or save, each with its interval.
  const pairs = [['ours-g-tail', 'ours-g-full'], ['ours-b5-tail', 'ours-b5-full'], ['ours-b5-full', 'ours-g-full'], ['ours-b5-tail', 'ours-g-tail'], ['ours-b5-full-f16', 'ours-b5-full']].filter(([a, b]) => ran(a) && ran(b)).map(([a, b]) => {
    const m = pairedBootstrap(perClip(a, all), perClip(b, all));
    return `- ${a} against ${b}: WER ${signed(m.werDiff[0])} points (${signed(m.werDiff[1])} .. ${signed(m.werDiff[2])}), time ${fmt(m.timeRatio[0], 2)}x (${fmt(m.timeRatio[1], 2)} .. ${fmt(m.timeRatio[2], 2)}).`;
  });

  // The rule, all three parts as set before measuring: of ours with the language given, the cheapest
  // within WITHIN_POINTS of faster-whisper's default; a window other than `full` only where its interval
  // against the same decoding in the full window excludes a cost of WITHIN_POINTS; if none holds, beam 5
  // in the full window.
  const candidates = SYSTEMS.filter((s) => s.kind === 'ours' && !s.autoLanguage && !s.config.weights).map((s) => ({ s, ...vs(s.id, all) }));
  const poolFiles = optionValue(args, '--pool-reference')?.split(',') ?? [];
  // The reference's runs, this one first, each scored as this run is.
  const referenceRuns = poolFiles.length ? [results[REFERENCE], ...savedReferenceRuns(poolFiles, split, clips, versions, prov.cpuFlags, results[REFERENCE])].map((rs) => rs.map(toPerClip)) : [];
  const pooledRef = poolFiles.length ? meanOverRuns(referenceRuns, perClip(REFERENCE, all)) : null;
  const windowCost = (s: System): { costsNothing: boolean; text: string } | null => {
    if (s.kind !== 'ours' || s.config.window === 'full') return null;
    const full = SYSTEMS.find((x) => x.kind === 'ours' && !x.autoLanguage && !x.config.weights && x.config.beam === s.config.beam && x.config.window === 'full');
    if (!full) return { costsNothing: false, text: `no full-window run with beam ${s.config.beam} to read its window against` };
    const m = pairedBootstrap(perClip(s.id, all), perClip(full.id, all));
    return { costsNothing: windowCostsNothing(m), text: `against the full window ${signed(m.werDiff[0])} points (${signed(m.werDiff[1])} .. ${signed(m.werDiff[2])})` };
  };
  const judged = candidates.map((c) => ({ ...c, window: windowCost(c.s) }));
  const holding = holdingOf(judged);
  const rule = !candidates.length
    ? 'No candidate for the default ran (ours with the language given, on the q8_0 weights): the rule is not read.'
    : holding.length
      ? `Chosen by the rule: **${holding[0].s.label}**, WER ${holding[0].wer} points against faster-whisper's default in ${holding[0].time}x its time.`
      : `No configuration of ours holds on this half, so the rule keeps **beam 5 in the full window**.`;
  // The same rule against the pooled reference: its WER the mean over its runs, the times this run's.
  const pooled = pooledRef ? (() => {
    const refWer = corpusWer(pooledRef);
    const against = judged.map((c) => {
      const b = pairedBootstrap(perClip(c.s.id, all), pooledRef);
      return { ...c, b, wer: `${signed(b.werDiff[0])} (${signed(b.werDiff[1])} .. ${signed(b.werDiff[2])})` };
    });
    const hold = holdingOf(against);
    return [
      `## The default by rule, against faster-whisper's default pooled over ${poolFiles.length + 1} runs`, '',
      `Its errors on each clip are the mean over this run and ${poolFiles.map((f) => path.basename(f)).join(', ')} (the same clips, faster-whisper version and CPU flags): a pooled WER of ${pct(refWer)} % against this run's ${pct(corpusWer(referenceRuns[0]))} % (run by run, in that order: ${referenceRuns.map((r) => pct(corpusWer(r))).join(', ')} %). Times are this run's. Intervals: paired bootstrap over clips (the spread between its runs is not in them).`, '',
      ...against.map((c) => `- ${c.s.label}: WER ${c.wer}${c.window ? `; window ${c.window.costsNothing ? 'costs nothing' : `cannot exclude a cost of ${WITHIN_POINTS}`}` : ''}`), '',
      !candidates.length
        ? 'No candidate for the default ran: the rule is not read against the pooled reference.'
        : hold.length ? `Chosen by the rule against the pooled reference: **${hold[0].s.label}**, WER ${hold[0].wer} points.` : 'No configuration of ours holds against the pooled reference: **beam 5 in the full window**.', '',
    ];
  })() : [];

  const date = today();
  const command = rescore?.command ?? `npm run eval -- ${args.join(' ')}`;
  const panelRule = panel ? rescore?.panelRule ?? EVAL_SET_PANELS[panel].rule : undefined;
  const halfName = split === 'all' ? 'both halves' : `${split} half`;
  const md = [
    `# Held-out eval (${halfName}${panel ? `, the ${panel} panel` : ''}), ${date}`, '',
    `\`${command}\`${rescore ? ` (tables printed again by \`npm run eval -- ${args.join(' ')}\`, its texts scored at commit ${commitState(scoredAt)})` : ''} on commit ${commitState(prov)}; ` +
      `addon sha256 ${prov.binaries['stt_native.node']}; ${prov.cores} cores (${prov.cpu}), ${THREADS} threads each side.`,
    ...(panel ? [`The ${panel} panel: ${panelRule}; the references are the clips' own. A panel's report reads how each system copes with the panel's clips; the default is chosen on the whole half, not here.`, ''] : []),
    `${clips.length} clips of ${split === 'all' ? halfName : `the ${halfName}`} (${fmt(audio, 0)} s, ${words} reference words; sources ${[...new Set(clips.map((c) => c.source))].join(', ')}; languages ${[...new Set(clips.map((c) => c.language))].join(', ')}). ` +
      `Ours: the server over HTTP with the openai client, real Whisper base q8_0 (f16 where a system's label says so), temperature fallback as shipped; windows: tail = ${ENCODER_WINDOW_RULES.tail}, full = ${ENCODER_WINDOW_RULES.full}. ` +
      `faster-whisper ${versions['faster-whisper']} (CTranslate2 ${versions.ctranslate2}), int8, cpu_threads ${THREADS}, its temperature fallback, on the CTranslate2 weights our ggml files were converted from. ` +
      `Ours with STT_FOLLOW_FREE_CORES=false (2 threads always: faster-whisper has just computed before each of our requests). Language given (the clip's) unless the row says not. Every clip to every system in turn, the order rotated, ${SETTLE_MS} ms apart, one warm-up each. ` +
      `Times: ours the whole HTTP request (upload, WAV decoding, queue, transcription, JSON), faster-whisper transcribe() in its process with the audio already in memory: the difference favours faster-whisper by a few ms a request. Intervals: paired bootstrap over clips, 2,000 resamples. Which side a window favours: faster-whisper always encodes 30 s; ours in the tail window encodes less on clips under 25 s (faster, and on the tuning set more accurate), so compare the full-window rows for the engines alone.`, '',
    ...table, '',
    '## By language (WER; Chinese by character)', '', ...perLanguage, '',
    '## By source (WER)', '', ...perSource, '',
    '## Same window, same decoding', '', 'Time: the clips\' total times, with a paired bootstrap interval; the median clip: the median over clips of each clip\'s time ratio, with its distribution-free 95 % interval (a few slow clips on one side move the first, not the second).', '', ...matched, '',
    '## Windows and beams, ours against ours', '', ...pairs, '',
    '## By clip length (against faster-whisper\'s default)', '', ...bands, '',
    ...(panel ? [] : ['## The default by rule', '',
    `The cheapest configuration of ours whose WER is within ${WITHIN_POINTS} points of faster-whisper's default (point estimate; the interval is printed with it); ` +
      `a window other than \`full\` only where its interval against the same decoding in the full window excludes a cost of ${WITHIN_POINTS} points; if none holds, beam 5 in the full window:`, '',
    ...judged.map((c) => `- ${c.s.label}: WER ${c.wer}, time ${c.time}${c.window ? `; window ${c.window.text}: ${c.window.costsNothing ? 'costs nothing' : `cannot exclude a cost of ${WITHIN_POINTS}`}` : ''}`), '', rule, '',
    ...pooled]),
  ].join('\n');
  const json: SavedEval = { split, ...(panel ? { panel, panelRule } : {}), command, provenance: prov, versions, clips: clips.map((c, i) => ({ id: c.id, source: c.source, seconds: c.seconds, language: c.language, reference: c.reference, runs: Object.fromEntries(SYSTEMS.map((s) => [s.id, results[s.id][i]])) })) };
  saveReport(`eval-${rescore ? rescore.date ?? date : date}-${split}${panel ? `-${panel}` : ''}${name}`, md, { ...json, date: rescore?.date ?? date });
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`eval: ${(err as Error).stack}\n`);
    process.exit(1);
  });
}
