// Ours over HTTP against the bare harness with its model loaded, in pairs
// back to back (alternating which goes first) after a warm-up of each, on the
// 30-s clip.
import { HarnessSession, pairWithHarness } from '../lib/harness';
import { fmt, median } from '../lib/stats';
import { PAIRS_FALLBACK, pairsScope, type ScenarioType } from './context';

const SECONDS = 30;

export const overhead: ScenarioType = {
  phase: 'paired',
  async run({ bench, shape, pairedOurs }) {
    const ours = await pairedOurs();
    const session = new HarnessSession(shape.family, shape.file, bench.clipFile(SECONDS), bench.threads, PAIRS_FALLBACK);
    await session.ready();
    await session.run(); // warm-up; the server had its own when it started
    const pairs = await pairWithHarness(session, bench.pairs, () => ours.transcribeLogged!(bench.clips[SECONDS]));
    await session.close();
    for (const reply of pairs.ours) bench.check.record(pairsScope(shape), SECONDS, ours.name, reply);
    for (const h of pairs.harness) if (h.ids) bench.check.record(pairsScope(shape), SECONDS, 'stt-harness', { text: '', tokens: h.ids });
    const result = {
      oursMs: pairs.oursMs,
      harnessMs: pairs.harness.map((h) => h.ms),
      ratios: pairs.ratios,
      oursFirst: pairs.oursFirst,
      addedMs: pairs.ours.map((r) => r.ms - r.sttMs),
      inferenceRatios: pairs.ours.map((r, i) => r.sttMs / pairs.harness[i].ms),
      encodeMs: pairs.harness.flatMap((h) => h.encodeMs ?? []),
    };
    bench.log(`${shape.name} overhead: ours ${fmt(median(result.oursMs))} ms, harness ${fmt(median(result.harnessMs))} ms, ratio ${fmt(median(result.ratios), 3)}`);
    return { overhead: result };
  },
};
