// Renders a transcription in OpenAI's response formats: json, text,
// verbose_json, srt and vtt. Segment times are normalised first so every
// format gets well-formed, non-decreasing timestamps within the audio.
import { deflate } from 'pako';
import { languageName } from './languages';
import type { Segment, Transcription, Word } from '../native';
import type { GuardWarning } from './guard-warnings';

export const RESPONSE_FORMATS = ['json', 'text', 'verbose_json', 'srt', 'vtt'] as const;
export type ResponseFormat = (typeof RESPONSE_FORMATS)[number];

/** What every runtime produces: the addon's Transcription, minus word probabilities (cloud providers differ there). */
export type OutputWord = Omit<Word, 'probability'>;
/** Cloud providers may not report Whisper's window fields; the renderer falls back where they are absent. */
type WindowFields = 'tokensWithTimestamps' | 'seek' | 'temperature';
export type OutputSegment = Omit<Segment, 'words' | WindowFields> & Partial<Pick<Segment, WindowFields>> & { words?: OutputWord[] };
export type OutputTranscription = Omit<Transcription, 'segments'> & {
  segments: OutputSegment[];
  /** The guards that changed it (src/stt/guard-warnings.ts); verbose_json lists them. */
  warnings?: GuardWarning[];
};

export interface RenderOptions {
  /** Default transcribe; a translation's verbose_json says translate and English. */
  task?: 'transcribe' | 'translate';
  granularities: ReadonlySet<'segment' | 'word'>;
  temperature: number;
  /** include[]=logprobs (json): every text token with its log-probability, as OpenAI lists them. */
  logprobs?: boolean;
}

/** OpenAI's logprobs list: each token's text, natural-log probability and UTF-8 bytes. */
export function tokenLogprobs(t: OutputTranscription): { token: string; logprob: number; bytes: number[] }[] {
  return t.segments.flatMap((s) => s.tokenLogprobs ?? []).map(({ bytes, logprob }) => ({ token: bytes.toString('utf8'), logprob, bytes: [...bytes] }));
}

const round = (s: number) => Math.round(s * 1000) / 1000;

export function normaliseTimes(t: OutputTranscription): OutputSegment[] {
  let previousEnd = 0;
  return t.segments.map((s) => {
    const start = Math.min(Math.max(s.start, previousEnd), t.duration);
    const end = Math.min(Math.max(s.end, start), t.duration);
    previousEnd = end;
    let wordEnd = start;
    const words = s.words?.map((w) => {
      const ws = Math.min(Math.max(w.start, wordEnd), end);
      const we = Math.min(Math.max(w.end, ws), end);
      wordEnd = we;
      return { word: w.word, start: round(ws), end: round(we) };
    });
    return { ...s, start: round(start), end: round(end), words };
  });
}

/**
 * Whisper's compression_ratio: UTF-8 bytes over their zlib.compress()ed length
 * (header and checksum included). pako, a port of zlib's own deflate, because
 * Node's bundled zlib (Chromium's fork) can emit a different length for the
 * same input (80 against zlib's 79 bytes for the JFK sentence).
 */
export function compressionRatio(text: string): number {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length === 0) return 0;
  return Math.round((bytes.length / deflate(bytes).length) * 1000) / 1000;
}

/**
 * Whisper computes compression_ratio once per 30-s window, over the window's
 * whole text (stripped), and gives it to every segment of the window: the
 * same here, a window being a run of consecutive segments with one seek.
 */
function windowRatios(segments: OutputSegment[]): number[] {
  const ratios: number[] = [];
  for (let i = 0; i < segments.length; ) {
    let j = i + 1;
    while (segments[i].seek !== undefined && j < segments.length && segments[j].seek === segments[i].seek) j++;
    const ratio = compressionRatio(segments.slice(i, j).map((s) => s.text).join('').trim());
    for (; i < j; i++) ratios.push(ratio);
  }
  return ratios;
}

function clock(seconds: number, separator: ',' | '.'): string {
  const ms = Math.round(seconds * 1000);
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}${separator}${pad(ms % 1000, 3)}`;
}

interface Cue {
  start: number;
  end: number;
  text: string;
}

/**
 * Subtitle cues from the segments: empty ones dropped, and a cue of no length
 * (a segment clamped to the end of the audio) merged into the cue before it,
 * or the one after for the first, since players and validators refuse a cue
 * whose end is not after its start. A lone one is widened by a millisecond.
 */
export function subtitleCues(t: OutputTranscription): Cue[] {
  const cues: Cue[] = [];
  let pending: Cue | null = null; // a first cue of no length, waiting for the next
  for (const s of normaliseTimes(t)) {
    const text = s.text.trim();
    if (!text) continue;
    const cue: Cue = pending ? { start: pending.start, end: s.end, text: `${pending.text} ${text}` } : { start: s.start, end: s.end, text };
    pending = null;
    if (cue.end > cue.start) cues.push(cue);
    else if (cues.length) {
      const last = cues[cues.length - 1];
      last.text += ` ${cue.text}`;
      last.end = Math.max(last.end, cue.end);
    } else pending = cue;
  }
  if (pending) cues.push({ start: Math.max(0, pending.end - 0.001), end: Math.max(pending.end, 0.001), text: pending.text });
  return cues;
}

/**
 * OpenAI's usage object for models billed by audio duration (whisper-1):
 * whole seconds, rounded up as that billing rounds them.
 */
export function usage(t: OutputTranscription): { type: 'duration'; seconds: number } {
  return { type: 'duration', seconds: Math.ceil(t.duration) };
}

export function render(t: OutputTranscription, format: ResponseFormat, opts: RenderOptions): { body: string | object; type: string } {
  const text = t.text.trim();
  switch (format) {
    case 'json':
      return { body: opts.logprobs ? { text, logprobs: tokenLogprobs(t), usage: usage(t) } : { text, usage: usage(t) }, type: 'application/json' };
    case 'text':
      return { body: text + '\n', type: 'text/plain; charset=utf-8' };
    // Every cue ends with a blank line, as Whisper's own writers and OpenAI end them.
    case 'srt':
      return {
        body: subtitleCues(t).map((c, i) => `${i + 1}\n${clock(c.start, ',')} --> ${clock(c.end, ',')}\n${c.text}\n\n`).join(''),
        type: 'application/x-subrip; charset=utf-8',
      };
    case 'vtt':
      return {
        body: 'WEBVTT\n\n' + subtitleCues(t).map((c) => `${clock(c.start, '.')} --> ${clock(c.end, '.')}\n${c.text}\n\n`).join(''),
        type: 'text/vtt; charset=utf-8',
      };
    case 'verbose_json': {
      const segments = normaliseTimes(t);
      const body: Record<string, unknown> = {
        task: opts.task ?? 'transcribe',
        // OpenAI gives a translation's output language, always English.
        language: opts.task === 'translate' ? 'english' : languageName(t.language),
        duration: round(t.duration),
        text,
      };
      if (opts.granularities.has('segment')) {
        const ratios = windowRatios(segments);
        body.segments = segments.map((s, id) => ({
          id,
          seek: s.seek ?? 0,
          start: s.start,
          end: s.end,
          text: s.text,
          tokens: s.tokensWithTimestamps ?? s.tokens,
          temperature: Math.round((s.temperature ?? opts.temperature) * 10000) / 10000,
          avg_logprob: Math.round(s.avgLogprob * 10000) / 10000,
          compression_ratio: ratios[id],
          no_speech_prob: Math.round(s.noSpeechProb * 10000) / 10000,
        }));
      }
      if (opts.granularities.has('word')) body.words = segments.flatMap((s) => s.words ?? []);
      if (t.warnings?.length) body.warnings = t.warnings;
      body.usage = usage(t);
      return { body, type: 'application/json' };
    }
  }
}
