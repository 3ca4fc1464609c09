// The Markdown report and SVG chart of a benchmark run (benchmarks/run.ts):
// one typed function per section or table, in report order, each reading the
// results as benchmarks/lib/bench-types.ts describes them. Every interval says
// what it covers; a maximum of a handful of values is called a maximum; both
// sides of each scheduling trade are in the headline.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { BenchMeta, LoadResult, ShapeResult } from './bench-types';
import { figures, type MixRound, type RoundFigures } from './load';
import { chartSvg, type ChartRow } from './chart';
import { WS_IN_OURS_WINDOW } from './servers';
import { commitState } from './provenance';
import { fmt, median, medianIntervalWithCoverage, range } from './stats';
import { ENCODER_WINDOWS, ENCODER_WINDOW_RULES } from '../../src/stt/local/encoder-window';

const OURS = 'stt-gateway';
const ARRIVAL = 'stt-gateway, arrival order';
const WS = 'whisper-server';

export function writeReport(dir: string, name: string, meta: BenchMeta, results: ShapeResult[]): void {
  const md = report(name, meta, results);
  writeFileSync(path.join(dir, `${name}.md`), md);
  // A run without load rounds has nothing to draw: no chart rather than an empty one.
  const rows = chartRows(results);
  if (rows.length) writeFileSync(path.join(dir, `${name}.svg`), chartSvg(rows));
  console.log(md);
}

/** Adds lines to the report. */
type Push = (...lines: string[]) => void;
type Section = (push: Push, meta: BenchMeta, results: ShapeResult[]) => void;

/** The sections, in report order. */
const SECTIONS: Section[] = [header, outputsChecked, headlineTable, loadTables, overheadTable, naiveTable, coldStartTable, fasterWhisperTable, contentionTable, storeTable, encoderTable];

export function report(name: string, meta: BenchMeta, results: ShapeResult[]): string {
  const L: string[] = [];
  const push: Push = (...lines) => L.push(...lines);
  for (const section of SECTIONS) section(push, meta, results);
  if (chartRows(results).length) push('', `![latency per request by mix](./${name}.svg)`, '');
  return L.join('\n');
}

/** A median with its distribution-free interval and that interval's true coverage. */
function withInterval(xs: number[], digits = 3): string {
  const v = xs.filter((x) => Number.isFinite(x));
  if (v.length === 0) return '—';
  if (v.length === 1) return fmt(v[0], digits);
  const { lo, hi, coverage } = medianIntervalWithCoverage(v);
  return `${fmt(median(v), digits)} (${fmt(lo, digits)}–${fmt(hi, digits)}, ${fmt(100 * coverage, coverage > 0.99 ? 1 : 0)} %)`;
}

/** Per mix and contender, each round's figures, in round order. */
function byMix(rounds: MixRound[]): Map<string, Map<string, RoundFigures[]>> {
  const out = new Map<string, Map<string, RoundFigures[]>>();
  for (const r of rounds) {
    const mix = out.get(r.mix) ?? new Map<string, RoundFigures[]>();
    out.set(r.mix, mix);
    mix.set(r.contender, [...(mix.get(r.contender) ?? []), figures(r)]);
  }
  return out;
}

/** Round-by-round ratios a ÷ b of one figure (rounds are back to back). */
function ratios(a: RoundFigures[] | undefined, b: RoundFigures[] | undefined, key: keyof RoundFigures): number[] {
  if (!a || !b) return [];
  return a.map((x, i) => (x[key] !== null && b[i]?.[key] ? (x[key] as number) / (b[i][key] as number) : NaN)).filter(Number.isFinite);
}

/** Median (ours first-in-pair) ÷ median (harness first): how much going first or second moves a ratio. */
function orderEffect(rs: number[], oursFirst: boolean[]): string {
  const first = rs.filter((_, i) => oursFirst[i]);
  const second = rs.filter((_, i) => !oursFirst[i]);
  if (!first.length || !second.length) return '—';
  return `${fmt(median(first), 3)} / ${fmt(median(second), 3)}`;
}

/** A single run's value, or the median (min–max) of several. */
const oneOff = (runs: number[]) => (runs.length > 1 ? `${fmt(median(runs), 0)} (${range(runs, 0)})` : fmt(runs[0], 0));

type With<R extends ShapeResult, K extends keyof ShapeResult> = R & { [P in K]-?: NonNullable<ShapeResult[P]> };

/** The shapes that have a scenario's result (an older result file, or a run without that scenario, may not). */
function having<R extends ShapeResult, K extends 'overhead' | 'control' | 'load' | 'naive' | 'cold' | 'store' | 'fasterWhisper' | 'contention'>(results: R[], key: K): With<R, K>[] {
  return results.filter((r): r is With<R, K> => r[key] !== undefined && r[key] !== null);
}


/** Title, provenance, the settings of every contender, and the models. */
function header(push: Push, meta: BenchMeta, results: ShapeResult[]): void {
  const settings = Object.entries(meta.serverSettings ?? {}).map(([k, v]) => `${k}=${v}`).join(' ');
  push(
    `# stt-gateway benchmark, ${meta.date}${meta.quick ? ' (quick)' : meta.full ? ' (full)' : ''}`,
    '',
    `Commit ${commitState({ commit: meta.commit, uncommitted: meta.uncommitted ?? [] })}; Node ${meta.node}.`,
    `Machine: ${meta.cpu}, ${meta.cores} cores, flags ${(meta.cpuFlags ?? []).join(' ')}; ${meta.threads} compute threads for every contender. ggml: \`${meta.ggml}\``,
    `whisper.cpp ${meta.whisperCpp?.version} (${meta.whisperCpp?.origin}), source tree sha256 \`${meta.whisperCpp?.treeSha256}\` over ${meta.whisperCpp?.covers}; hashed again at the start of this run: ${meta.whisperCpp?.verifiedAtRun ?? 'not recorded'}. Binaries (sha256): ${Object.entries(meta.binaries ?? {}).map(([k, v]) => `${k} \`${String(v).slice(0, 16)}\``).join(', ')}.`,
    `Server settings (every \`STT_*\` the benchmark sets; the rest are defaults): \`${settings}\`. The benchmark runs the server with its defaults except: one model activated, the queue raised to 64, the deadline's base raised to 10 minutes (plus the default 3 s per audio second; whisper-server has no deadline), and the temperature fallback off for random weights (it is on by default, and on here for real weights in the load rounds, the naive CLI and the cold start; the overhead pairs, their control and the floor run it off on both sides, for the reason given under Overhead). whisper-server gets \`token_timestamps=false\` and \`no_language_probabilities=true\` per request: its defaults for verbose_json add token timing and a second encoder pass for language detection, which neither the library nor ours does.`,
    `Command \`${meta.command ?? 'npm run bench'}\`; run time ${fmt(meta.durationS, 0)} s; load rounds per model: ${Object.entries(meta.loadRounds ?? {}).map(([k, v]) => `${k} ${v}`).join(', ')}. Intervals: the median's distribution-free interval, labelled with what it truly covers (the min–max of 3 values covers 75 %, of 5 values 93.75 %).`,
    '',
  );
  for (const [who, env] of Object.entries(meta.contenderSettings ?? {})) {
    push(`- ${who}: \`${Object.entries(env).map(([k, v]) => (k === 'command' ? v : `${k}=${v}`)).join(' ')}\``);
  }
  push('');
  for (const r of results) {
    push(`- ${r.shape}: ${r.weights === 'real' ? 'real Whisper base weights (`npm run models:real`), decoder context 448, decoding to end of text, temperature fallback on (best_of 5) for every contender' : r.family === 'parakeet' ? 'generated, random weights: one token per 320 ms' : 'generated, random weights, decoder context 64 (28 tokens per window for every contender), fallback off'}.`);
  }
}

/** Every answer compared across contenders; the first mismatches. */
function outputsChecked(push: Push, meta: BenchMeta): void {
  const checked = Object.entries(meta.outputs?.checked ?? {}).map(([k, v]) => `${k} ${v}`).join(', ');
  const mismatches = meta.outputs?.mismatches ?? [];
  push('', '## Outputs checked', '',
    `Every answer was compared with the first answer for the same clip and model (token ids where both sides return them, else the text without whitespace): ${checked}. ` +
      (mismatches.length ? `**${mismatches.length} differ; the run failed.**` : 'All equal.') +
      ' whisper-cli is compared by text (its token ids need a second, untimed run); Parakeet answers are compared between ours and the harness by token ids. Answers with the fallback off (the overhead pairs) are checked among themselves, apart from those with it on. With the temperature fallback on, a window decoded again at T > 0 samples: since the fresh-sampling-seed patch (2026-11-27) every request starts its generators from the same seed, so such answers are compared too; before it, decoder 0\'s generator ran on from request to request, and two processes with different histories could differ without either being wrong.');
  for (const m of mismatches.slice(0, 10)) push(`- ${m.clipSeconds}-s clip, ${m.other} against ${m.reference} (${m.what}): "${String(m.otherText).slice(0, 120)}" vs "${String(m.referenceText).slice(0, 120)}"`);
}

/** Under load, per mix: ours ÷ whisper-server and the control ÷ whisper-server, both sides of each trade. */
function headlineTable(push: Push, meta: BenchMeta, results: ShapeResult[]): void {
  const loaded = having(results, 'load');
  if (!loaded.length) return;
  push('', '## Headline: under load, ours ÷ whisper-server (and ours in arrival order ÷ whisper-server, the control)', '',
    'Per round, ours and the control against whisper-server in the same round, each in its encoder window (below, under "One request at a time", with which side a shorter window favours); the median over rounds with its interval. Below 1 is better for ours. "short" is a clip of 30 s or less, "long" over 30 s. A "max" is the largest of the few values a round has (six 5-s clips, say), never a percentile.', '',
    '| model | mix | short p50 | short max | long p50 | long max | mean, all requests | makespan | peak RSS | control: short p50 | control: long p50 | control: mean |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of loaded) {
    for (const [mix, by] of byMix(r.load.rounds)) {
      const o = by.get(OURS), a = by.get(ARRIVAL), w = by.get(WS);
      const q = (x: RoundFigures[] | undefined, k: keyof RoundFigures) => withInterval(ratios(x, w, k), 2);
      push(`| ${r.shape} | ${mix} | ${q(o, 'shortP50')} | ${q(o, 'shortMax')} | ${q(o, 'longP50')} | ${q(o, 'longMax')} | ${q(o, 'meanMs')} | ${q(o, 'makespanS')} | ${q(o, 'peakRssMb')} | ${q(a, 'shortP50')} | ${q(a, 'longP50')} | ${q(a, 'meanMs')} |`);
    }
  }
  aloneTable(push, meta, loaded);
}

/** One request at a time: each contender's time per clip, its RTF, and ours ÷ whisper-server. */
function aloneTable(push: Push, meta: BenchMeta, loaded: With<ShapeResult, 'load'>[]): void {
  const measured = loaded.filter((r) => r.load.alone);
  if (!measured.length) return;
  // The policy the run pinned (startOurs), so an older run's results render as they ran.
  const policy = ENCODER_WINDOWS.find((w) => w === meta.serverSettings?.STT_ENCODER_WINDOW);
  push('', '### One request at a time', '',
    `Each contender alone, the median of 3 warm runs per clip, in turn; RTF = time from send to answer ÷ audio time. Ours (and the control) run ${policy ? `the encoder window \`${policy}\` (for a clip under 30 s ${ENCODER_WINDOW_RULES[policy]})` : 'their own encoder window (not recorded)'}; whisper-server encodes 30 s at its default. ` +
    'Where ours\' window is shorter, whisper-server is timed in ours\' window too (its per-request `audio_ctx`) and checked to answer as ours did (under "Outputs checked"): the ratio within one window is that column; the ratio against whisper-server\'s default favours ours by the window, whose cost in WER is in the eval report.', '',
    '| model | clip | ours ms (RTF) | control ms (RTF) | whisper-server ms (RTF) | ours ÷ whisper-server | whisper-server in ours\' window ms | ours ÷ it (same window) |', '|---|---|---|---|---|---|---|---|');
  for (const r of measured) {
    const alone = r.load.alone!;
    for (const seconds of [5, 30]) {
      const cell = (who: string) => (alone[who]?.[seconds] ? `${fmt(alone[who][seconds], 0)} (${fmt(alone[who][seconds] / 1000 / seconds, 3)})` : '—');
      // Without a shorter window, whisper-server's default is ours' window.
      const sameWindow = alone[WS_IN_OURS_WINDOW]?.[seconds] ?? alone[WS]?.[seconds];
      push(`| ${r.shape} | ${seconds} s | ${cell(OURS)} | ${cell(ARRIVAL)} | ${cell(WS)} | ${fmt(alone[OURS]?.[seconds] / alone[WS]?.[seconds], 2)} | ${cell(WS_IN_OURS_WINDOW)} | ${fmt(alone[OURS]?.[seconds] / sameWindow, 2)} |`);
    }
  }
}

/** Under load, per shape: every contender's figures over the rounds, the floor and memory. */
function loadTables(push: Push, meta: BenchMeta, results: ShapeResult[]): void {
  const loaded = having(results, 'load');
  if (!loaded.length) return;
  push('', '## Under load: the figures', '',
    'Medians over rounds (min–max). Latency in ms from send to answer; makespan from the first send to the last answer; throughput = audio seconds answered ÷ makespan; refused = answers other than 200.', '');
  for (const r of loaded) shapeLoadTable(push, meta, r);
}

/** One shape's load figures. */
function shapeLoadTable(push: Push, meta: BenchMeta, r: ShapeResult & { load: LoadResult }): void {
  const floor = r.harness5Ms ?? NaN;
  push(`### ${r.shape}`, '', r.load.mixes.map((m) => `- **${m.name}**: ${m.description}`).join('\n'), '',
    `Poisson capacity from ours one request at a time: 5 s ${fmt(r.load.serviceMs[5], 0)} ms, 30 s ${fmt(r.load.serviceMs[30], 0)} ms, 120 s ${fmt(r.load.serviceMs[120], 0)} ms.`, '',
    '| mix | contender | rounds | short p50 | short max | long p50 | long max | mean | makespan s | throughput | refused | peak RSS MB |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const [mix, by] of byMix(r.load.rounds)) {
    for (const [who, rs] of by) {
      const col = (k: keyof RoundFigures, d = 0) => {
        const xs = rs.map((x) => x[k]).filter((x): x is number => x !== null);
        return xs.length ? (xs.length > 1 ? `${fmt(median(xs), d)} (${range(xs, d)})` : fmt(xs[0], d)) : '—';
      };
      push(`| ${mix} | ${who} | ${rs.length} | ${col('shortP50')} | ${col('shortMax')} | ${col('longP50')} | ${col('longMax')} | ${col('meanMs')} | ${col('makespanS', 1)} | ${col('throughput', 2)} | ${col('refused')} | ${col('peakRssMb')} |`);
    }
  }
  const longFirst = byMix(r.load.rounds).get('long first');
  const allShort = byMix(r.load.rounds).get('all short');
  push('', `Floor: a 5-s clip takes ${fmt(floor, 0)} ms in the bare harness (warm, median of 5${r.pairsFallback === false ? ', fallback off: a true floor, as the fallback only adds passes after the T = 0 one' : ''}). A server that computes one request at a time with every thread, serving the clips one after another from the moment they arrive, cannot give six of them a p50 (the mean of the 3rd and 4th) below 3.5 clips' time, ${fmt(3.5 * floor, 0)} ms, nor eight (all short) below 4.5 clips' time, ${fmt(4.5 * floor, 0)} ms. ` +
    `Ours: long first ${longFirst?.get(OURS) ? fmt(median(longFirst.get(OURS)!.map((x) => x.shortP50 ?? NaN)), 0) : '—'} ms, all short ${allShort?.get(OURS) ? fmt(median(allShort.get(OURS)!.map((x) => x.shortP50 ?? NaN)), 0) : '—'} ms.`);
  const peak = (mix: string, who: string) => {
    const xs = byMix(r.load.rounds).get(mix)?.get(who)?.map((x) => x.peakRssMb);
    return xs?.length ? median(xs) : NaN;
  };
  push('', `Memory (peak RSS per round: the kernel's VmHWM, reset before each round): Node and the server with no model take ${fmt(meta.nodeBaselineRss / 1e6, 0)} MB; with the model loaded, peak over start and one 5-s request ${fmt((r.cold?.oursRss ?? NaN) / 1e6, 0)} MB (the harness peaks at ${fmt((r.cold?.harnessRss ?? NaN) / 1e6, 0)} MB). ` +
    `Under "long first" ours peaks at ${fmt(peak('long first', OURS), 0)} MB against ${fmt(peak('long first', WS), 0)} MB for whisper-server and ${fmt(peak('long first', ARRIVAL), 0)} MB for ours in arrival order; under "all short" at ${fmt(peak('all short', OURS), 0)} MB. ` +
    'Ours and the arrival-order control run the same code and differ by the paused job: its second whisper state (KV caches, compute buffers) and its PCM. The rest of the gap to whisper-server is Node (the no-model figure) plus the upload and its decoded PCM held for every request in flight (a 120-s clip: 3.8 MB of WAV and 7.7 MB of float PCM). Closing it would take one state shared by paused and running jobs (pausing would then copy a KV cache out) and uploads streamed to disk.');
}

/** Ours over HTTP ÷ the bare harness on a 30-s clip, per model, and the harness-against-harness control. */
function overheadTable(push: Push, meta: BenchMeta, results: ShapeResult[]): void {
  push('', '## Overhead: HTTP upload to response ÷ bare C++ harness (same library, same parameters), 30-s clip', '',
    `${meta.pairs} pairs per model, ours and the harness back to back, alternating which goes first (so each goes first ${meta.pairs / 2} times), after a warm-up of each. "Added by the server" is the client's time minus the server's logged time from submitting the job to its result (the addon call, plus any queue wait, nil one request at a time): HTTP, multipart parsing, WAV decoding and rendering. Order effect: the median ratio of the pairs where ours went first / where the harness went first. The control pairs the harness with a second harness process the same way: what this machine reads for two identical programs. No ratio is pooled across models.${results.some((r) => r.fallback && r.pairsFallback === false) ? ' These pairs, the control and the floor run with the temperature fallback off on both sides, so that they time the same decoding: before the fresh-sampling-seed patch (2026-11-27) a window decoded again at T > 0 sampled from a generator that ran on from request to request, and the time of a request depended on what that process had decoded before (one harness process took 3.3-12.6 s for the same 30-s clip), not on the server.' : ''}`, '',
    '| model | ours ms | harness ms | ours ÷ harness | order effect | added by the server ms | inference in the server ÷ harness |', '|---|---|---|---|---|---|---|');
  for (const r of having(results, 'overhead')) {
    const o = r.overhead;
    push(`| ${r.shape} | ${fmt(median(o.oursMs))} (${range(o.oursMs)}) | ${fmt(median(o.harnessMs))} (${range(o.harnessMs)}) | ${withInterval(o.ratios)} | ${orderEffect(o.ratios, o.oursFirst)} | ${fmt(median(o.addedMs))} (${range(o.addedMs)}) | ${withInterval(o.inferenceRatios)} |`);
  }
  for (const r of having(results, 'control')) {
    push(`| control: ${r.shape}, harness ÷ second harness | | | ${withInterval(r.control.ratios)} | ${orderEffect(r.control.ratios, r.control.oursFirst)} | | |`);
  }
}

/** One CLI process per request, per model, against ours. */
function naiveTable(push: Push, meta: BenchMeta, results: ShapeResult[]): void {
  push('', `## Naive wrapper: one CLI process per request (load, transcribe, exit), one at a time (${meta.oneOffRuns} run${meta.oneOffRuns > 1 ? 's, medians (min–max)' : ' each: a single run'})`, '',
    '| model | contender | 5-s clip ms | 30-s clip ms | ours 30-s ms (median above) | ours ÷ naive, 30 s |', '|---|---|---|---|---|---|');
  for (const r of having(having(results, 'naive'), 'overhead')) {
    const ours30 = median(r.overhead.oursMs);
    push(`| ${r.shape} | ${r.naive.contender} | ${oneOff(r.naive.runs[5])} | ${oneOff(r.naive.runs[30])} | ${fmt(ours30, 0)} | ${fmt(ours30 / r.naive.ms[30], 2)} |`);
  }
}

/** Process start to the first 5-s transcription, and memory, per model. */
function coldStartTable(push: Push, meta: BenchMeta, results: ShapeResult[]): void {
  push('', `## Cold start (process start to first 5-s transcription) and memory (${meta.oneOffRuns > 1 ? `${meta.oneOffRuns} runs, medians` : 'a single run each'})`, '',
    '| model | ours ms | harness ms | ours RSS MB | harness peak RSS MB |', '|---|---|---|---|---|');
  for (const r of having(results, 'cold')) {
    push(`| ${r.shape} | ${oneOff(r.cold.runs.map((c) => c.oursMs))} | ${oneOff(r.cold.runs.map((c) => c.harnessMs))} | ${fmt(r.cold.oursRss / 1e6, 0)} | ${fmt(r.cold.harnessRss / 1e6, 0)} |`);
  }
}

/** Ours against faster-whisper on the same weights (benchmarks/faster-whisper.ts renders it). */
function fasterWhisperTable(push: Push, _meta: BenchMeta, results: ShapeResult[]): void {
  for (const r of having(results, 'fasterWhisper')) push('', `## Against faster-whisper (${r.shape})`, '', ...r.fasterWhisper.lines);
}

/** Ours with its shipped thread policy and faster-whisper, alone and beside a busy process (benchmarks/scenarios/contention.ts). */
function contentionTable(push: Push, _meta: BenchMeta, results: ShapeResult[]): void {
  for (const r of having(results, 'contention')) {
    const c = r.contention;
    const totals = (rounds: number[][]) => rounds.map((round) => round.reduce((a, b) => a + b, 0));
    const runs = c.rounds * c.clips.length;
    const settings = Object.entries(c.serverSettings[1] ?? {}).filter(([k]) => k !== 'STT_BEAM_SIZE').map(([k, v]) => `${k}=${v}`).join(' ');
    push('', `## Sharing the CPU: ours with its shipped thread policy against faster-whisper, alone and beside one busy process (${r.shape})`, '',
      `${c.clips.length} held-out clips (the dev half of \`npm run eval:set\`, English, 5 s and longer; ${fmt(c.seconds, 0)} s in all), ${c.rounds} round${c.rounds > 1 ? 's' : ''} per decoding, on ${c.cores} cores. ` +
        `Ours: the server over HTTP, ${c.quant}, ${c.threads.ours} threads, with its shipped thread policy (\`STT_FOLLOW_FREE_CORES\` on: the encoder on every thread, the decoder on one per core that other processes left free over the last second; which it chose is in each request's log line, \`decoderThreads\`, which the bench does not read; the contention study records it); its settings \`${settings}\`, and \`STT_BEAM_SIZE\` 1 or 5. ` +
        `faster-whisper ${c.versions['faster-whisper']} (CTranslate2 ${c.versions.ctranslate2}) int8, ${c.threads.fw} threads, in its own process. Both: English, the temperature fallback off (every run does the same work), the full 30-s window. ` +
        `Ours is timed at the client (upload, WAV decoding and the answer included), faster-whisper around transcribe() (the WAV already read): the time ratios lean against ours by that much; the slowdowns compare each side with itself. ` +
        `"Shared": one \`python3 -c 'while True: pass'\` running throughout; on ${c.cores} cores, work that keeps every core busy alone takes at least ${fmt((c.cores + 1) / c.cores, 2)}x its time beside it. ` +
        `Each round runs both conditions (which first alternates), each clip on both sides in turn (which first alternates by clip and round), every run ${c.settleMs} ms after the one before (so the server's monitor no longer counts faster-whisper's run); one untimed run per side each time a condition starts. ` +
        `Seconds: the median over rounds of a round's total; ratios: per round, then their median with its interval (what it covers). Raw per-run times are in the JSON.`, '',
      `| decoding | contender | alone, s | shared, s | slowdown: shared ÷ alone | runs whose text differs from the side's first for the clip: alone, shared (of ${runs} each) |`, '| --- | --- | --- | --- | --- | --- |');
    const ratioRows: string[] = [];
    for (const d of c.decodings) {
      const decoding = d.beam > 1 ? `beam ${d.beam}` : 'greedy';
      const t = {
        ours: { alone: totals(d.ms.ours.alone), shared: totals(d.ms.ours.shared) },
        fw: { alone: totals(d.ms.fw.alone), shared: totals(d.ms.fw.shared) },
      };
      const per = (a: number[], b: number[]) => a.map((x, i) => x / b[i]);
      for (const side of ['ours', 'fw'] as const) {
        push(`| ${decoding} | ${side === 'ours' ? `ours (stt-gateway, ${c.quant})` : 'faster-whisper int8'} | ${fmt(median(t[side].alone) / 1000, 2)} | ${fmt(median(t[side].shared) / 1000, 2)} | ${withInterval(per(t[side].shared, t[side].alone), 2)} | ${d.textsChanged[side].alone}, ${d.textsChanged[side].shared} |`);
      }
      ratioRows.push(`| ${decoding} | ${withInterval(per(t.ours.alone, t.fw.alone), 2)} | ${withInterval(per(t.ours.shared, t.fw.shared), 2)} | ${withInterval(per(per(t.ours.shared, t.ours.alone), per(t.fw.shared, t.fw.alone)), 2)} |`);
    }
    push('', 'Ours ÷ faster-whisper, per round (below 1: ours takes less time, or slows down less):', '',
      '| decoding | time alone | time shared | slowdown |', '| --- | --- | --- | --- |', ...ratioRows);
  }
}

/** Latency per store backend, with no model loaded: what PostgreSQL adds to a request. */
function storeTable(push: Push, meta: BenchMeta, results: ShapeResult[]): void {
  for (const r of having(results, 'store')) {
    push('', '## Shared store: PostgreSQL against SQLite', '',
      `Two servers of ours, no model, one on each backend (PostgreSQL in a temporary directory on this machine, over loopback TCP), asked in turn, ${r.store.requests} requests of each kind per backend after a warm-up; milliseconds from the client, median (90th percentile). PostgreSQL answers a key it has seen from its cache (emptied on any key change); a key never seen costs one lookup; a rate-limited key's audio request costs one upsert of its window (SQLite counts in memory).`, '',
      '| request | SQLite ms | PostgreSQL ms | added by PostgreSQL, median ms |', '|---|---|---|---|');
    for (const row of r.store.rows) {
      push(`| ${row.request} | ${fmt(row.sqliteMs.median, 2)} (${fmt(row.sqliteMs.p90, 2)}) | ${fmt(row.postgresMs.median, 2)} (${fmt(row.postgresMs.p90, 2)}) | ${fmt(row.postgresMs.median - row.sqliteMs.median, 2)} |`);
    }
  }
}

/** Encoder FLOPs over whisper.cpp's own encoder time, against a matmul of the same weight type. */
function encoderTable(push: Push, meta: BenchMeta, results: ShapeResult[]): void {
  push('', '## Encoder efficiency', '',
    'Encoder FLOPs per 30-s window (24·n·d² + 4·n²·d per layer, plus the convolutions) ÷ whisper.cpp\'s own encoder time for that window (harness runs above), against a 1024³ `ggml_mul_mat` of the same weight type.', '',
    '| model | GFLOP / window | encoder ms | achieved GFLOP/s | ceiling GFLOP/s |', '|---|---|---|---|---|');
  for (const r of results) {
    push(`| ${r.shape} | ${r.encoderGflop ? fmt(r.encoderGflop, 1) : '—'} | ${fmt(r.encodeMs, 0)} | ${r.achievedGflops ? fmt(r.achievedGflops, 0) : '—'} | ${r.ceilingGflops ? fmt(r.ceilingGflops, 0) : '—'} |`);
  }
}

/** The chart's rows: every answered request's latency, per shape, mix and contender. */
function chartRows(results: ShapeResult[]): ChartRow[] {
  return having(results, 'load').flatMap((r) => {
    const rows = new Map<string, ChartRow>();
    for (const round of r.load.rounds) {
      const key = `${round.mix} · ${round.contender}`;
      const row = rows.get(key) ?? { label: `${r.shape} · ${key}`, points: [] };
      rows.set(key, row);
      for (const q of round.requests) if (q.ms !== null) row.points.push({ ms: q.ms, long: q.seconds > 30 });
    }
    return [...rows.values()];
  });
}
