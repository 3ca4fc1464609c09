// OpenAI-compatible providers (OpenAI, Groq, any compatible server):
// multipart POST {baseUrl}/audio/transcriptions (or /audio/translations) with a Bearer key.
import type { OutputTranscription } from '../formats';
import { ProviderError, providerFetch } from './provider-fetch';
import { mediaTypeOf, type AdapterCall } from './adapter';
import { chunkingFieldValue } from '../chunking';
import { readTranscriptStream } from './openai-stream';

interface VerboseResponse {
  text?: unknown;
  language?: unknown;
  duration?: unknown;
  segments?: { start?: number; end?: number; text?: string; tokens?: number[]; avg_logprob?: number; no_speech_prob?: number; seek?: number; temperature?: number }[];
  words?: { word?: string; start?: number; end?: number }[];
}


export async function openaiTranscribe(call: AdapterCall): Promise<OutputTranscription> {
  const { provider, apiKey, model, request } = call;
  // Segments and words only come with verbose_json; plain json is enough for json/text.
  const needsDetail = call.wantsSegments || request.granularities.has('word');
  const init = (stream: boolean) => (): RequestInit => {
    const form = new FormData();
    form.append('file', new Blob([request.wav as unknown as BlobPart], { type: mediaTypeOf(request.filename) }), request.filename);
    form.append('model', model);
    form.append('response_format', needsDetail ? 'verbose_json' : 'json');
    if (request.prompt) form.append('prompt', request.prompt);
    if (request.temperature !== undefined) form.append('temperature', String(request.temperature));
    // Translations take only file, model, prompt, response_format and temperature.
    if (request.task === 'transcribe') {
      if (request.language) form.append('language', request.language);
      if (request.chunkingStrategy) form.append('chunking_strategy', chunkingFieldValue(request.chunkingStrategy));
      if (needsDetail) for (const g of request.granularities) form.append('timestamp_granularities[]', g);
      if (stream) form.append('stream', 'true');
    }
    return { method: 'POST', body: form, headers: { Authorization: `Bearer ${apiKey}` } };
  };
  const url = `${provider.baseUrl.replace(/\/+$/, '')}/audio/${request.task === 'translate' ? 'translations' : 'transcriptions'}`;
  const { onText } = request;
  let body: VerboseResponse;
  if (onText && request.task === 'transcribe') {
    // OpenAI streams (and ignores the field for whisper-1); a compatible server
    // that refuses the field with a 400 is asked again without it.
    body = (await providerFetch(url, init(true), call.fetch, (res) => readTranscriptStream(res, provider.id, onText)).catch((err) => {
      if (!(err instanceof ProviderError && err.status === 400)) throw err;
      return providerFetch(url, init(false), call.fetch);
    })) as VerboseResponse;
  } else {
    body = (await providerFetch(url, init(false), call.fetch)) as VerboseResponse;
  }
  if (!body || typeof body.text !== 'string') {
    throw new ProviderError(provider.id, 200, 'bad_response', 'answered without a "text" field');
  }
  const duration = typeof body.duration === 'number' ? body.duration : request.durationSeconds;
  const segments = Array.isArray(body.segments)
    ? body.segments.map((s) => ({
        start: Number(s.start) || 0,
        end: Number(s.end) || 0,
        text: String(s.text ?? ''),
        tokens: Array.isArray(s.tokens) ? s.tokens.filter((t) => typeof t === 'number') : [],
        avgLogprob: Number(s.avg_logprob) || 0,
        noSpeechProb: Number(s.no_speech_prob) || 0,
        // Whisper's window fields, passed on when the provider reports them.
        seek: typeof s.seek === 'number' ? s.seek : undefined,
        temperature: typeof s.temperature === 'number' ? s.temperature : undefined,
      }))
    : [{ start: 0, end: duration, text: body.text, tokens: [], avgLogprob: 0, noSpeechProb: 0 }];
  if (Array.isArray(body.words) && segments.length > 0) {
    // OpenAI returns words at the top level; hang each on the segment it falls in.
    for (const w of body.words) {
      const word = { word: String(w.word ?? ''), start: Number(w.start) || 0, end: Number(w.end) || 0 };
      const seg = segments.find((s) => word.start < s.end) ?? segments[segments.length - 1];
      ((seg as { words?: typeof word[] }).words ??= []).push(word);
    }
  }
  const language = typeof body.language === 'string' ? body.language : request.language ?? '';
  return { text: body.text, language, duration, segments };
}
