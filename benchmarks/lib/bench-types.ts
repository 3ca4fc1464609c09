// What `npm run bench` records in benchmarks/results/<name>.json, per model
// shape and for the run: written by the scenarios (benchmarks/scenarios/),
// read by the report (benchmarks/lib/report.ts). Fields that older result
// files lack are optional, so `--report` renders them too.
import type { Mix } from './mixes';
import type { MixRound } from './load';
import type { Mismatch } from './outputs';
import type { Provenance } from './provenance';

/** Ours over HTTP against the bare harness, pair by pair (benchmarks/scenarios/overhead.ts). */
export interface OverheadResult {
  oursMs: number[];
  harnessMs: number[];
  /** ours ÷ harness, per pair. */
  ratios: number[];
  /** Per pair: whether ours went first. */
  oursFirst: boolean[];
  /** What the server adds around the addon call: HTTP, multipart, WAV decoding, queueing, rendering. */
  addedMs: number[];
  /** The addon call inside the server ÷ the harness, per pair: inference speed alone. */
  inferenceRatios: number[];
  /** whisper.cpp's own encoder time per harness run (Whisper only). */
  encodeMs: number[];
}

/** The harness against a second harness process, paired as ours is (benchmarks/scenarios/control.ts). */
export interface ControlResult {
  ratios: number[];
  oursFirst: boolean[];
}

/** Every mix, round after round, against every contender (benchmarks/scenarios/load.ts). */
export interface LoadResult {
  /** Ours, one request at a time, per clip length: the capacity the Poisson mixes are drawn at. */
  serviceMs: Record<number, number>;
  /** Every contender one request at a time, median ms per clip length (5 and 30 s; 120 s for ours). */
  alone?: Record<string, Record<number, number>>;
  mixes: Mix[];
  rounds: MixRound[];
}

/** One CLI process per request (benchmarks/scenarios/naive.ts). */
export interface NaiveResult {
  contender: string;
  /** Median per clip length. */
  ms: Record<number, number>;
  runs: Record<number, number[]>;
}

export interface ColdStart {
  oursMs: number;
  oursRss: number;
  harnessMs: number;
  harnessRss: number;
}

/** Process start to the first 5-s transcription, and memory (benchmarks/scenarios/cold-start.ts): medians, and every run. */
export interface ColdResult extends ColdStart {
  runs: ColdStart[];
}

/** What the shared store adds to a request (benchmarks/scenarios/store.ts): latency per backend, medians and 90th percentiles. */
export interface StoreResult {
  /** Requests per backend and kind, after the warm-up. */
  requests: number;
  rows: { request: string; sqliteMs: { median: number; p90: number }; postgresMs: { median: number; p90: number } }[];
}

/** One decoding of the contention scenario (benchmarks/scenarios/contention.ts): raw per-run times, ms, [round][clip]. */
export interface ContentionDecoding {
  /** 1: greedy. */
  beam: number;
  ms: Record<'ours' | 'fw', Record<'alone' | 'shared', number[][]>>;
  /** Runs per condition whose text differs from that side's first answer for the clip (in any round or condition). */
  textsChanged: Record<'ours' | 'fw', Record<'alone' | 'shared', number>>;
}

/** Ours (the server, its shipped thread policy) and faster-whisper, alone and beside a busy process. */
export interface ContentionResult {
  /** Eval-set clip ids (dev half) and their total length, s. */
  clips: string[];
  seconds: number;
  rounds: number;
  /** This machine's cores, and each side's threads. */
  cores: number;
  threads: Record<'ours' | 'fw', number>;
  /** Ours' weight type. */
  quant: string;
  /** faster-whisper's and CTranslate2's versions. */
  versions: Record<string, string>;
  /** The pause before every run, both sides. */
  settleMs: number;
  /** Every STT_* the scenario set for ours, per beam size. */
  serverSettings: Record<number, Record<string, string | undefined>>;
  decodings: ContentionDecoding[];
}

/** What the scenarios measured for one model shape. */
export interface ScenarioResults {
  store?: StoreResult;
  /** benchmarks/scenarios/faster-whisper.ts: the comparison's report, as its lines. */
  fasterWhisper?: { lines: string[] };
  contention?: ContentionResult;
  overhead?: OverheadResult;
  control?: ControlResult | null;
  /** The harness's own time for a 5-s clip, warm (benchmarks/scenarios/floor.ts). */
  harness5Ms?: number;
  load?: LoadResult | null;
  naive?: NaiveResult;
  cold?: ColdResult;
}

/** One model shape's entry in `results`. */
export interface ShapeResult extends ScenarioResults {
  /** The shape's name; `-real` instead of `-ctx64` with real weights (they keep their decoder context of 448). */
  shape: string;
  family: 'whisper' | 'parakeet';
  weights: 'real' | 'random';
  /** Temperature fallback in the load rounds, the naive CLI and the cold start. */
  fallback: boolean;
  /** Temperature fallback in the overhead pairs, their control and the floor. */
  pairsFallback?: boolean;
  encodeMs: number;
  encoderGflop: number | null;
  achievedGflops: number | null;
  ceilingGflops: number | null;
}

/** The run: where, what and how (`meta` in the result file). */
export interface BenchMeta extends Omit<Provenance, 'uncommitted' | 'cpuFlags' | 'whisperCpp' | 'binaries'> {
  date: string;
  uncommitted?: string[];
  cpuFlags?: string[];
  whisperCpp?: Partial<Provenance['whisperCpp']>;
  binaries?: Record<string, string>;
  threads: number;
  quick: boolean;
  full: boolean;
  command?: string;
  /** whisper.cpp's system info: the ggml features compiled in. */
  ggml: string;
  /** Overhead pairs per model. */
  pairs: number;
  /** Runs of the naive CLI per clip and of the cold start per model. */
  oneOffRuns: number;
  loadRounds?: Record<string, number>;
  /** Every STT_* the benchmark set for ours. */
  serverSettings?: Record<string, string | undefined>;
  contenderSettings?: Record<string, Record<string, string | undefined>>;
  /** Node and the server with no model. */
  nodeBaselineRss: number;
  outputs?: { checked: Record<string, number>; mismatches: Mismatch[] };
  durationS: number;
}

export interface BenchResults {
  meta: BenchMeta;
  results: ShapeResult[];
}
