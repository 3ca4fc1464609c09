// The decoder thread's entry (started by decoder-thread.ts): decodes one Ogg
// or WebM file per message, in order, and answers with the 16-kHz samples
// (their buffer transferred, not copied) or the WavError's message and code.
import { parentPort } from 'node:worker_threads';
import { WavError } from '../native/addon-errors';
import { decodeCompressed } from './decode-compressed';

export interface DecodeRequest {
  id: number;
  bytes: Uint8Array;
  maxSeconds: number;
}

export type DecodeReply =
  | { id: number; audio: import('../native').DecodedAudio }
  | { id: number; error: { message: string; code: WavError['code'] | null } };

parentPort?.on('message', async ({ id, bytes, maxSeconds }: DecodeRequest) => {
  try {
    const audio = await decodeCompressed(bytes, maxSeconds);
    parentPort!.postMessage({ id, audio } satisfies DecodeReply, [audio.pcm.buffer as ArrayBuffer]);
  } catch (err) {
    const error = { message: (err as Error).message, code: err instanceof WavError ? err.code : null };
    parentPort!.postMessage({ id, error } satisfies DecodeReply);
  }
});
