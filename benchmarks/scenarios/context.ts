// What every scenario of `npm run bench` gets: the run's settings and shared
// state (BenchContext), the model shape it measures (Shape) and, for the
// scenarios that pair ours with the harness, our server started once per shape.
import type { Contender } from '../lib/servers';
import type { OutputCheck } from '../lib/outputs';
import type { ScenarioResults } from '../lib/bench-types';
import { benchModel, type BenchModel } from '../lib/models';
import { encoderWindowFor } from '../../src/stt/local/encoder-window';
import { BENCH_WINDOW } from '../lib/window';

export type Family = 'whisper' | 'parakeet';

export interface Shape {
  name: string;
  family: Family;
  file: string;
  runtime: { id: string; file: string };
  /** Encoder dimensions for the FLOP count (Whisper only). */
  encoder?: { state: number; layers: number };
  quant: string;
  weights: BenchModel['weights'];
  /** Temperature fallback for every contender: on with real weights. */
  fallback: boolean;
}

export async function shapeOf(name: string): Promise<Shape> {
  const { file, weights } = await benchModel(name);
  const fallback = weights === 'real';
  if (name.startsWith('parakeet')) {
    return { name, family: 'parakeet', file, weights, fallback, quant: name.split('-').pop()!, runtime: { id: 'parakeet-tdt-0.6b-v3', file: 'parakeet-tdt-0.6b-v3-q8_0.bin' } };
  }
  const [size, quant] = name.split('-');
  return {
    name, family: 'whisper', file, quant, weights, fallback,
    runtime: size === 'base' ? { id: 'whisper-base', file: 'ggml-base.bin' } : { id: 'whisper-small', file: 'ggml-small.bin' },
    encoder: size === 'base' ? { state: 512, layers: 6 } : { state: 768, layers: 12 },
  };
}

/**
 * The overhead pairs, their control and the floor run with the temperature
 * fallback off on both sides, whatever the load rounds use. With it on, a
 * window decoded again at T > 0 samples from whisper.cpp decoder 0's
 * generator, which is seeded once per state and carries over between
 * requests: the same 30-s clip then took 3.3-12.6 s in one harness process
 * (benchmarks/results/2026-11-23-narrowed.md at commit 79c8aca), which
 * measures the generator's history, not the server. Off, every run does the
 * same work; and since the fallback only adds passes after the T = 0 one, a
 * time without it is a true floor.
 */
export const PAIRS_FALLBACK = false;
/** Output-check scope of the fallback-off answers: they may differ from the fallback-on ones, legitimately. */
export const pairsScope = (shape: Shape) => `${shape.name}/fallback off`;

/** The encoder window ours gives a clip by default (whisper.cpp's audio_ctx; 0: the full 30 s). Parakeet has none. */
export const oursWindow = (shape: Shape, seconds: number) => (shape.family === 'whisper' ? encoderWindowFor(BENCH_WINDOW, seconds) : 0);
/** Output-check scope of an answer decoded in `audioCtx`: answers in different windows may differ, legitimately. */
export const windowScope = (shape: Shape, audioCtx: number) => (audioCtx ? `${shape.name}/audio_ctx ${audioCtx}` : shape.name);

/** The run: its settings and what every scenario shares. */
export interface BenchContext {
  quick: boolean;
  /** Rounds of the contention scenario (benchmarks/trials.ts, by the size of run). */
  contentionRounds: number;
  threads: number;
  /** Pairs per overhead ratio: an even count, so each side goes first equally often. */
  pairs: number;
  /** Runs of the naive CLI per clip and of the cold start per model. */
  oneOffRuns: number;
  /** Scratch directory (benchmarks/.work). */
  work: string;
  /** The speech clips by length in seconds, as WAV, and their files under `work`. */
  clips: Record<number, Buffer>;
  clipFile(seconds: number): string;
  check: OutputCheck;
  log(message: string): void;
  /** The settings the report shows: ours (the load rounds' contender when there is one) and every load contender's. */
  settings: { server: Record<string, string | undefined>; contenders: Record<string, Record<string, string | undefined>> };
}

/** One shape's pass through the scenarios. */
export interface ShapeRun {
  bench: BenchContext;
  shape: Shape;
  /** The shape's place in the run (0: the first). */
  index: number;
  /** Load rounds for this shape (benchmarks/trials.ts, or --rounds). */
  loadRounds: number;
  /** Ours with the pairs' fallback, started at the first call for this shape and warmed up; stopped before the first `alone` scenario. */
  pairedOurs(): Promise<Contender>;
}

/** A scenario type: the code behind every entry of that type in SCENARIOS (benchmarks/trials.ts). */
export interface ScenarioType {
  /** `paired`: runs while the paired server is up (whether it uses it or not); `alone`: with no other process of ours running. */
  phase: 'paired' | 'alone';
  run(run: ShapeRun): Promise<ScenarioResults>;
}
