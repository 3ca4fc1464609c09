// How much of Whisper's 30-s encoder window a clip under 30 s gets
// (whisper.cpp's audio_ctx, in encoder positions of 20 ms). `full`, the
// default, always encodes 30 s, as Whisper was trained; `tail` encodes the
// clip and at least 5 s after it, up to the full 30 s (the `fast` choice with
// greedy decoding). `tail` looked better on the set it was chosen on; on
// held-out speech it cost WER (docs/performance.md), so the full window is
// the default and `tail` a choice. (Two shorter policies, `shrink` and
// `floor`, were removed: base loops on short windows, and neither was ever
// measured to cost nothing.)
//
// Windows are whole blocks of 256 positions: whisper.cpp's flash attention
// pads K and V to 256 positions with no mask, so a window of 750 positions
// attends to 18 more that hold no audio (zeros, or an earlier run's values:
// cmake/whisper-patches.cmake); a window of 768 has none to attend to.
export const ENCODER_WINDOWS = ['full', 'tail'] as const;
export type EncoderWindow = (typeof ENCODER_WINDOWS)[number];

export const DEFAULT_ENCODER_WINDOW: EncoderWindow = 'full';

/** Whisper's encoder sees 50 positions per second of audio, 1500 for the full window. */
const POSITIONS_PER_SECOND = 50;
const FULL_WINDOW = 1500;
/** Flash attention's padding in whisper.cpp (GGML_PAD(n_ctx, 256)). */
const BLOCK = 256;
/** `tail`: positions after the clip's end, 5 s. */
const TAIL = 5 * POSITIONS_PER_SECOND;

const asSeconds = (positions: number) => `${positions / POSITIONS_PER_SECOND} s`;
/** Each policy in one line, for reports and docs, from the constants above. */
export const ENCODER_WINDOW_RULES: Record<EncoderWindow, string> = {
  full: `the whole ${FULL_WINDOW} positions (${asSeconds(FULL_WINDOW)})`,
  tail: `the clip plus ${TAIL} positions (${asSeconds(TAIL)} after its end), in blocks of ${BLOCK}`,
};

/**
 * audio_ctx for a clip: 0 means the model's full window (`modelWindow`, its
 * n_audio_ctx: whisper.cpp refuses an audio_ctx larger than that).
 */
export function encoderWindowFor(policy: EncoderWindow, seconds: number, modelWindow = FULL_WINDOW): number {
  if (policy === 'full' || seconds >= 30) return 0;
  // The epsilon keeps a whole number of positions whole: 8.96 s × 50 is 448.00000000000006.
  const clip = Math.ceil(seconds * POSITIONS_PER_SECOND - 1e-9);
  const positions = Math.ceil((clip + TAIL) / BLOCK) * BLOCK;
  return positions >= Math.min(FULL_WINDOW, modelWindow) ? 0 : positions;
}
