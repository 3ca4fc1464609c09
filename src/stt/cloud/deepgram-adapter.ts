// Deepgram: the WAV as the raw body of POST {baseUrl}/listen, `Token` auth,
// model and language as query parameters; utterances become segments and
// their words keep Deepgram's times.
import type { OutputTranscription } from '../formats';
import { ProviderError, providerFetch } from './provider-fetch';
import { mediaTypeOf, type AdapterCall } from './adapter';

interface DeepgramWord {
  word?: string;
  punctuated_word?: string;
  start?: number;
  end?: number;
  confidence?: number;
}
interface DeepgramResponse {
  metadata?: { duration?: number };
  results?: {
    channels?: { detected_language?: string; alternatives?: { transcript?: string; words?: DeepgramWord[] }[] }[];
    utterances?: { start?: number; end?: number; transcript?: string; confidence?: number; words?: DeepgramWord[] }[];
  };
}

const toWord = (w: DeepgramWord) => ({ word: String(w.punctuated_word ?? w.word ?? ''), start: Number(w.start) || 0, end: Number(w.end) || 0 });

export async function deepgramTranscribe(call: AdapterCall): Promise<OutputTranscription> {
  const { provider, apiKey, model, request } = call;
  const query = new URLSearchParams({ model, smart_format: 'true', punctuate: 'true', utterances: 'true' });
  if (request.language) query.set('language', request.language);
  else query.set('detect_language', 'true');
  const init = (): RequestInit => ({
    method: 'POST',
    body: request.wav as unknown as BodyInit,
    headers: { Authorization: `Token ${apiKey}`, 'Content-Type': mediaTypeOf(request.filename) },
  });
  const body = (await providerFetch(`${provider.baseUrl.replace(/\/+$/, '')}/listen?${query}`, init, call.fetch)) as DeepgramResponse;
  const channel = body?.results?.channels?.[0];
  const alt = channel?.alternatives?.[0];
  if (!alt || typeof alt.transcript !== 'string') {
    throw new ProviderError(provider.id, 200, 'bad_response', 'answered without results.channels[0].alternatives[0].transcript');
  }
  const duration = Number(body.metadata?.duration) || request.durationSeconds;
  const utterances = body.results?.utterances ?? [];
  const segments = utterances.length
    ? utterances.map((u) => ({
        start: Number(u.start) || 0,
        end: Number(u.end) || 0,
        text: ' ' + String(u.transcript ?? ''),
        tokens: [],
        avgLogprob: u.confidence ? Math.log(u.confidence) : 0,
        noSpeechProb: 0,
        words: (u.words ?? []).map(toWord),
      }))
    : [{ start: 0, end: duration, text: ' ' + alt.transcript, tokens: [], avgLogprob: 0, noSpeechProb: 0, words: (alt.words ?? []).map(toWord) }];
  return { text: alt.transcript, language: request.language ?? channel?.detected_language ?? '', duration, segments };
}
