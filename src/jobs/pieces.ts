// A job's recording is transcribed in pieces of about PIECE_SECONDS, each
// cut at the quietest tenth of a second in the SEARCH_SECONDS before its
// nominal end (so a cut falls between words where the speaker pauses), and
// the pieces' transcripts are joined with their times moved to the
// recording's. Each finished piece is a point a restarted job resumes from.
import type { OutputTranscription } from '../stt/formats';

const RATE = 16_000;
export const PIECE_SECONDS = 300;
const SEARCH_SECONDS = 20;
const FRAME = RATE / 10;

/** The sample index the piece that starts at 0 ends at: the recording's end if it is no longer than a piece. */
export function firstPieceEnd(pcm: Float32Array, pieceSeconds = PIECE_SECONDS): number {
  const nominal = Math.round(pieceSeconds * RATE);
  if (pcm.length <= nominal) return pcm.length;
  return quietestFrame(pcm, Math.max(FRAME, nominal - SEARCH_SECONDS * RATE), nominal);
}

/** The sample index each piece ends at, the last one the recording's end. */
export function pieceEnds(pcm: Float32Array, pieceSeconds = PIECE_SECONDS): number[] {
  const ends: number[] = [];
  for (let start = 0; start < pcm.length; ) {
    start += firstPieceEnd(pcm.subarray(start), pieceSeconds);
    ends.push(start);
  }
  return ends;
}

/** The start of the frame in [from, to) with the least energy (the first such, on a tie). */
function quietestFrame(pcm: Float32Array, from: number, to: number): number {
  let best = to;
  let bestEnergy = Infinity;
  for (let at = from; at + FRAME <= to; at += FRAME) {
    let energy = 0;
    for (let i = at; i < at + FRAME; i++) energy += pcm[i] * pcm[i];
    if (energy < bestEnergy) [best, bestEnergy] = [at, energy];
  }
  return best;
}

const shift = (t: number, by: number) => Math.round((t + by) * 1000) / 1000;

/** `so far` (null before the first piece) with `piece`, which began `offsetSeconds` into the recording, after it. */
export function joinPiece(soFar: OutputTranscription | null, piece: OutputTranscription, offsetSeconds: number): OutputTranscription {
  const segments = piece.segments.map((s) => ({
    ...s,
    start: shift(s.start, offsetSeconds),
    end: shift(s.end, offsetSeconds),
    ...(s.seek !== undefined && { seek: s.seek + Math.round(offsetSeconds * 100) }),
    ...(s.words && { words: s.words.map((w) => ({ ...w, start: shift(w.start, offsetSeconds), end: shift(w.end, offsetSeconds) })) }),
  }));
  const warnings = [...(soFar?.warnings ?? []), ...(piece.warnings ?? [])];
  return {
    // Whisper's text opens with a space; Parakeet's may not, and must not run into the piece before.
    text: soFar?.text && piece.text && !/^\s/.test(piece.text) ? `${soFar.text} ${piece.text}` : (soFar?.text ?? '') + piece.text,
    // The first piece that heard speech names the language.
    language: soFar && soFar.segments.length ? soFar.language : piece.language,
    duration: shift(piece.duration, offsetSeconds),
    segments: [...(soFar?.segments ?? []), ...segments],
    ...(warnings.length && { warnings: warnings.filter((w, i) => warnings.findIndex((o) => o.code === w.code) === i) }),
  };
}
