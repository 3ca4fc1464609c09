// The control for the overhead pairs: the harness against a second harness
// process, paired exactly as ours is, on the same 30-s clip.
import { HarnessSession, pairWithHarness } from '../lib/harness';
import { fmt, median } from '../lib/stats';
import { PAIRS_FALLBACK, type ScenarioType } from './context';

const SECONDS = 30;

export const control: ScenarioType = {
  phase: 'paired',
  async run({ bench, shape }) {
    const a = new HarnessSession(shape.family, shape.file, bench.clipFile(SECONDS), bench.threads, PAIRS_FALLBACK);
    const b = new HarnessSession(shape.family, shape.file, bench.clipFile(SECONDS), bench.threads, PAIRS_FALLBACK);
    await Promise.all([a.ready(), b.ready()]);
    await a.run();
    await b.run();
    const pairs = await pairWithHarness(a, bench.pairs, () => b.run());
    await Promise.all([a.close(), b.close()]);
    bench.log(`${shape.name} control harness ÷ harness ${fmt(median(pairs.ratios), 3)}`);
    return { control: { ratios: pairs.ratios, oursFirst: pairs.oursFirst } };
  },
};
