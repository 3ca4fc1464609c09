// `npx tsx benchmarks/studies/request-overhead.ts [--rounds N] [--clip ID] [--beam 1|5] [--name SUFFIX]`:
// what a request through the server costs beyond whisper.cpp's own stages, on
// one held-out clip in the full window. Each round runs whisper-cli (its
// stages' sum) and one request to the server in this process, as the eval
// sends it (the openai client, a file stream); the server's Server-Timing
// header splits the request into decoding the upload, waiting in the queue
// and the transcription; what is left is HTTP and the form. The eval's
// engine-for-engine ratio is read through the server, the stages study's
// through whisper-cli: this is the difference between the two.
import { createReadStream } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { readEvalSet } from '../../scripts/eval-set';
import { cliRun, stagesSum } from '../lib/whisper-cli';
import { EVAL_THREADS as THREADS, startOurs } from '../lib/eval-server';
import { provenance, commitState } from '../lib/provenance';
import { numberOption, optionValue, nameFlag, reportSuffix } from '../lib/args';
import { saveReport, today } from '../lib/results';
import { fmt, median, medianIntervalWithCoverage } from '../lib/stats';

/** Server-Timing's parts: name → ms. */
function timingParts(header: string | null): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of (header ?? '').matchAll(/(\w+);dur=([\d.]+)/g)) out[m[1]] = Number(m[2]);
  return out;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const rounds = numberOption(args, '--rounds', 15);
  const beam = numberOption(args, '--beam', 1);
  const clipId = optionValue(args, '--clip') ?? 'librispeech/103-1240-0006';
  const suffix = reportSuffix(args);
  const prov = provenance();
  const clip = readEvalSet().find((c) => c.id === clipId);
  if (!clip) throw new Error(`no clip ${clipId} in the eval set`);

  // The server as the eval starts it: real base q8_0, 2 threads, the full window, no Silero.
  const ours = await startOurs({ beam, window: 'full' });
  try {
    const { client } = ours;
    const request = async () => {
      const t0 = performance.now();
      const { response } = await client.audio.transcriptions.create({ file: createReadStream(clip.file), model: 'service-local-stt', language: clip.language }).withResponse();
      const ms = performance.now() - t0;
      const t = timingParts(response.headers.get('server-timing'));
      return { ms, decode: t.decode ?? NaN, queue: t.queue ?? NaN, stt: t.stt ?? NaN };
    };
    const cli = async () => stagesSum(await cliRun(clip.file, { threads: THREADS, language: clip.language, beam }));
    await request(); // warm-up, as the eval's
    const rows: { cli: number; request: number; decode: number; queue: number; stt: number }[] = [];
    for (let r = 0; r < rounds; r++) {
      let c: number;
      let q: Awaited<ReturnType<typeof request>>;
      if (r % 2 === 0) { c = await cli(); await sleep(100); q = await request(); } else { q = await request(); await sleep(100); c = await cli(); }
      rows.push({ cli: c, request: q.ms, decode: q.decode, queue: q.queue, stt: q.stt });
      await sleep(100);
      process.stdout.write('.');
    }
    process.stdout.write('\n');
    const cell = (xs: number[], digits = 0) => {
      const { lo, hi, coverage } = medianIntervalWithCoverage(xs);
      return `${fmt(median(xs), digits)} (${fmt(lo, digits)} .. ${fmt(hi, digits)}, ${fmt(coverage * 100, 0)} %)`;
    };
    const lines = [
      '| per round, ms: median (interval, its coverage) | |', '| --- | --- |',
      `| whisper-cli: the sum of its stages (features, encoder, decoder steps, sampling) | ${cell(rows.map((x) => x.cli))} |`,
      `| the request, as the client times it | ${cell(rows.map((x) => x.request))} |`,
      `| … the server decoding the upload (Server-Timing decode) | ${cell(rows.map((x) => x.decode), 1)} |`,
      `| … waiting in the queue (queue) | ${cell(rows.map((x) => x.queue), 1)} |`,
      `| … the transcription (stt) | ${cell(rows.map((x) => x.stt))} |`,
      `| … the rest: HTTP, the form, the answer | ${cell(rows.map((x) => x.request - x.decode - x.queue - x.stt), 1)} |`,
      `| the transcription − whisper-cli's stages, same round | ${cell(rows.map((x) => x.stt - x.cli), 1)} |`,
      `| the request ÷ whisper-cli's stages, same round | ${cell(rows.map((x) => x.request / x.cli), 3)} |`,
    ];
    const date = today();
    saveReport(`request-overhead-${date}${suffix}`, [
      `# What a request costs beyond whisper.cpp's stages, ${date}`, '',
      `\`npx tsx benchmarks/studies/request-overhead.ts --rounds ${rounds} --clip ${clipId} --beam ${beam}${nameFlag(suffix)}\` on commit ${commitState(prov)}; whisper-cli sha256 ${prov.binaries['whisper-cli']}; addon sha256 ${prov.binaries['stt_native.node'] ?? '—'}; ${prov.cores} cores (${prov.cpu}), ${THREADS} threads.`,
      `One held-out clip (${clip.id}, ${fmt(clip.seconds, 1)} s, from ${clip.source}), real base q8_0, ${beam === 1 ? 'greedy' : `beam ${beam}`}, the full window, language given. The server runs in this process as the eval starts it (no Silero, 2 threads always); each round one whisper-cli run and one request, back to back, the order alternating, 100 ms apart; one request of warm-up first.`, '',
      ...lines, '',
    ].join('\n'), { provenance: prov, clip: clip.id, beam, rounds: rows });
  } finally {
    await ours.close();
  }
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`request-overhead: ${(err as Error).stack}\n`);
    process.exit(1);
  });
}
