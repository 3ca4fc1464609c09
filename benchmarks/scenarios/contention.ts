// Sharing the CPU (issue 32, item 5): how much one busy process beside it
// slows each engine down, ours as the server ships it against faster-whisper.
// Held-out clips (the dev half of `npm run eval:set`, English, 5 s and
// longer), alone and beside a Python `while True: pass`, through:
// - ours: the server over HTTP, with its default thread policy (the encoder
//   on every thread, the decoder on one per core other processes left free:
//   src/stt/local/free-cores.ts), greedy and then beam 5 (STT_BEAM_SIZE);
// - faster-whisper int8 with 2 threads, the same decodings, in its runner.
// English, temperature fallback off on both sides (every run does the same
// work), the full 30-s window on both sides. Each round runs both conditions
// (which goes first alternates) and, within one, every clip on each side in
// turn (which goes first alternates by clip and round), each run the same
// pause after the one before. The slowdown is a round's
// shared total over the same round's alone total; ours ÷ faster-whisper is
// within a round and a condition. Real weights and the eval set only.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { readEvalSet } from '../../scripts/eval-set';
import { FASTER_WHISPER_THREADS, modelDir, startFasterWhisper } from '../faster-whisper';
import { startBusyProcess } from '../lib/busy-process';
import { startOurs } from '../lib/servers';
import type { ContentionDecoding, ContentionResult } from '../lib/bench-types';
import type { ScenarioType } from './context';

const DECODINGS = [1, 5];
const CONDITIONS = ['alone', 'shared'] as const;
/**
 * Before every run, on both sides: the server's free-core monitor reads the
 * last whole second, so two seconds after faster-whisper's run it no longer
 * counts that run as another process's work. The same pause before
 * faster-whisper's runs, so both start from a CPU idle as long.
 */
const SETTLE_MS = 2100;

export const contention: ScenarioType = {
  phase: 'alone',
  async run({ bench, shape }) {
    if (shape.weights !== 'real') {
      bench.log('contention: skipped, the real base weights are not installed (npm run models:real)');
      return {};
    }
    let clips;
    try {
      clips = readEvalSet().filter((c) => c.split === 'dev' && c.language === 'en' && c.seconds >= 5).slice(0, bench.quick ? 3 : 8);
    } catch (err) {
      bench.log(`contention: skipped, ${(err as Error).message}`);
      return {};
    }
    const rounds = bench.contentionRounds;
    const wavs = clips.map((c) => readFileSync(c.file));
    const fw = startFasterWhisper(modelDir());
    const versions = await fw.versions;
    const decodings: ContentionDecoding[] = [];
    const settings: Record<number, Record<string, string | undefined>> = {};
    try {
      for (const beam of DECODINGS) {
        const ours = await startOurs({
          modelFile: shape.file, runtime: shape.runtime, threads: bench.threads, fallback: false,
          // The shipped thread policy (startOurs turns it off for the load rounds, where the bench's own processes run beside the server), in faster-whisper's window.
          env: { STT_BEAM_SIZE: String(beam), STT_FOLLOW_FREE_CORES: 'true', STT_ENCODER_WINDOW: 'full' },
        });
        settings[beam] = ours.settings;
        const run = {
          ours: async (i: number) => {
            await sleep(SETTLE_MS);
            const r = await ours.transcribe(wavs[i]);
            return { ms: r.ms, text: r.text };
          },
          fw: async (i: number) => {
            await sleep(SETTLE_MS);
            const r = await fw.ask({ wav: clips[i].file, compute_type: 'int8', beam_size: beam });
            return { ms: r.ms, text: r.text };
          },
        };
        const d: ContentionDecoding = {
          beam, ms: { ours: { alone: [], shared: [] }, fw: { alone: [], shared: [] } },
          textsChanged: { ours: { alone: 0, shared: 0 }, fw: { alone: 0, shared: 0 } },
        };
        const firstText: Record<string, string[]> = { ours: [], fw: [] };
        try {
          for (let r = 0; r < rounds; r++) {
            for (const condition of r % 2 ? [...CONDITIONS].reverse() : CONDITIONS) {
              const busy = condition === 'shared' ? await startBusyProcess() : undefined;
              try {
                for (const side of ['ours', 'fw'] as const) {
                  await run[side](0); // warm-up in this condition
                  d.ms[side][condition].push([]);
                }
                for (let i = 0; i < clips.length; i++) {
                  for (const side of (i + r) % 2 ? (['fw', 'ours'] as const) : (['ours', 'fw'] as const)) {
                    const { ms, text } = await run[side](i);
                    d.ms[side][condition][r].push(ms);
                    firstText[side][i] ??= text;
                    if (text !== firstText[side][i]) d.textsChanged[side][condition]++;
                  }
                }
              } finally {
                busy?.stop();
              }
              bench.log(`contention: beam ${beam}, round ${r + 1}/${rounds}, ${condition}`);
            }
          }
        } finally {
          await ours.stop();
        }
        decodings.push(d);
      }
    } finally {
      await fw.stop();
    }
    const contentionResult: ContentionResult = {
      clips: clips.map((c) => c.id), seconds: clips.reduce((s, c) => s + c.seconds, 0), rounds,
      cores: os.availableParallelism(), threads: { ours: bench.threads, fw: FASTER_WHISPER_THREADS }, quant: shape.quant,
      versions, settleMs: SETTLE_MS, serverSettings: settings, decodings,
    };
    return { contention: contentionResult };
  },
};
