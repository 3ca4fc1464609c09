// What `npm run bench` runs, as data (after better-sqlite3's
// benchmark/trials.js and benchmark/types/): the model shapes of each size of
// run with their load rounds, and the scenarios every shape goes through, in
// order. The code of each scenario type is benchmarks/scenarios/<type>.ts.
import type { Family, ScenarioTypeName } from './scenarios';

export type RunSize = 'quick' | 'default' | 'full';

export interface Trial {
  /** A shape of benchmarks/lib/models.ts: real Whisper base weights when installed, otherwise generated. */
  shape: string;
  /** The sizes of run that include it (`--models a,b` picks shapes for any size). */
  sizes: RunSize[];
  /** Load rounds per size of run (`--rounds N` overrides). */
  loadRounds: Record<RunSize, number>;
}

/**
 * Load rounds: every mix, every contender, contenders rotating which goes
 * first. With ours in the full window (the default since 2026-11-26) a round
 * of all six mixes took about 27 minutes for base q8_0 here (275 s per mix for
 * the three contenders, in a --full run stopped after two mixes), and 3-4x
 * that for small. So load figures come from base q8_0 alone: the default run
 * has 3 rounds (the min–max of 3 covers the median with 75 %), about 1.5-2
 * hours in all; --full trades them for breadth to fit about an hour: one
 * load round, small f16 and Parakeet f16 added to the one-at-a-time
 * scenarios, each one-off run 5 times (5 rounds of every Whisper shape took
 * 4-5 hours); --quick is one round of two mixes.
 */
const rounds = (byDefault: number): Record<RunSize, number> => ({ quick: Math.min(1, byDefault), default: byDefault, full: Math.min(1, byDefault) });

export const TRIALS: Trial[] = [
  { shape: 'base-q8_0-ctx64', sizes: ['quick', 'default', 'full'], loadRounds: rounds(3) },
  { shape: 'base-f16-ctx64', sizes: ['default', 'full'], loadRounds: rounds(0) },
  { shape: 'small-q8_0-ctx64', sizes: ['default', 'full'], loadRounds: rounds(0) },
  { shape: 'small-f16-ctx64', sizes: ['full'], loadRounds: rounds(0) },
  { shape: 'parakeet-0.6b-q8_0', sizes: ['default', 'full'], loadRounds: rounds(0) },
  { shape: 'parakeet-0.6b-f16', sizes: ['full'], loadRounds: rounds(0) },
];

/**
 * Rounds of the contention scenario (both decodings, both conditions, eight
 * clips a round; about 5 minutes a round here, half of it the pause before
 * each run that lets the server's monitor forget the other side's): five by
 * default, for intervals; three in --full, to fit its hour; `--rounds N`
 * overrides.
 */
export const CONTENTION_ROUNDS: Record<RunSize, number> = { quick: 1, default: 5, full: 3 };

/** Load rounds of a shape that is not in TRIALS (named with --models). */
export const OTHER_SHAPE_ROUNDS = rounds(0);

export interface Scenario {
  type: ScenarioTypeName;
  /** One line: what it measures. */
  description: string;
  /** Only these families (default: every one). */
  families?: Family[];
  /** Only on the run's first shape. */
  firstShapeOnly?: boolean;
}

/** Every shape goes through these, in this order. */
export const SCENARIOS: Scenario[] = [
  { type: 'overhead', description: 'ours over HTTP against the bare C++ harness, in pairs, on a 30-s clip' },
  { type: 'control', firstShapeOnly: true, description: 'the harness against a second harness process, paired the same way: what this machine reads for two identical programs' },
  { type: 'floor', description: "the harness's own time for a 5-s clip, warm, median of 5: the floor of one-at-a-time service" },
  { type: 'load', families: ['whisper'], description: 'six request mixes against ours, ours in arrival order and whisper-server, in fresh processes' },
  { type: 'naive', description: 'one whisper-cli or parakeet-cli process per request, on the 5-s and 30-s clips' },
  { type: 'cold-start', description: 'process start to the first 5-s transcription, and peak RSS, ours against the harness' },
  { type: 'faster-whisper', firstShapeOnly: true, families: ['whisper'], description: 'ours against faster-whisper on the same real base weights: 5-, 30- and 120-s clips, greedy and beam 5, time, RTF and WER' },
  { type: 'contention', firstShapeOnly: true, families: ['whisper'], description: 'ours as the server ships it against faster-whisper int8, greedy and beam 5, on held-out clips alone and beside one busy process: the slowdown of each' },
  { type: 'store', firstShapeOnly: true, description: 'what PostgreSQL (several replicas) adds to a request against SQLite: auth with a cached and an unseen key, a rate-limited upload' },
];
