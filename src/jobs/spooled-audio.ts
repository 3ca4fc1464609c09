// A job's spooled recording decoded to 16-kHz samples, in one of the
// server's decode slots (shared with the transcription routes): the file and
// its samples are held whole while it is decoded, so the slot is taken
// before the file is read. Used at submission (to refuse what cannot be
// read, and to measure it) and when the job starts. A WAV past the limit is
// refused by the decoder from its header, before any sample is read.
import { readFile } from 'node:fs/promises';
import { decodeAudio } from '../audio/decode-audio';
import type { Semaphore } from '../stt/semaphore';

export async function decodeSpooled(file: string, slots: Semaphore, signal: AbortSignal | undefined, maxSeconds: number) {
  await slots.acquire(signal);
  try {
    return await decodeAudio(await readFile(file), maxSeconds);
  } finally {
    slots.release();
  }
}
