// Runs the bare C++ harness (build/bin/stt-harness) and returns its per-run times.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { requireBin } from '../../fixtures';
import { onLines } from './lines';

const run = promisify(execFile);

export interface HarnessRun {
  ms: number;
  tokens: number;
  /** whisper.cpp's own timings (Whisper only): per encoder run and per decoded token. */
  encodeMs?: number;
  decodeMsPerToken?: number;
  /** Token ids (Whisper: text tokens below end-of-text; Parakeet: every emitted token): compared with the server's. */
  ids?: number[];
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const toRun = (e: Record<string, any>): HarnessRun => ({ ms: e.ms, tokens: e.tokens, encodeMs: e.encodeMs, decodeMsPerToken: e.decodeMsPerToken, ids: e.ids });
/** The harness's optional arguments: no token cap, the encoder window (audio_ctx, 0: the full 30 s), and the fallback setting. */
const tail = (fallback: boolean, audioCtx: number) => ['0', String(audioCtx), fallback ? '1' : '0'];

export async function harness(family: 'whisper' | 'parakeet', model: string, wav: string, threads: number, runs: number, fallback = false, audioCtx = 0): Promise<{ loadMs: number; runs: HarnessRun[]; maxRssBytes: number }> {
  const { stdout } = await run(requireBin('stt-harness'), [family, model, wav, String(threads), String(runs), ...tail(fallback, audioCtx)], { maxBuffer: 1 << 24 });
  const events = stdout.trim().split('\n').map((l) => JSON.parse(l));
  return {
    loadMs: events.find((e) => e.event === 'loaded').ms,
    runs: events.filter((e) => e.event === 'run').map(toRun),
    maxRssBytes: (events.find((e) => e.event === 'done')?.maxRssKb ?? 0) * 1024,
  };
}

/**
 * The harness kept running with its model loaded, one run per call, so a
 * benchmark can alternate harness and addon runs one by one: drift in the
 * machine's speed then hits both sides of each pair alike.
 */
export class HarnessSession {
  private readonly child;
  private readonly waiting: ((event: Record<string, number>) => void)[] = [];
  private readonly events: Record<string, number>[] = [];
  private exited: Promise<void>;

  constructor(family: 'whisper' | 'parakeet', model: string, wav: string, threads: number, fallback = false, audioCtx = 0) {
    this.child = spawn(requireBin('stt-harness'), [family, model, wav, String(threads), '0', ...tail(fallback, audioCtx)], { stdio: ['pipe', 'pipe', 'inherit'] });
    onLines(this.child.stdout, (line) => {
      const event = JSON.parse(line);
      const next = this.waiting.shift();
      if (next) next(event);
      else this.events.push(event);
    });
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
  }

  private next(): Promise<Record<string, number>> {
    const ready = this.events.shift();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve, reject) => {
      this.waiting.push(resolve);
      this.exited.then(() => reject(new Error('stt-harness exited')));
    });
  }

  /** Resolves once the model is loaded. */
  async ready(): Promise<void> {
    await this.next();
  }

  async run(): Promise<HarnessRun> {
    this.child.stdin.write('\n');
    return toRun(await this.next());
  }

  /** Ends the session; resolves with the harness's peak RSS. */
  async close(): Promise<number> {
    this.child.stdin.end();
    const done = await this.next();
    await this.exited;
    return (done.maxRssKb ?? 0) * 1024;
  }
}

export interface PairedRuns<T> {
  harness: HarnessRun[];
  ours: T[];
  oursMs: number[];
  /** ours ÷ harness, per pair. */
  ratios: number[];
  /** Per pair: whether ours ran first (pairs alternate), to read the order effect. */
  oursFirst: boolean[];
}

/**
 * `n` pairs of runs back to back, alternating which side goes first, so drift
 * in the machine's speed hits both sides of a pair alike. Warm both sides up first.
 */
export async function pairWithHarness<T extends { ms: number }>(session: HarnessSession, n: number, ours: () => Promise<T>, onPair?: () => void): Promise<PairedRuns<T>> {
  const out: PairedRuns<T> = { harness: [], ours: [], oursMs: [], ratios: [], oursFirst: [] };
  for (let i = 0; i < n; i++) {
    let h: HarnessRun, a: T;
    if (i % 2 === 0) {
      h = await session.run();
      a = await ours();
    } else {
      a = await ours();
      h = await session.run();
    }
    out.harness.push(h);
    out.ours.push(a);
    out.oursMs.push(a.ms);
    out.ratios.push(a.ms / h.ms);
    out.oursFirst.push(i % 2 === 1);
    onPair?.();
  }
  return out;
}
