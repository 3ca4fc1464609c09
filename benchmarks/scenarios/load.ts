// Every mix, round after round, against three contenders in fresh processes:
// ours, ours in arrival order without preemption (the control that splits
// policy from implementation) and whisper-server; contenders rotate which
// goes first. Whisper only: whisper.cpp has no Parakeet server. Each runs
// its defaults: ours (and the control) fit the encoder window to a clip
// under 30 s, whisper-server encodes 30 s; their answers are checked within
// a window, and whisper-server is asked once more with ours' window, so the
// check also holds across them.
import { runMix, type MixRound } from '../lib/load';
import { mixes } from '../lib/mixes';
import { startOurs, startWhisperServer, WS_IN_OURS_WINDOW, type Contender } from '../lib/servers';
import { fmt, median } from '../lib/stats';
import { oursWindow, windowScope, type ScenarioType, type Shape, type ShapeRun } from './context';

export const load: ScenarioType = {
  phase: 'alone',
  async run(run) {
    const { bench, shape, loadRounds } = run;
    if (!loadRounds) return {};
    // Fresh processes for every contender, so no one's peak RSS carries the overhead runs.
    const fresh = await startOurs({ modelFile: shape.file, threads: bench.threads, runtime: shape.runtime, fallback: shape.fallback });
    const arrival = await startOurs({ modelFile: shape.file, threads: bench.threads, runtime: shape.runtime, fallback: shape.fallback, scheduling: 'arrival' });
    const ws = await startWhisperServer(shape.file, bench.threads, shape.fallback);
    bench.settings.server = fresh.settings;
    for (const c of [fresh, arrival, ws]) await c.transcribe(bench.clips[5]);
    bench.settings.contenders = { [fresh.name]: fresh.settings, [arrival.name]: arrival.settings, [ws.name]: { command: `whisper-server ${ws.args.join(' ')}` } };
    // When ours runs a shorter window than whisper-server's 30 s (BENCH_ENCODER_WINDOW), whisper-server is
    // timed in ours' window too, so the ratio the report prints is read within one window.
    const inOursWindow: Contender = { ...ws, name: WS_IN_OURS_WINDOW, fullWindow: false, transcribe: (wav) => ws.transcribeIn(wav, oursWindow(shape, secondsOf(wav))) };
    const shorter = [5, 30].some((s) => oursWindow(shape, s) > 0);
    const alone = await oneAtATime(run, [fresh, arrival, ws, ...(shorter ? [inOursWindow] : [])]);
    const result = { alone, ...(await rounds(run, [fresh, arrival, ws], alone[fresh.name])) };
    for (const c of [fresh, arrival, ws]) await c.stop();
    return { load: result };
  },
};

/** A 16-kHz mono 16-bit WAV's length in whole seconds (the bench's clips: 5, 30, 120). */
const secondsOf = (wav: Buffer) => Math.round((wav.length - 44) / 32000);

/** The output-check scope of a contender's answer: in the full window (whisper-server at its default) or in ours'. */
const answerScope = (shape: Shape, c: Contender, seconds: number) => windowScope(shape, c.fullWindow ? 0 : oursWindow(shape, seconds));

/**
 * One request at a time, the median of 3 warm runs per clip length, every
 * contender in turn: a clip's time with nothing else running (its RTF), and
 * for ours the capacity the Poisson mixes are drawn at. The 120-s clip for
 * ours only (the capacity needs it; the others would add minutes).
 */
async function oneAtATime({ bench, shape }: ShapeRun, contenders: Contender[]): Promise<Record<string, Record<number, number>>> {
  const runs: Record<string, Record<number, number[]>> = Object.fromEntries(contenders.map((c) => [c.name, { 5: [], 30: [], 120: [] }]));
  for (let i = 0; i < 3; i++) {
    for (const s of [5, 30, 120]) {
      for (const c of s === 120 ? contenders.slice(0, 1) : contenders) {
        const reply = await c.transcribe(bench.clips[s]);
        bench.check.record(answerScope(shape, c, s), s, c.name, reply);
        runs[c.name][s].push(reply.ms);
      }
    }
  }
  return Object.fromEntries(contenders.map((c) => [c.name, Object.fromEntries(Object.entries(runs[c.name]).filter(([, xs]) => xs.length).map(([s, xs]) => [s, median(xs)]))]));
}

async function rounds({ bench, shape, loadRounds }: ShapeRun, contenders: Contender[], serviceMs: Record<number, number>) {
  const all = mixes(serviceMs);
  const chosen = bench.quick ? all.filter((m) => m.name === 'long first' || m.name === 'all short') : all;
  const results: MixRound[] = [];
  for (let round = 0; round < loadRounds; round++) {
    for (const mix of chosen) {
      const order = contenders.map((_, i) => contenders[(i + round + chosen.indexOf(mix)) % contenders.length]);
      for (const c of order) {
        const r = await runMix(c, mix, bench.clips, (seconds, reply) => bench.check.record(answerScope(shape, c, seconds), seconds, c.name, reply));
        results.push(r);
        bench.log(`${shape.name} round ${round + 1} ${mix.name} ${c.name}: makespan ${fmt(r.makespanS, 1)} s, refused ${r.requests.filter((q) => q.ms === null).length}`);
      }
    }
  }
  return { serviceMs, mixes: chosen, rounds: results };
}
