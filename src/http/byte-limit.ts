// The request body as a stream that fails once more than `limit` bytes have
// arrived. Counting raw bytes before any parser bounds what the multipart
// parser never bounds itself: a body without Content-Length, a part's header
// (a 600 MB filename), a preamble or an epilogue.
import type { IncomingMessage } from 'node:http';
import { Transform } from 'node:stream';
import { AbortedError } from '../domain-errors';

export type LimitedBody = Transform & { headers: IncomingMessage['headers'] };

export function limitBody(req: IncomingMessage, limit: number, tooLarge: () => Error): LimitedBody {
  let seen = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > limit) callback(tooLarge());
      else callback(null, chunk);
    },
  });
  // The parser listens for errors once it starts; until then one must not crash the process.
  counted.on('error', () => {});
  // On that failure pipe() only unpipes the request, never destroys it: the
  // socket stays open for the 413 and for discarding the rest of the body.
  req.pipe(counted);
  // pipe() does not pass on a client leaving mid-upload; the parser would wait forever.
  req.once('close', () => {
    if (!req.complete) counted.destroy(new AbortedError());
  });
  // The multipart parser reads the headers (boundary, length) from the stream it parses.
  return Object.assign(counted, { headers: req.headers });
}
