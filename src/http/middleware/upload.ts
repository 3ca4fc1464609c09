// Multipart parsing for the transcription route only. Files are collected in
// memory (bounded by STT_MAX_UPLOAD_BYTES), so no temp file ever exists; an
// oversize body is refused from its Content-Length before reading, or cut off
// as soon as the raw bytes streamed (counted before the parser) or the file
// pass the limit.
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

export function multipartUpload(maxBytes: number) {
  const parse = koaBody({
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
      fileWriteStreamHandler: (file) => {
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
      },
    },
  });

  const tooLarge = () => new ApiError(413, 'file_too_large', `The upload is larger than ${maxBytes} bytes.`, 'file');

  return async function upload(ctx: Context, next: Next): Promise<void> {
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
    await next();
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
