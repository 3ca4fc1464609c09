// The naive wrapper: one whisper-cli (or parakeet-cli) process per request
// (load, transcribe, exit), one at a time, on the 5-s and 30-s clips, in
// ours' encoder window.
import { naiveCli } from '../lib/servers';
import { fmt, median } from '../lib/stats';
import { oursWindow, windowScope, type ScenarioType } from './context';

export const naive: ScenarioType = {
  phase: 'alone',
  async run({ bench, shape }) {
    const cli = naiveCli(shape.family, shape.file, bench.threads, bench.work, shape.fallback, (seconds) => oursWindow(shape, seconds));
    const runs: Record<number, number[]> = { 5: [], 30: [] };
    for (let i = 0; i < bench.oneOffRuns; i++) {
      for (const s of [5, 30]) {
        const reply = await cli.transcribe(bench.clips[s]);
        runs[s].push(reply.ms);
        if (shape.family === 'whisper') bench.check.record(windowScope(shape, oursWindow(shape, s)), s, cli.name, reply);
      }
    }
    const result = { contender: cli.name, ms: { 5: median(runs[5]), 30: median(runs[30]) }, runs };
    bench.log(`${shape.name} ${cli.name}: 5 s ${fmt(result.ms[5], 0)} ms, 30 s ${fmt(result.ms[30], 0)} ms`);
    return { naive: result };
  },
};
