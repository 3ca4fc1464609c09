// Real HTTP servers on 127.0.0.1 that speak each provider's wire format and
// check the requests they get, plus a model file server with Range support.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { readFileSync } from 'node:fs';

/** 'hang' never answers: the request waits until its client closes the connection. */
export type Behaviour = 'ok' | 'unauthorized' | 'bad_request' | 'server_error' | 'slow' | 'malformed' | 'hang';

/**
 * A provider's published example response (test/fixtures/providers/README.md
 * names each source), parsed afresh so a caller may change it.
 */
export const publishedExample = (name: string): any =>
  JSON.parse(readFileSync(`${__dirname}/../fixtures/providers/${name}`, 'utf8'));

export interface Recorded {
  path: string;
  query: Record<string, string>;
  auth: string | undefined;
  contentType: string | undefined;
  fields: Record<string, unknown>;
  fileBytes: number;
  fileStartsWithRiff: boolean;
}

export interface FakeServer {
  url: string;
  requests: Recorded[];
  behaviour: Behaviour;
  /** The next this-many requests get a 503, whatever the behaviour. */
  failNext: number;
  /** When set, a request that passes the fake's checks is answered 200 with this JSON body as it is. */
  reply: unknown;
  /** Requests left unanswered because their client closed the connection ('hang'). */
  abandoned: number;
  close(): Promise<void>;
}

async function listen(handler: http.RequestListener): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const closeServer = (server: http.Server) =>
  new Promise<void>((r) => {
    server.closeAllConnections();
    server.close(() => r());
  });

/** Shared behaviour switch: returns true when the handler already answered. */
async function misbehave(ctx: Koa.Context, fake: FakeServer): Promise<boolean> {
  if (fake.failNext > 0) {
    fake.failNext--;
    ctx.status = 503;
    ctx.body = 'busy';
    return true;
  }
  switch (fake.behaviour) {
    case 'unauthorized': ctx.status = 401; ctx.body = { error: { message: 'bad key' } }; return true;
    case 'bad_request': ctx.status = 400; ctx.body = { error: { message: 'nope' } }; return true;
    case 'server_error': ctx.status = 500; ctx.body = { error: { message: 'boom' } }; return true;
    case 'slow': await new Promise((r) => setTimeout(r, 3000)); return false;
    case 'malformed': ctx.status = 200; ctx.type = 'application/json'; ctx.body = '{"text": "unterminated'; return true;
    case 'hang':
      if (!ctx.res.destroyed) await new Promise((r) => ctx.res.once('close', r));
      fake.abandoned++;
      return true;
    default: return false;
  }
}

/** An OpenAI-compatible /audio/transcriptions. */
export async function startOpenAiLike(expectedKey: string): Promise<FakeServer> {
  const app = new Koa();
  const fake: FakeServer = { url: '', requests: [], behaviour: 'ok', failNext: 0, reply: undefined, abandoned: 0, close: async () => {} };
  // The gateway aborts its upload here when its own client leaves: expected, not worth a stack trace.
  app.silent = true;
  app.use(koaBody({ multipart: true }));
  app.use(async (ctx) => {
    const files = (ctx.request.files ?? {}) as Record<string, { filepath: string; size: number }>;
    const file = files.file;
    const bytes = file ? readFileSync(file.filepath) : Buffer.alloc(0);
    fake.requests.push({
      path: ctx.path, query: ctx.query as Record<string, string>, auth: ctx.get('Authorization'), contentType: ctx.get('Content-Type'),
      fields: ctx.request.body as Record<string, unknown>, fileBytes: bytes.length, fileStartsWithRiff: bytes.subarray(0, 4).toString() === 'RIFF',
    });
    if (await misbehave(ctx, fake)) return;
    if (ctx.method !== 'POST' || ctx.path !== '/v1/audio/transcriptions') { ctx.status = 404; return; }
    if (ctx.get('Authorization') !== `Bearer ${expectedKey}`) { ctx.status = 401; ctx.body = { error: { message: 'Incorrect API key' } }; return; }
    const fields = ctx.request.body as Record<string, string>;
    if (!file || !fields.model) { ctx.status = 400; ctx.body = { error: { message: 'file and model are required' } }; return; }
    if (fake.reply !== undefined) { ctx.body = fake.reply; return; }
    // OpenAI's published examples with this fake's own text and times: the
    // shape stays the provider's (test/http/providers.test.ts checks it).
    const text = `cloud transcript from ${fields.model}`;
    if (fields.response_format === 'verbose_json') {
      const granularities = [fields['timestamp_granularities[]'] ?? []].flat();
      const { segments: [segment], ...body } = publishedExample('openai-verbose-segments.json');
      const { words: [word] } = publishedExample('openai-verbose-words.json');
      Object.assign(body, { duration: 11, text });
      // As OpenAI does: segments unless only words were asked for, words only when asked for.
      if (!granularities.length || granularities.includes('segment')) {
        body.segments = [{ ...segment, id: 0, start: 0, end: 4, text: ' cloud transcript', tokens: [1, 2], avg_logprob: -0.1 },
          { ...segment, id: 1, start: 4, end: 11, text: ` from ${fields.model}`, tokens: [3], avg_logprob: -0.2 }];
      }
      if (granularities.includes('word')) {
        body.words = [['cloud', 0, 2], ['transcript', 2, 4], ['from', 4, 6]].map(([w, start, end]) => ({ ...word, word: w, start, end }));
      }
      ctx.body = body;
    } else ctx.body = { ...publishedExample('openai-json.json'), text };
  });
  const { server, url } = await listen(app.callback());
  fake.url = `${url}/v1`;
  fake.close = () => closeServer(server);
  return fake;
}

/** Deepgram's /v1/listen: raw body, Token auth, query parameters. */
export async function startDeepgramLike(expectedKey: string): Promise<FakeServer> {
  const app = new Koa();
  const fake: FakeServer = { url: '', requests: [], behaviour: 'ok', failNext: 0, reply: undefined, abandoned: 0, close: async () => {} };
  app.use(async (ctx) => {
    const chunks: Buffer[] = [];
    for await (const c of ctx.req) chunks.push(c as Buffer);
    const bytes = Buffer.concat(chunks);
    fake.requests.push({
      path: ctx.path, query: ctx.query as Record<string, string>, auth: ctx.get('Authorization'), contentType: ctx.get('Content-Type'),
      fields: {}, fileBytes: bytes.length, fileStartsWithRiff: bytes.subarray(0, 4).toString() === 'RIFF',
    });
    if (await misbehave(ctx, fake)) return;
    if (ctx.method !== 'POST' || ctx.path !== '/v1/listen') { ctx.status = 404; return; }
    if (ctx.get('Authorization') !== `Token ${expectedKey}`) { ctx.status = 401; ctx.body = { err_code: 'INVALID_AUTH' }; return; }
    if (!ctx.query.model || !bytes.length) { ctx.status = 400; ctx.body = { err_code: 'Bad Request' }; return; }
    if (fake.reply !== undefined) { ctx.body = fake.reply; return; }
    // Deepgram's published example with this fake's transcript, words and
    // times in the fields the adapter reads; every key stays Deepgram's.
    const body = publishedExample('deepgram-listen.json');
    const words = [
      { word: 'hello', punctuated_word: 'Hello', start: 0.5, end: 0.9, confidence: 0.99 },
      { word: 'deepgram', punctuated_word: 'Deepgram.', start: 1.0, end: 1.6, confidence: 0.97 },
    ];
    const alternative = body.results.channels[0].alternatives[0];
    const utterance = body.results.utterances[0];
    body.metadata.duration = 11;
    Object.assign(alternative, {
      transcript: 'Hello Deepgram.', confidence: 0.98,
      words: words.map(({ word, start, end, confidence }) => ({ ...alternative.words[0], word, start, end, confidence })),
    });
    Object.assign(utterance, {
      start: 0.5, end: 1.6, confidence: 0.98, channel: 0, transcript: 'Hello Deepgram.',
      words: words.map((w) => ({ ...utterance.words[0], ...w })),
    });
    ctx.body = body;
  });
  const { server, url } = await listen(app.callback());
  fake.url = `${url}/v1`;
  fake.close = () => closeServer(server);
  return fake;
}

/** A URL on which nothing listens. */
export async function refusedUrl(): Promise<string> {
  const { server, url } = await listen(() => {});
  await closeServer(server);
  return `${url}/v1`;
}

export interface ModelServer {
  url: string;
  /** Bytes served for each path. */
  files: Map<string, Buffer>;
  /** When set, the next response stops after this many bytes and drops the connection. */
  cutAfterBytes: number | null;
  /** Bytes per write and a pause between writes, so progress can be watched. */
  throttle: { chunk: number; delayMs: number } | null;
  rangeRequests: string[];
  /** Answer every request with 200 and the whole file, Range or not (allowed by RFC 9110). */
  ignoreRange: boolean;
  /** Path → Location: answered with a 302 instead of the file. */
  redirects: Map<string, string>;
  /** Byte offsets of the file at which responses stop sending until release() is called: a download held still for a test. */
  holdAt: number[];
  /** Lets the next hold (reached or still to come) go on. */
  release(): void;
  close(): Promise<void>;
}

export async function startModelServer(): Promise<ModelServer> {
  let released = 0;
  let holdsReached = 0;
  let wake = () => {};
  const ms: ModelServer = {
    url: '', files: new Map(), cutAfterBytes: null, throttle: null, rangeRequests: [], ignoreRange: false, redirects: new Map(), holdAt: [],
    release: () => {
      released++;
      wake();
    },
    close: async () => {},
  };
  const { server, url } = await listen(async (req, res) => {
    const name = decodeURIComponent(new URL(req.url!, 'http://x').pathname.slice(1));
    const location = ms.redirects.get(name);
    if (location) { res.writeHead(302, { Location: location }).end(); return; }
    const body = ms.files.get(name);
    if (!body) { res.writeHead(404).end(); return; }
    let start = 0;
    const range = req.headers.range;
    if (range) ms.rangeRequests.push(range);
    if (range && !ms.ignoreRange) {
      start = Number(/bytes=(\d+)-/.exec(range)?.[1] ?? 0);
      if (start >= body.length) { res.writeHead(416).end(); return; }
      res.writeHead(206, { 'Content-Length': body.length - start, 'Content-Range': `bytes ${start}-${body.length - 1}/${body.length}` });
    } else res.writeHead(200, { 'Content-Length': body.length });
    const cut = ms.cutAfterBytes;
    ms.cutAfterBytes = null;
    const step = ms.throttle?.chunk ?? 1 << 20;
    const holds = ms.holdAt.filter((h) => h > start && h < body.length).sort((a, b) => a - b);
    for (let at = start; at < body.length;) {
      const end = Math.min(at + step, holds[0] ?? Infinity, body.length);
      if (cut !== null && end - start > cut) {
        res.write(body.subarray(at, start + cut));
        await new Promise((r) => setTimeout(r, 50));
        res.destroy();
        return;
      }
      if (!res.write(body.subarray(at, end))) await new Promise((r) => res.once('drain', r));
      if (ms.throttle) await new Promise((r) => setTimeout(r, ms.throttle!.delayMs));
      if (end === holds[0]) {
        holds.shift();
        const mine = holdsReached++;
        while (released <= mine && !res.destroyed) await new Promise<void>((r) => (wake = r));
      }
      at = end;
    }
    res.end();
  });
  ms.url = url;
  ms.close = () => closeServer(server);
  return ms;
}
