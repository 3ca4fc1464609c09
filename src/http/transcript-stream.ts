// A streamed transcription (stream=true) as OpenAI sends one: server-sent
// events, `transcript.text.delta` as text is decoded, then one
// `transcript.text.done` with the whole text and usage, or an `error` event.
// The response starts with the first event, so a request refused before any
// text (queue full, no model, deadline) still gets its ordinary HTTP status.
import type { Context } from 'koa';
import type { ApiError } from './api-error';
import { stateOf } from './state';

export class TranscriptStream {
  private started = false;
  /** Whitespace at the end of what was decoded, held back until more text follows it. */
  private held = '';
  /** What the deltas have said: always a prefix of the final text. */
  private sent = '';

  constructor(private readonly ctx: Context) {}

  get hasStarted(): boolean {
    return this.started;
  }

  /**
   * A piece of decoded text (a segment's). Deltas carry the trimmed text so
   * far, so they add up to the final (trimmed) text: leading space is never
   * sent, trailing space only once more text follows it.
   */
  text(piece: string): void {
    const next = this.held + (this.sent ? piece : piece.trimStart());
    const end = next.trimEnd().length;
    this.held = next.slice(end);
    if (end > 0) this.delta(next.slice(0, end));
  }

  /** The rest of the text as a last delta (a runtime that does not stream sends it all here), then done. */
  done(text: string, usage: { type: 'duration'; seconds: number }, logprobs?: object[]): void {
    if (text.startsWith(this.sent) && text.length > this.sent.length) this.delta(text.slice(this.sent.length));
    this.event(logprobs ? { type: 'transcript.text.done', text, logprobs, usage } : { type: 'transcript.text.done', text, usage });
    this.ctx.res.end();
  }

  /** After the stream started: the error as an event in the contract's envelope, then the end. */
  fail(err: ApiError): void {
    stateOf(this.ctx).errorCode = err.code;
    this.event({ type: 'error', ...err.toBody() }, 'error');
    this.ctx.res.end();
  }

  private delta(delta: string): void {
    this.sent += delta;
    this.event({ type: 'transcript.text.delta', delta });
  }

  private event(data: object, name?: string): void {
    if (!this.started) this.start();
    if (this.ctx.res.writableEnded || this.ctx.res.destroyed) return; // the client left: its job is being aborted
    this.ctx.res.write(`${name ? `event: ${name}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
  }

  private start(): void {
    this.started = true;
    this.ctx.status = 200;
    this.ctx.set({ 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' });
    this.ctx.respond = false; // Koa must not write a body of its own after the route returns
    this.ctx.res.flushHeaders();
  }
}
