// How much of Whisper's 30-s encoder window a clip under 30 s gets
// (whisper.cpp's audio_ctx, in encoder positions of 20 ms). `full`, the
// default, always encodes 30 s, as Whisper was trained; `tail` encodes the
// clip and at least 5 s after it, up to the full 30 s (the `fast` choice with
// greedy decoding); `floor` never goes under 15 s; `shrink` encodes the clip
// plus a margin (base loops on short windows). `tail` looked better on the
// set it was chosen on; on held-out speech it cost WER (docs/performance.md),
// so the full window is the default and the others are choices.
//
// Windows are whole blocks of 256 positions: whisper.cpp's flash attention
// pads K and V to 256 positions with no mask, so a window of 750 positions
// attends to 18 more that hold no audio (zeros, or an earlier run's values:
// cmake/whisper-patches.cmake); a window of 768 has none to attend to.
export const ENCODER_WINDOWS = ['full', 'floor', 'tail', 'shrink'] as const;
export type EncoderWindow = (typeof ENCODER_WINDOWS)[number];

export const DEFAULT_ENCODER_WINDOW: EncoderWindow = 'full';

/** Whisper's encoder sees 50 positions per second of audio, 1500 for the full window. */
const POSITIONS_PER_SECOND = 50;
const FULL_WINDOW = 1500;
/** Margin so the last words are not cut off by a window that ends exactly at the audio's end. */
const MARGIN = 64;
/** Flash attention's padding in whisper.cpp (GGML_PAD(n_ctx, 256)). */
const BLOCK = 256;
/** `floor`: the shortest window, 3 blocks (15.36 s). */
const FLOOR = 3 * BLOCK;
/** `tail`: positions after the clip's end, 5 s. */
const TAIL = 5 * POSITIONS_PER_SECOND;

const asSeconds = (positions: number) => `${positions / POSITIONS_PER_SECOND} s`;
/** Each policy in one line, for reports and docs, from the constants above. */
export const ENCODER_WINDOW_RULES: Record<EncoderWindow, string> = {
  full: `the whole ${FULL_WINDOW} positions (${asSeconds(FULL_WINDOW)})`,
  floor: `the clip plus ${MARGIN} positions, never under ${FLOOR} (${asSeconds(FLOOR)}), in blocks of ${BLOCK}`,
  tail: `the clip plus ${TAIL} positions (${asSeconds(TAIL)} after its end), in blocks of ${BLOCK}`,
  shrink: `the clip plus ${MARGIN} positions, in blocks of ${BLOCK}`,
};

/**
 * audio_ctx for a clip: 0 means the model's full window (`modelWindow`, its
 * n_audio_ctx: whisper.cpp refuses an audio_ctx larger than that).
 */
export function encoderWindowFor(policy: EncoderWindow, seconds: number, modelWindow = FULL_WINDOW): number {
  if (policy === 'full' || seconds >= 30) return 0;
  // The epsilon keeps a whole number of positions whole: 8.96 s × 50 is 448.00000000000006.
  const clip = Math.ceil(seconds * POSITIONS_PER_SECOND - 1e-9);
  const wanted = policy === 'floor' ? Math.max(FLOOR, clip + MARGIN) : policy === 'tail' ? clip + TAIL : clip + MARGIN;
  const positions = Math.ceil(wanted / BLOCK) * BLOCK;
  return positions >= Math.min(FULL_WINDOW, modelWindow) ? 0 : positions;
}
