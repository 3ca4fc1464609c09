// One worker thread for the decoders that run in JavaScript and WebAssembly
// (Ogg, WebM), so a long file's decode never holds the event loop: libvorbis
// in WebAssembly and the resampling after it take seconds for an hour of
// audio. Started at the first such upload, then kept; it holds the process
// open only while a decode is pending. Files are decoded one after another, in arrival order;
// decode-upload.ts already bounds how many wait. If the thread dies (out of
// memory, a fault), the decodes it held fail with `decode_failed` and the
// next upload starts a new one.
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { DecodedAudio } from '../native';
import { WavError } from '../native/addon-errors';
import type { DecodeReply, DecodeRequest } from './decode-worker';

// The worker's file beside this one, with this one's extension: .js when compiled; .ts under tsx (tests,
// scripts), whose loader a worker thread does not inherit, so the thread registers it before loading the file.
const WORKER_FILE = path.join(__dirname, `decode-worker${path.extname(__filename)}`);
const newWorker = (): Worker =>
  path.extname(__filename) === '.ts'
    ? new Worker(`require('tsx/cjs'); require(${JSON.stringify(WORKER_FILE)});`, { eval: true })
    : new Worker(WORKER_FILE);

interface Pending {
  worker: Worker;
  resolve: (audio: DecodedAudio) => void;
  reject: (err: Error) => void;
}

let worker: Worker | null = null;
let nextId = 1;
const pending = new Map<number, Pending>();

const pendingOn = (w: Worker) => [...pending.values()].some((p) => p.worker === w);

/** The decodes `w` held fail; those on a newer thread are not its. */
function failAll(w: Worker, why: string): void {
  if (worker === w) worker = null;
  for (const [id, p] of pending) {
    if (p.worker !== w) continue;
    pending.delete(id);
    p.reject(new WavError(`the decoder thread stopped (${why})`, 'decode_failed'));
  }
}

function started(): Worker {
  if (worker) return worker;
  const w = newWorker();
  w.on('message', (reply: DecodeReply) => {
    const p = pending.get(reply.id);
    if (!p) return;
    pending.delete(reply.id);
    if (!pendingOn(w)) w.unref();
    if ('audio' in reply) p.resolve(reply.audio);
    else p.reject(reply.error.code ? new WavError(reply.error.message, reply.error.code) : new Error(reply.error.message));
  });
  w.on('error', (err) => failAll(w, err.message));
  w.on('exit', (code) => failAll(w, `exit code ${code}`));
  worker = w;
  return w;
}

/** Decodes an Ogg or WebM file on the decoder thread; rejects with a WavError. */
export function decodeOnThread(bytes: Uint8Array, maxSeconds: number): Promise<DecodedAudio> {
  const w = started();
  const id = nextId++;
  // A copy the thread can own: the upload's own buffer may be a slice of a larger one that stays here.
  const copy = new Uint8Array(bytes);
  return new Promise<DecodedAudio>((resolve, reject) => {
    // Held open only while something is pending on it.
    if (!pendingOn(w)) w.ref();
    pending.set(id, { worker: w, resolve, reject });
    w.postMessage({ id, bytes: copy, maxSeconds } satisfies DecodeRequest, [copy.buffer]);
  });
}

/** Stops the thread (tests: what happens to decodes in flight when it dies). */
export async function stopDecoderThread(): Promise<void> {
  await worker?.terminate();
}
