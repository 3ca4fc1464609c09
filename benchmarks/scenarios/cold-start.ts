// Cold start and memory: process start to the first 5-s transcription, ours
// against the harness (in ours' encoder window), which goes first alternating
// run by run.
import { harness } from '../lib/harness';
import { procRss, startOurs } from '../lib/servers';
import { fmt, median } from '../lib/stats';
import type { ColdStart } from '../lib/bench-types';
import { oursWindow, type ScenarioType, type ShapeRun } from './context';

export const coldStart: ScenarioType = {
  phase: 'alone',
  async run(run) {
    const runs: ColdStart[] = [];
    for (let i = 0; i < run.bench.oneOffRuns; i++) runs.push(await once(run, i % 2 === 1));
    const mid = (k: keyof ColdStart) => median(runs.map((r) => r[k]));
    const cold = { oursMs: mid('oursMs'), oursRss: mid('oursRss'), harnessMs: mid('harnessMs'), harnessRss: mid('harnessRss'), runs };
    run.bench.log(`${run.shape.name} cold start ours ${fmt(cold.oursMs)} ms, harness ${fmt(cold.harnessMs)} ms`);
    return { cold };
  },
};

async function once({ bench, shape }: ShapeRun, harnessFirst: boolean): Promise<ColdStart> {
  const timeHarness = async () => {
    const t = process.hrtime.bigint();
    const h = await harness(shape.family, shape.file, bench.clipFile(5), bench.threads, 1, shape.fallback, oursWindow(shape, 5));
    return { harnessMs: Number(process.hrtime.bigint() - t) / 1e6, harnessRss: h.maxRssBytes };
  };
  const first = harnessFirst ? await timeHarness() : null;
  const ours = await startOurs({ modelFile: shape.file, threads: bench.threads, runtime: shape.runtime, fallback: shape.fallback });
  await ours.transcribe(bench.clips[5]);
  const oursMs = Number(process.hrtime.bigint() - ours.startedAt) / 1e6;
  const oursRss = procRss(ours.pid, 'VmHWM'); // a peak, as the harness's ru_maxrss is
  await ours.stop();
  return { oursMs, oursRss, ...(first ?? (await timeHarness())) };
}
