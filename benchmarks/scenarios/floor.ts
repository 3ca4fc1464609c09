// The harness's own time for a 5-s clip, warm, median of 5, in ours' encoder
// window: the floor of one-at-a-time service that the load report measures
// ours against.
import { HarnessSession } from '../lib/harness';
import { median } from '../lib/stats';
import { oursWindow, PAIRS_FALLBACK, type ScenarioType } from './context';

const SECONDS = 5;
const RUNS = 5;

export const floor: ScenarioType = {
  phase: 'paired',
  async run({ bench, shape }) {
    const session = new HarnessSession(shape.family, shape.file, bench.clipFile(SECONDS), bench.threads, PAIRS_FALLBACK, oursWindow(shape, SECONDS));
    await session.ready();
    await session.run();
    const runs: number[] = [];
    for (let i = 0; i < RUNS; i++) runs.push((await session.run()).ms);
    await session.close();
    return { harness5Ms: median(runs) };
  },
};
