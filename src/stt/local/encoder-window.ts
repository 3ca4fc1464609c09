// How much of Whisper's 30-s encoder window a clip under 30 s gets
// (whisper.cpp's audio_ctx, in encoder positions of 20 ms). `full` always
// encodes 30 s, as Whisper was trained; `shrink` encodes the clip plus a
// margin (about 3x faster on 1-12-s clips, but base loops on short windows:
// WER 6.3 % → 24 %); `floor` never goes under 15 s (0.48x the time of full on
// clips of 1-30 s, the same WER in one run on real base q8_0:
// benchmarks/results/window-policy-2026-11-24-base-q8_0-floors.md).
export type EncoderWindow = 'full' | 'floor' | 'shrink';

/** Whisper's encoder sees 50 positions per second of audio, 1500 for the full window. */
const POSITIONS_PER_SECOND = 50;
const FULL_WINDOW = 1500;
/** Margin so the last words are not cut off by a window that ends exactly at the audio's end. */
const MARGIN = 64;
/** `floor`: the shortest window, 15 s. */
const FLOOR = 750;

/** audio_ctx for a clip: 0 means the full window. */
export function encoderWindowFor(policy: EncoderWindow, seconds: number): number {
  if (policy === 'full' || seconds >= 30) return 0;
  const fitted = Math.ceil(seconds * POSITIONS_PER_SECOND) + MARGIN;
  const positions = policy === 'floor' ? Math.max(FLOOR, fitted) : fitted;
  return positions >= FULL_WINDOW ? 0 : positions;
}
