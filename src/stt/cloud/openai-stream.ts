// OpenAI's streamed transcription (stream=true on /audio/transcriptions):
// server-sent events, `transcript.text.delta` pieces and one
// `transcript.text.done`. Providers that do not stream (whisper-1, Groq, most
// compatible servers) ignore the field and answer JSON, which is read as usual.
import { createParser } from 'eventsource-parser';
import { answerTooLarge, MAX_ANSWER_BYTES, ProviderError, readJson } from './provider-fetch';

/** The answer as the JSON path would have it ({text}), the deltas handed to `onText` on the way. */
export async function readTranscriptStream(res: Response, providerId: string, onText: (text: string) => void): Promise<unknown> {
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) return readJson(res, providerId);
  let text: string | null = null;
  let failure: ProviderError | null = null;
  const parser = createParser({
    onEvent(event) {
      let data: { type?: unknown; delta?: unknown; text?: unknown; error?: unknown };
      try {
        data = JSON.parse(event.data);
      } catch {
        return; // a terminator such as [DONE], or a comment-like line
      }
      if (event.event === 'error' || data.error !== undefined) {
        failure ??= new ProviderError(providerId, res.status, 'bad_response', 'reported an error in its event stream');
      } else if (data.type === 'transcript.text.delta' && typeof data.delta === 'string') {
        if (text === null) onText(data.delta);
      } else if (data.type === 'transcript.text.done' && typeof data.text === 'string') {
        text = data.text;
      }
    },
  });
  const decoder = new TextDecoder();
  const reader = res.body!.getReader();
  let received = 0;
  // Until the final text or an error: a provider that keeps the connection open after it is not waited for.
  while (text === null && !failure) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
    if (received > MAX_ANSWER_BYTES) failure = answerTooLarge(providerId, res.status);
    else parser.feed(decoder.decode(value, { stream: true }));
  }
  await reader.cancel().catch(() => {});
  if (failure) throw failure;
  if (text === null) throw new ProviderError(providerId, res.status, 'bad_response', 'ended its event stream without the final text');
  return { text };
}
