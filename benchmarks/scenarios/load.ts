// Every mix, round after round, against three contenders in fresh processes:
// ours, ours in arrival order without preemption (the control that splits
// policy from implementation) and whisper-server; contenders rotate which
// goes first. Whisper only: whisper.cpp has no Parakeet server.
import { runMix, type MixRound } from '../lib/load';
import { mixes } from '../lib/mixes';
import { startOurs, startWhisperServer, type Contender } from '../lib/servers';
import { fmt, median } from '../lib/stats';
import type { ScenarioType, ShapeRun } from './context';

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
    const result = await rounds(run, [fresh, arrival, ws]);
    for (const c of [fresh, arrival, ws]) await c.stop();
    return { load: result };
  },
};

async function rounds({ bench, shape, loadRounds }: ShapeRun, contenders: Contender[]) {
  // Capacity for the Poisson mixes: ours, one request at a time, the median of 3 warm runs per clip length.
  const serviceMs: Record<number, number> = {};
  for (const s of [5, 30, 120]) {
    const runs: number[] = [];
    for (let i = 0; i < 3; i++) runs.push((await contenders[0].transcribe(bench.clips[s])).ms);
    serviceMs[s] = median(runs);
  }
  const all = mixes(serviceMs);
  const chosen = bench.quick ? all.filter((m) => m.name === 'long first' || m.name === 'all short') : all;
  const results: MixRound[] = [];
  for (let round = 0; round < loadRounds; round++) {
    for (const mix of chosen) {
      const order = contenders.map((_, i) => contenders[(i + round + chosen.indexOf(mix)) % contenders.length]);
      for (const c of order) {
        const r = await runMix(c, mix, bench.clips, (seconds, reply) => bench.check.record(shape.name, seconds, c.name, reply));
        results.push(r);
        bench.log(`${shape.name} round ${round + 1} ${mix.name} ${c.name}: makespan ${fmt(r.makespanS, 1)} s, refused ${r.requests.filter((q) => q.ms === null).length}`);
      }
    }
  }
  return { serviceMs, mixes: chosen, rounds: results };
}
