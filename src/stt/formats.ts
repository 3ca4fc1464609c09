// Renders a transcription in OpenAI's response formats: json, text,
// verbose_json, srt and vtt. Segment times are normalised first so every
// format gets well-formed, non-decreasing timestamps within the audio.
import { deflateRawSync } from 'node:zlib';
import { languageName } from './languages';
import type { Segment, Transcription, Word } from '../native';

export const RESPONSE_FORMATS = ['json', 'text', 'verbose_json', 'srt', 'vtt'] as const;
export type ResponseFormat = (typeof RESPONSE_FORMATS)[number];

/** What every runtime produces: the addon's Transcription, minus word probabilities (cloud providers differ there). */
export type OutputWord = Omit<Word, 'probability'>;
export type OutputSegment = Omit<Segment, 'words'> & { words?: OutputWord[] };
export type OutputTranscription = Omit<Transcription, 'segments'> & { segments: OutputSegment[] };

export interface RenderOptions {
  granularities: ReadonlySet<'segment' | 'word'>;
  temperature: number;
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

function compressionRatio(text: string): number {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length === 0) return 0;
  return Math.round((bytes.length / deflateRawSync(bytes).length) * 1000) / 1000;
}

function clock(seconds: number, separator: ',' | '.'): string {
  const ms = Math.round(seconds * 1000);
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}${separator}${pad(ms % 1000, 3)}`;
}

export function render(t: OutputTranscription, format: ResponseFormat, opts: RenderOptions): { body: string | object; type: string } {
  const text = t.text.trim();
  switch (format) {
    case 'json':
      return { body: { text }, type: 'application/json' };
    case 'text':
      return { body: text + '\n', type: 'text/plain; charset=utf-8' };
    case 'srt':
      return {
        body: normaliseTimes(t)
          .map((s, i) => `${i + 1}\n${clock(s.start, ',')} --> ${clock(s.end, ',')}\n${s.text.trim()}\n`)
          .join('\n'),
        type: 'application/x-subrip; charset=utf-8',
      };
    case 'vtt':
      return {
        body: 'WEBVTT\n\n' + normaliseTimes(t).map((s) => `${clock(s.start, '.')} --> ${clock(s.end, '.')}\n${s.text.trim()}\n`).join('\n'),
        type: 'text/vtt; charset=utf-8',
      };
    case 'verbose_json': {
      const segments = normaliseTimes(t);
      const body: Record<string, unknown> = {
        task: 'transcribe',
        language: languageName(t.language),
        duration: round(t.duration),
        text,
      };
      if (opts.granularities.has('segment')) {
        body.segments = segments.map((s, id) => ({
          id,
          seek: 0,
          start: s.start,
          end: s.end,
          text: s.text,
          tokens: s.tokens,
          temperature: opts.temperature,
          avg_logprob: Math.round(s.avgLogprob * 10000) / 10000,
          compression_ratio: compressionRatio(s.text),
          no_speech_prob: Math.round(s.noSpeechProb * 10000) / 10000,
        }));
      }
      if (opts.granularities.has('word')) body.words = segments.flatMap((s) => s.words ?? []);
      return { body, type: 'application/json' };
    }
  }
}
