// A loaded model and its transcriptions: options validated, AbortSignal and
// pausable jobs wired to the addon's job control, segments fed in order.
import path from 'node:path';
import { addon, type NativeJobControl, type NativeModel } from './binding';
import { inTemperatureRange, TEMPERATURE_RANGE } from './limits';
import { inspectModelFile, ModelFileError, type ModelFamily, type ModelFileInfo } from './model-file';
import type { JobControl, ModelStats, ResumePoint, Segment, Transcription, TranscribeOptions } from './types';

/**
 * Every job in flight. Node's exit joins the libuv pool's threads, and a
 * paused job's thread waits for a resume only this thread could send: without
 * this, process.exit(), an uncaught exception or an unhandled rejection with a
 * job paused would hang forever instead of exiting. Aborting opens every
 * job's gate; each returns at its next node or token.
 */
const liveJobs = new Set<NativeJobControl>();
export function abortAllJobs(): void {
  for (const control of liveJobs) control.abort();
}
process.on('exit', abortAllJobs);

/** A fresh control to pass as `transcribe(pcm, { control })`. */
export function createJobControl(): JobControl {
  return new addon.JobControl();
}

export class Model {
  private constructor(
    private readonly native: NativeModel,
    readonly family: ModelFamily,
    readonly file: ModelFileInfo,
  ) {}

  /** @internal */
  static wrap(native: NativeModel, file: ModelFileInfo): Model {
    return new Model(native, file.family, file);
  }

  /** Throws or rejects with a TranscriptionError (see its codes); option errors are TypeError or RangeError. */
  transcribe(pcm: Float32Array, options: TranscribeOptions = {}): Promise<Transcription> {
    const { signal, control: given, onSegment, onCheckpoint, ...rest } = options;
    if (!(pcm instanceof Float32Array)) throw new TypeError('pcm must be a Float32Array');
    validateOptions(rest);
    if (onSegment !== undefined && typeof onSegment !== 'function') throw new TypeError('onSegment must be a function');
    if (onCheckpoint !== undefined && typeof onCheckpoint !== 'function') throw new TypeError('onCheckpoint must be a function');
    if (given !== undefined && !(given instanceof addon.JobControl)) throw new TypeError('control must come from createJobControl()');
    const control = (given as NativeJobControl | undefined) ?? new addon.JobControl();
    if (signal?.aborted) control.abort();
    const onAbort = (): void => control.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    liveJobs.add(control);
    const segments = onSegment ? new SegmentFeed(onSegment, control) : null;
    let settled = false;
    let checkpointFailure: { error: unknown } | null = null;
    // A callback that throws ends the job, as onSegment's does (an exception here would be uncaught).
    const checkpoints = onCheckpoint && ((point: ResumePoint, done: Segment[], gated: number) => {
      if (settled || checkpointFailure) return;
      try {
        onCheckpoint(point, done, gated);
      } catch (error) {
        checkpointFailure = { error };
        control.abort();
      }
    });
    const failed = () => {
      if (segments?.failure) throw segments.failure.error;
      if (checkpointFailure) throw checkpointFailure.error;
    };
    return this.native.transcribe(pcm, { ...rest, ...(segments && { onSegment: segments.push }), ...(checkpoints && { onCheckpoint: checkpoints }) }, control)
      .then(
        (result) => {
          segments?.finish(result);
          failed();
          return result;
        },
        (err) => {
          failed();
          throw err;
        },
      )
      .finally(() => {
        settled = true;
        segments?.close();
        liveJobs.delete(control);
        signal?.removeEventListener('abort', onAbort);
      });
  }

  stats(): ModelStats {
    return this.native.stats();
  }

  /**
   * Aborts jobs in flight and frees the model once the last of them has
   * returned, on a pool thread. Settles when this object's hold is dropped;
   * callers need not wait for it.
   */
  dispose(): Promise<void> {
    return this.native.dispose();
  }
}

/**
 * The addon's segment calls arrive through their own queue, which may drain
 * after the job's promise settles: the result's segments not yet delivered
 * are delivered when it resolves, and later calls are dropped, so the caller
 * sees each segment once, in order, before the result. A callback that throws
 * ends the job: it is aborted and transcribe() rejects with what was thrown.
 */
class SegmentFeed {
  private delivered = 0;
  private closed = false;
  failure: { error: unknown } | null = null;

  constructor(
    private readonly onSegment: (text: string, index: number) => void,
    private readonly control: NativeJobControl,
  ) {}

  readonly push = (index: number, text: string): void => {
    if (this.closed || index !== this.delivered) return;
    this.delivered++;
    try {
      this.onSegment(text, index);
    } catch (error) {
      this.failure = { error };
      this.closed = true;
      this.control.abort();
    }
  };

  finish(result: Transcription): void {
    while (!this.closed && this.delivered < result.segments.length) this.push(this.delivered, result.segments[this.delivered].text);
  }

  close(): void {
    this.closed = true;
  }
}

function validateOptions(o: Omit<TranscribeOptions, 'signal'>): void {
  const intIn = (v: unknown, name: string, min: number, max: number): void => {
    if (v === undefined) return;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      throw new RangeError(`${name} must be an integer in ${min}..${max}`);
    }
  };
  intIn(o.threads, 'threads', 1, 256);
  intIn(o.decoderThreads, 'decoderThreads', 1, 256);
  intIn(o.maxTokens, 'maxTokens', 0, 100000);
  intIn(o.beamSize, 'beamSize', 1, 8);
  intIn(o.audioCtx, 'audioCtx', 0, 100000);
  if (o.temperature !== undefined && !(typeof o.temperature === 'number' && inTemperatureRange(o.temperature))) {
    throw new RangeError(`temperature must be a number in ${TEMPERATURE_RANGE.min}..${TEMPERATURE_RANGE.max}`);
  }
  if (o.language !== undefined && !/^[a-z]{2,3}$/.test(o.language)) throw new RangeError('language must be an ISO-639-1 code');
  if (o.pieceSeconds !== undefined && !(typeof o.pieceSeconds === 'number' && (o.pieceSeconds === 0 || (o.pieceSeconds >= 1 && o.pieceSeconds <= 100_000)))) {
    throw new RangeError('pieceSeconds must be 0 (the model\'s context) or a number of seconds in 1..100000');
  }
  if (o.resumeFrom !== undefined) {
    const r = o.resumeFrom;
    const ints = (v: unknown, n: [number, number]) => Array.isArray(v) && v.length >= n[0] && v.length <= n[1] && v.every((x) => Number.isSafeInteger(x));
    if (typeof r !== 'object' || r === null || !Number.isSafeInteger(r.position) || r.position < 0 || !ints(r.prompt, [0, 1024])
      || !ints(r.clock, [3, 3]) || !Array.isArray(r.rngs) || r.rngs.length > 8 || !r.rngs.every((x) => typeof x === 'string' && /^[\d ]{0,8000}$/.test(x))
      || typeof r.language !== 'string' || !/^([a-z]{2,3})?$/.test(r.language)) {
      throw new TypeError('resumeFrom must be a point onCheckpoint gave');
    }
  }
  if (o.speechGate && o.vad === undefined) throw new TypeError('speechGate needs vad (the Silero model it listens with)');
  if (o.vad !== undefined) {
    if (typeof o.vad?.modelPath !== 'string' || o.vad.modelPath === '') throw new TypeError('vad.modelPath must name a Silero model file');
    if (o.vad.threshold !== undefined && !(typeof o.vad.threshold === 'number' && o.vad.threshold >= 0 && o.vad.threshold <= 1)) {
      throw new RangeError('vad.threshold must be a number in 0..1');
    }
    intIn(o.vad.minSpeechMs, 'vad.minSpeechMs', 0, 60_000);
    intIn(o.vad.minSilenceMs, 'vad.minSilenceMs', 0, 60_000);
    intIn(o.vad.speechPadMs, 'vad.speechPadMs', 0, 60_000);
  }
}

export interface LoadModelOptions {
  /** Rejects unless the file is of this family. */
  family?: ModelFamily;
}

/** Checks the file's structure (ModelFileError), then loads it on the thread pool (ModelLoadError). */
export async function loadModel(file: string, options: LoadModelOptions = {}): Promise<Model> {
  const info = await inspectModelFile(file);
  if (options.family && info.family !== options.family) {
    throw new ModelFileError('model_file_foreign', `expected a ${options.family} model, found ${info.family}`);
  }
  const native = await addon.loadModel(path.resolve(file), info.family, info.bytes);
  return Model.wrap(native, info);
}
