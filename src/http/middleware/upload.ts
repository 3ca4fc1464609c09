// Multipart parsing for the audio routes. The transcription routes collect
// the file in memory (bounded by STT_MAX_UPLOAD_BYTES), so no temp file ever
// exists; the jobs route streams it to a file in the spool (bounded by
// STT_MAX_JOB_UPLOAD_BYTES), removed when the request ends unless the route
// took it. An oversize body is refused from its Content-Length before
// reading, or cut off as soon as the raw bytes streamed (counted before the
// parser) or the file pass the limit.
import { randomUUID } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { Context, Next } from 'koa';
import { koaBody } from 'koa-body';
import { multipart as formidableMultipart } from 'formidable';
import { ApiError, badRequest } from '../api-error';
import { limitBody } from '../byte-limit';

/** Room for multipart framing and the small text fields around the file. */
const FRAMING_ALLOWANCE = 256 * 1024;
/** The largest request body accepted for a file of `maxBytes`. */
export const maxBodyBytes = (maxBytes: number): number => maxBytes + FRAMING_ALLOWANCE;
const MAX_FIELDS_BYTES = 64 * 1024;

export interface UploadedFile {
  /** Empty for a spooled upload. */
  buffer: Buffer;
  originalFilename: string | null;
  mimetype: string | null;
  size: number;
}

/**
 * A formidable plugin, run before its multipart one: a part with a filename
 * is a file even without a Content-Type (RFC 7578 lets clients leave it out;
 * schemathesis and some HTTP libraries do), where formidable would read it as
 * a text field.
 */
function filenameMeansFile(this: unknown, form: { onPart: (part: Part) => unknown; _handlePart: (part: Part) => unknown }): void {
  form.onPart = (part) => {
    if (part.originalFilename !== null && part.originalFilename !== undefined && !part.mimetype) part.mimetype = 'application/octet-stream';
    return form._handlePart(part);
  };
}
interface Part {
  originalFilename?: string | null;
  mimetype?: string | null;
}

type FileStream = (file: unknown) => Writable;

function multipartParser(maxBytes: number, fileWriteStreamHandler: FileStream) {
  return koaBody({
    multipart: true,
    urlencoded: false,
    json: false,
    text: false,
    formidable: {
      maxFileSize: maxBytes,
      maxTotalFileSize: maxBytes,
      maxFieldsSize: MAX_FIELDS_BYTES,
      maxFields: 32,
      maxFiles: 4,
      allowEmptyFiles: true,
      minFileSize: 0,
      enabledPlugins: [filenameMeansFile as never, formidableMultipart],
      fileWriteStreamHandler: fileWriteStreamHandler as never,
    },
  });
}

/** Reads the multipart body into ctx.request.body and .files, counting its raw bytes against the limit. */
async function readMultipart(ctx: Context, parse: ReturnType<typeof koaBody>, maxBytes: number): Promise<void> {
  const tooLarge = () => new ApiError(413, 'file_too_large', `The upload is larger than ${maxBytes} bytes.`, 'file');
  if (!ctx.is('multipart/form-data')) {
    throw new ApiError(415, 'unsupported_media_type', 'Send the request as multipart/form-data.');
  }
  const declared = Number(ctx.get('Content-Length'));
  if (Number.isFinite(declared) && declared > maxBodyBytes(maxBytes)) throw tooLarge();
  // koa-body parses ctx.req: hand it a view of the context whose req is the counted body.
  const counted = limitBody(ctx.req, maxBodyBytes(maxBytes), tooLarge);
  await parse(Object.create(ctx, { req: { value: counted } }) as Context, async () => {});
  // The parser is done at the closing boundary; whatever follows is read and still counts.
  counted.resume();
  await finished(counted);
  if (!ctx.request.body || typeof ctx.request.body !== 'object') throw badRequest('invalid_multipart', 'Empty multipart body.');
}

export function multipartUpload(maxBytes: number) {
  const parse = multipartParser(maxBytes, (file) => {
    const chunks: Buffer[] = [];
    return new Writable({
      write(chunk: Buffer, _encoding, callback) {
        chunks.push(chunk);
        callback();
      },
      final(callback) {
        (file as unknown as { buffer: Buffer }).buffer = Buffer.concat(chunks);
        chunks.length = 0; // copied: hold the upload once, not twice
        callback();
      },
    });
  });
  return async function upload(ctx: Context, next: Next): Promise<void> {
    await readMultipart(ctx, parse, maxBytes);
    await next();
  };
}

/**
 * The jobs route's parser: each file part is written to `dir` as it
 * arrives (its path in the file object's `spoolPath`). Whatever the route
 * has not moved away by the time the request ends is removed, on success and
 * on every error (a cut-off upload included).
 */
export function spoolUpload(maxBytes: number, dir: string) {
  return async function spool(ctx: Context, next: Next): Promise<void> {
    const written: WriteStream[] = [];
    const parse = multipartParser(maxBytes, (file) => {
      const stream = createWriteStream(path.join(dir, `upload-${randomUUID()}`), { mode: 0o600 });
      written.push(stream);
      (file as { spoolPath?: string }).spoolPath = String(stream.path);
      return stream;
    });
    try {
      await readMultipart(ctx, parse, maxBytes);
      await next();
    } finally {
      // A stream cut off mid-upload may not have opened its file yet: closed first, so the file exists to be removed.
      await Promise.all(written.map(async (stream) => {
        if (!stream.closed) await new Promise<void>((resolve) => stream.destroy().once('close', () => resolve()));
        await rm(String(stream.path), { force: true });
      }));
    }
  };
}

/**
 * Lets go of the uploaded bytes (once decoded, only the PCM is needed): the
 * parser's file objects would otherwise keep them until the request ends.
 */
export function releaseUpload(ctx: Context, file: UploadedFile): void {
  file.buffer = Buffer.alloc(0);
  for (const f of Object.values(ctx.request.files ?? {}).flat()) (f as unknown as { buffer?: Buffer }).buffer = undefined;
}
