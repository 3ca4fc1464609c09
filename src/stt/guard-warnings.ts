// verbose_json's `warnings`: which of the guards against text where nobody
// speaks, or against Whisper's loops, changed this transcription, so a client
// can tell audio without speech from a failure and a retried window from a
// clean one. Not an OpenAI field (its clients ignore unknown fields); listed
// only when a guard fired, so an ordinary answer keeps OpenAI's shape.
export const GUARD_WARNING_CODES = ['no_speech', 'silent_windows_dropped', 'annotations_dropped', 'temperature_fallback'] as const;

export interface GuardWarning {
  code: (typeof GUARD_WARNING_CODES)[number];
  message: string;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * The guards that fired: the speech gate or VAD (the addon's noSpeech and
 * gatedSegments), the annotation filter (`annotationsDropped` segments), and
 * whisper.cpp's temperature fallback (a kept segment decoded above the
 * requested temperature).
 */
export function guardWarnings(
  t: { noSpeech?: boolean; gatedSegments?: number; segments: readonly { temperature?: number }[] },
  annotationsDropped: number,
  requestedTemperature: number,
): GuardWarning[] {
  const warnings: GuardWarning[] = [];
  if (t.noSpeech) warnings.push({ code: 'no_speech', message: 'No speech was heard in the audio, so none of it was transcribed.' });
  if (t.gatedSegments) {
    warnings.push({ code: 'silent_windows_dropped', message: `${plural(t.gatedSegments, 'segment was', 'segments were')} left out: decoded from 30-second windows in which no speech was heard.` });
  }
  if (annotationsDropped > 0) {
    warnings.push({ code: 'annotations_dropped', message: `${plural(annotationsDropped, 'segment was', 'segments were')} left out: nothing but non-speech marks such as [BLANK_AUDIO] or [Music].` });
  }
  const retried = t.segments.filter((s) => s.temperature !== undefined && s.temperature > requestedTemperature + 1e-6).length;
  if (retried > 0) {
    warnings.push({ code: 'temperature_fallback', message: `${plural(retried, 'segment was', 'segments were')} decoded again at a higher temperature after a repetitive or low-confidence first attempt.` });
  }
  return warnings;
}
