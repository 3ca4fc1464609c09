// How long disposing a loaded model blocks the event loop (issue 22, item 5).
// Usage: npx tsx benchmarks/studies/dispose-stall.ts <model.bin> [rounds]
// Prints, per round, the time the dispose() call itself took on the main
// thread and the longest event-loop delay seen until the model was freed.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { decodeWav, loadModel } from '../../src/native';
import { AUDIO_DIR } from '../../fixtures';

async function main(): Promise<void> {
  const [file, roundsArg] = process.argv.slice(2);
  if (!file) throw new Error('usage: dispose-stall.ts <model.bin> [rounds]');
  const rounds = Number(roundsArg ?? 3);
  const pcm = (await decodeWav(readFileSync(path.join(AUDIO_DIR, 'jfk.wav')))).pcm;
  console.log(`model ${path.basename(file)}, ${(statSync(file).size / 2 ** 20).toFixed(0)} MiB`);
  for (let i = 0; i < rounds; i++) {
    const model = await loadModel(file);
    await model.transcribe(pcm, { threads: 2, maxTokens: 4, temperatureFallback: false });
    const histogram = monitorEventLoopDelay({ resolution: 1 });
    histogram.enable();
    await new Promise((r) => setTimeout(r, 50));
    const started = performance.now();
    const pending = model.dispose() as unknown; // void before the fix, a promise after
    const callMs = performance.now() - started;
    await pending;
    await new Promise((r) => setTimeout(r, 100)); // let the monitor sample after the free
    histogram.disable();
    console.log(`round ${i + 1}: dispose() call ${callMs.toFixed(1)} ms, longest event-loop delay ${(histogram.max / 1e6).toFixed(1)} ms`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
