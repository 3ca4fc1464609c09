// Text Whisper writes where nobody speaks, recognisable by its shape: a
// segment that is nothing but annotations (whisper.cpp's "[BLANK_AUDIO]" for
// silence, "[Music]", "(applause)", "*sigh*", "♪"). OpenAI answers an empty
// text there, and an app would paste the tags into its documents. A segment
// is dropped only when it holds no word outside the marks, so no spoken
// word is lost; the English normaliser of the eval removes such marks too,
// so its word error rate cannot change.
import type { OutputTranscription } from './formats';

// A mark is short and says what is heard, not said: no digits, commas or questions
// (" (1990)", " (I mean, who cares?)" are speech). One note at a time: a run is
// the outer repetition's, so the pattern cannot backtrack exponentially on a row of ♪.
const ANNOTATION = String.raw`\[[^\]\d?,]{1,40}\]|\([^)\d?,]{1,40}\)|\*[^*\d?,]{1,40}\*|[♪♫♬]`;
const ONLY_ANNOTATIONS = new RegExp(String.raw`^\s*(?:(?:${ANNOTATION})[\s.,!?-]*)+$`, 'u');

/** Whether a segment's text is nothing but non-speech annotations (and punctuation). */
export function isNonSpeechAnnotation(text: string): boolean {
  return ONLY_ANNOTATIONS.test(text);
}

/** The transcription without its annotation-only segments, its text rebuilt from the rest; `dropped` says how many went. */
export function withoutAnnotations<T extends OutputTranscription>(t: T): { result: T; dropped: number } {
  const kept = t.segments.filter((s) => !isNonSpeechAnnotation(s.text));
  const dropped = t.segments.length - kept.length;
  if (dropped === 0 && !isNonSpeechAnnotation(t.text)) return { result: t, dropped: 0 };
  return { result: { ...t, segments: kept, text: kept.map((s) => s.text).join('') }, dropped };
}
