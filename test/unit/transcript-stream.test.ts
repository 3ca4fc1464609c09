// The server-sent events of a streamed transcription, without HTTP: deltas
// that add up to the final text exactly, the start on the first event, an
// error as the last event.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Context } from 'koa';
import { TranscriptStream } from '../../src/http/transcript-stream';
import { ApiError } from '../../src/http/api-error';

function fakeContext() {
  const writes: string[] = [];
  const ctx = {
    state: {} as Record<string, unknown>, status: 404, respond: true, headers: {} as Record<string, string>,
    set(h: Record<string, string>) { Object.assign(this.headers, h); },
    res: { write: (x: string) => void writes.push(x), end() { this.writableEnded = true; }, flushHeaders() {}, writableEnded: false, destroyed: false },
  };
  const events = () => writes.map((w) => {
    const [first, second] = w.trim().split('\n');
    return { event: second ? first.replace('event: ', '') : null, data: JSON.parse((second ?? first).replace(/^data: /, '')) };
  });
  return { ctx, events, writes };
}

test('deltas carry the trimmed text so far: no leading space, trailing space only once text follows it', () => {
  const { ctx, events } = fakeContext();
  const stream = new TranscriptStream(ctx as unknown as Context);
  assert.equal(stream.hasStarted, false);
  for (const piece of ['  ', ' And so', ' my fellow ', '', '  ', ' Americans.', '  ']) stream.text(piece);
  assert.equal(stream.hasStarted, true);
  assert.deepEqual([ctx.status, ctx.respond, ctx.headers['Content-Type']], [200, false, 'text/event-stream; charset=utf-8']);
  stream.done('And so my fellow    Americans.', { type: 'duration', seconds: 3 });
  const deltas = events().filter((e) => e.data.type === 'transcript.text.delta').map((e) => e.data.delta);
  assert.deepEqual(deltas, ['And so', ' my fellow', '    Americans.']);
  assert.deepEqual(events().at(-1)!.data, { type: 'transcript.text.done', text: 'And so my fellow    Americans.', usage: { type: 'duration', seconds: 3 } });
  assert.equal(ctx.res.writableEnded, true);
});

test('a runtime that does not stream: one delta with the whole text at done; a final text that differs is sent as it is', () => {
  const whole = fakeContext();
  new TranscriptStream(whole.ctx as unknown as Context).done('cloud text', { type: 'duration', seconds: 1 });
  assert.deepEqual(whole.events().map((e) => e.data.type), ['transcript.text.delta', 'transcript.text.done']);
  const differs = fakeContext();
  const stream = new TranscriptStream(differs.ctx as unknown as Context);
  stream.text('draft');
  stream.done('final', { type: 'duration', seconds: 1 });
  assert.deepEqual(differs.events().map((e) => e.data.delta ?? e.data.text), ['draft', 'final']);
});

test('after the start, an error is the last event, named error, in the contract\'s envelope', () => {
  const { ctx, events } = fakeContext();
  const stream = new TranscriptStream(ctx as unknown as Context);
  stream.text('partial');
  stream.fail(new ApiError(504, 'deadline_exceeded', 'Too slow.'));
  const last = events().at(-1)!;
  assert.equal(last.event, 'error');
  assert.deepEqual(last.data, { type: 'error', error: { message: 'Too slow.', type: 'server_error', param: null, code: 'deadline_exceeded' } });
  assert.equal(ctx.state.errorCode, 'deadline_exceeded');
});
