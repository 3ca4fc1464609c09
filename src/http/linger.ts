// Discards the rest of a request body after an early answer, then closes.
//
// An error answered before the body has arrived (413 from Content-Length or
// mid-stream, 401 on an upload, ...) is written with `Connection: close`, and
// Node closes the socket as soon as the answer is written. Closing a socket
// with unread data makes the kernel send a reset, and the client's kernel
// then drops the answer it had received but not yet read: Node's fetch with a
// Blob body gets EPIPE / "fetch failed", clients that send the whole body
// before reading get "connection reset". So the rest of the body is read and
// thrown away first, bounded in bytes and time, and the socket is closed
// when the body has ended ("lingering close", RFC 9112 §9.6).
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface LingerLimits {
  /** Body bytes discarded at most after the answer; past them the socket is closed anyway. */
  bytes: number;
  /** How long the rest of the body may take. */
  ms: number;
}

/**
 * A client that sends up to twice the largest accepted body before it reads
 * (Node's fetch with a Blob, Python clients) sees its answer; a slower or
 * longer body is cut off.
 */
export const lingerLimits = (maxBodyBytes: number): LingerLimits => ({ bytes: 2 * maxBodyBytes, ms: 30_000 });

export function closeAfterDiscardingBody(req: IncomingMessage, res: ServerResponse, limits: LingerLimits): void {
  const socket = req.socket;
  if (req.complete || socket.destroyed) return;
  res.setHeader('Connection', 'close');
  const close = () => socket.destroy();
  const timer = setTimeout(close, limits.ms).unref();
  socket.once('close', () => clearTimeout(timer));
  let left = limits.bytes;
  req.on('data', (chunk: Buffer) => {
    left -= chunk.length;
    if (left < 0) close();
  });
  req.resume();
  // Node calls destroySoon() once the answer is written: end our side there,
  // and close the socket only when the client has sent the rest.
  socket.destroySoon = () => {
    socket.end();
    if (req.complete) close();
    else req.once('end', close);
  };
}
