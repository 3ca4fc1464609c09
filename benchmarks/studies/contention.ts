// `npx tsx benchmarks/studies/contention.ts [--rounds N] [--clips N] [--beam N] [--name SUFFIX]`:
// how much a busy process beside it slows each engine down. The same held-out
// clips (dev half of `npm run eval:set`), alone and then with one Python
// `while True: pass` on this 2-core box, through: ours with 2 threads, ours
// with 1 thread, ours with 2 threads for the encoder and 1 for the decoder
// (the control for the next), ours as the server runs a job (2 threads for
// the encoder, and for the decoder one per core the other processes leave
// free: src/stt/local/free-cores.ts), and faster-whisper int8 with 2 threads.
// Greedy (or beam N on both sides), English, no fallback, full window on both sides. Each round decodes every clip with
// every contender in turn; the slowdown is shared ÷ alone per contender,
// with the median and range over rounds, and how many cores each keeps busy
// alone (its process's CPU time over wall time). Raw per-run times and CPU
// times go to the JSON.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeWav, loadModel } from '../../src/native';
import { FreeCoresMonitor, threadsForFreeCores } from '../../src/stt/local/free-cores';
import { readEvalSet } from '../../scripts/eval-set';
import { realModelPath } from '../../fixtures';
import { modelDir, startFasterWhisper } from '../faster-whisper';
import { provenance, commitState } from '../lib/provenance';
import { startBusyProcess } from '../lib/busy-process';
import { numberOption, nameFlag, reportSuffix } from '../lib/args';
import { saveReport, today } from '../lib/results';
import { fmt, median } from '../lib/stats';

const FOLLOWING = 'ours, 2 threads, the decoder\'s for the free cores (the server\'s default)';
const ONE_DECODER_THREAD = 'ours, 2 threads, the decoder\'s 1';
const CONTENDERS = ['ours, 2 threads', 'ours, 1 thread', ONE_DECODER_THREAD, FOLLOWING, 'faster-whisper int8, 2 threads'] as const;
type Contender = (typeof CONTENDERS)[number];

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const rounds = numberOption(args, '--rounds', 5);
  const nClips = numberOption(args, '--clips', 8);
  const beamSize = numberOption(args, '--beam', 1);
  const suffix = reportSuffix(args);
  // Read before the runs: the commit and the tree as they were when the timing began.
  const prov = provenance();
  const clips = readEvalSet().filter((c) => c.split === 'dev' && c.language === 'en' && c.seconds >= 5).slice(0, nClips);
  const pcms = await Promise.all(clips.map(async (c) => (await decodeWav(readFileSync(c.file))).pcm));
  const model = await loadModel(realModelPath('base-q8_0'));
  const fw = startFasterWhisper(modelDir());
  const versions = await fw.versions;
  const monitor = new FreeCoresMonitor(2, 250);
  // The decoder threads the monitor chose, per condition (warm-up included).
  const chosen: Record<string, number[]> = { alone: [], shared: [] };
  let condition: 'alone' | 'shared' = 'alone';

  // Each run's wall time and the CPU time its process used meanwhile (all threads), ms.
  const runOnce = async (c: Contender, i: number): Promise<{ ms: number; cpuMs: number }> => {
    // The free-cores contender waits for a whole sampling interval after the others' work, as a request would.
    await sleep(c === FOLLOWING ? 600 : 100);
    if (c.startsWith('faster-whisper')) {
      const reply = await fw.ask({ wav: clips[i].file, compute_type: 'int8', beam_size: beamSize });
      return { ms: reply.ms, cpuMs: reply.cpu_ms };
    }
    const threads = c === 'ours, 1 thread' ? 1 : 2;
    const decoderThreads = c === FOLLOWING ? threadsForFreeCores(2, monitor.freeCores()) : c === ONE_DECODER_THREAD ? 1 : threads;
    if (c === FOLLOWING) chosen[condition].push(decoderThreads);
    const [t0, cpu0] = [performance.now(), process.cpuUsage()];
    await model.transcribe(pcms[i], { threads, decoderThreads, language: 'en', temperatureFallback: false, beamSize });
    const cpu = process.cpuUsage(cpu0);
    return { ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 };
  };
  // Per condition, contender and round: the time of the whole clip set, and each clip's; cpu the same for CPU time.
  const raw: Record<string, Record<Contender, number[][]>> = {};
  const cpu: Record<string, Record<Contender, number[][]>> = {};
  let hog: Awaited<ReturnType<typeof startBusyProcess>> | undefined;
  for (condition of ['alone', 'shared'] as const) {
    if (condition === 'shared') {
      hog = await startBusyProcess(); // running long enough for the monitor to see it
    }
    raw[condition] = Object.fromEntries(CONTENDERS.map((c) => [c, []])) as unknown as Record<Contender, number[][]>;
    cpu[condition] = Object.fromEntries(CONTENDERS.map((c) => [c, []])) as unknown as Record<Contender, number[][]>;
    for (const c of CONTENDERS) await runOnce(c, 0); // warm-up
    for (let r = 0; r < rounds; r++) {
      for (const c of CONTENDERS) {
        raw[condition][c].push([]);
        cpu[condition][c].push([]);
      }
      for (let i = 0; i < clips.length; i++) {
        const order = r % 2 ? [...CONTENDERS].reverse() : CONTENDERS;
        for (const c of order) {
          const { ms, cpuMs } = await runOnce(c, i);
          raw[condition][c][r].push(ms);
          cpu[condition][c][r].push(cpuMs);
        }
      }
      process.stdout.write('.');
    }
  }
  hog?.stop();
  process.stdout.write('\n');
  monitor.close();
  await fw.stop();
  await model.dispose();

  const totals = (of: typeof raw, cond: string, c: Contender) => of[cond][c].map((round) => round.reduce((a, b) => a + b, 0));
  const lines = [
    '| contender | alone, s (median of rounds) | shared, s | slowdown: median (range over rounds) | cores busy alone: CPU time ÷ wall time (median of rounds) |',
    '| --- | --- | --- | --- | --- |',
  ];
  for (const c of CONTENDERS) {
    const [alone, shared] = [totals(raw, 'alone', c), totals(raw, 'shared', c)];
    const ratios = shared.map((s, r) => s / alone[r]);
    const busy = totals(cpu, 'alone', c).map((t, r) => t / alone[r]);
    lines.push(`| ${c} | ${fmt(median(alone) / 1000, 2)} | ${fmt(median(shared) / 1000, 2)} | ${fmt(median(ratios), 2)} (${fmt(Math.min(...ratios), 2)} .. ${fmt(Math.max(...ratios), 2)}) | ${fmt(median(busy), 2)} |`);
  }
  const date = today();
  const md = [
    `# Sharing the CPU with a busy process, ${date}`, '',
    `\`npx tsx benchmarks/studies/contention.ts --rounds ${rounds} --clips ${nClips}${beamSize > 1 ? ` --beam ${beamSize}` : ''}${nameFlag(suffix)}\` on commit ${commitState(prov)}; addon sha256 ${prov.binaries['stt_native.node']}; ${prov.cores} cores (${prov.cpu}).`,
    `${clips.length} held-out clips (dev half, English, 5 s and longer; ${fmt(clips.reduce((s, c) => s + c.seconds, 0), 0)} s). Real Whisper base: ours q8_0 in-process (the addon), faster-whisper ${versions['faster-whisper']} / CTranslate2 ${versions.ctranslate2} int8 in its own process; ${beamSize > 1 ? `beam ${beamSize}` : 'greedy'}, English, no fallback, the full 30-s window on both sides. ` +
      `"Shared": one \`python3 -c 'while True: pass'\` running throughout. Each round decodes every clip with every contender in turn (order reversed on odd rounds); ${rounds} rounds per condition; the slowdown is each round's shared total over the same round's alone total. ` +
      `The server's default: the encoder with 2 threads, the decoder with the threads the server's scheduler gives it (one per core other processes left free over the last interval, src/stt/local/free-cores.ts); it gave the decoder 1 thread in ${chosen.alone.filter((t) => t === 1).length} of ${chosen.alone.length} runs alone and in ${chosen.shared.filter((t) => t === 1).length} of ${chosen.shared.length} shared (warm-up runs included; the rest had 2). ` +
      `Cores busy: the CPU time the contender's process used during its runs (all its threads: ours process.cpuUsage(), faster-whisper time.process_time()) over their wall time, alone; threads spinning at a barrier count as busy. ` +
      `Beside one busy process on 2 cores, Linux's fair scheduler gives each of 3 runnable threads two thirds of a core: work that needs both cores throughout takes at least 1.5x its time alone, and work on one core is not slowed.`, '',
    ...lines, '',
  ].join('\n');
  saveReport(`contention-${date}${beamSize > 1 ? `-beam${beamSize}` : ''}${suffix}`, md, { provenance: prov, versions, clips: clips.map((c) => c.id), raw, cpu, decoderThreadsChosen: chosen });
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`contention: ${(err as Error).stack}\n`);
    process.exit(1);
  });
}
