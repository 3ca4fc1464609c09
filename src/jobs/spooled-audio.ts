// A job's spooled recording decoded to 16-kHz samples, in one of the
// server's decode slots (shared with the transcription routes): the file and
// its samples are held whole while it is decoded, so the slot is taken
// before the file is read. Used at submission (to refuse what cannot be
// read, and to measure it) and when the job starts.
import { readFile } from 'node:fs/promises';
import { decodeAudio } from '../audio/decode-audio';
import { WavError } from '../native/addon-errors';
import type { Semaphore } from '../stt/semaphore';
import { readWavHeader } from '../stt/wav-header';

export async function decodeSpooled(file: string, slots: Semaphore, signal: AbortSignal | undefined, maxSeconds: number) {
  await slots.acquire(signal);
  try {
    const bytes = await readFile(file);
    // A WAV's header says how long it is: refused before its samples are laid out
    // (the decoder holds them at the file's own rate first: 4 bytes per 8-bit sample).
    const header = readWavHeader(bytes);
    if (header && header.durationSeconds > maxSeconds) throw new WavError(`wav: ${Math.ceil(header.durationSeconds)} s`, 'audio_too_long');
    return await decodeAudio(bytes, maxSeconds);
  } finally {
    slots.release();
  }
}
