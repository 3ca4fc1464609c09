// JSON body validation: which 4xx each bad body gets, the field it names, and
// that a good body reaches the handler parsed. A bare Koa app on loopback with
// the contract's error handler in front, as the admin routes have it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { z } from 'zod';
import { jsonBody, parseWith } from '../../src/http/validate';
import { ApiError } from '../../src/http/api-error';
import { errorHandler } from '../../src/http/middleware/error-envelope';
import { createLogger } from '../../src/log';

const schema = z.strictObject({ name: z.string().min(1), limits: z.strictObject({ rpm: z.number().int() }).optional() });
let server: http.Server;
let url: string;

before(async () => {
  const app = new Koa();
  app.use(errorHandler(createLogger('silent'), { bytes: 1 << 20, ms: 1000 }));
  app.use(jsonBody(schema));
  app.use((ctx) => (ctx.body = { got: ctx.state.body }));
  server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

function invalid(value: unknown, code: string, param: string | null, message: RegExp) {
  assert.throws(() => parseWith(schema, value), (e: unknown) => {
    assert.ok(e instanceof ApiError, String(e));
    assert.deepEqual({ status: e.status, code: e.code, param: e.param }, { status: 400, code, param });
    assert.match(e.message, message);
    return true;
  });
}

test('parseWith returns the parsed value, or the first problem as a 400 naming its field', () => {
  assert.deepEqual(parseWith(schema, { name: 'a', limits: { rpm: 3 } }), { name: 'a', limits: { rpm: 3 } });
  invalid({ name: 'a', colour: 1 }, 'unknown_parameter', 'colour', /^Unknown field "colour"\.$/);
  invalid({ name: 'a', limits: { rpm: 1, burst: 2 } }, 'unknown_parameter', 'limits.burst', /^Unknown field "limits\.burst"\.$/);
  invalid({ name: '' }, 'invalid_value', 'name', /^Invalid "name": /);
  invalid({ name: 'a', limits: { rpm: 1.5 } }, 'invalid_value', 'limits.rpm', /^Invalid "limits\.rpm": /);
  invalid({}, 'invalid_value', 'name', /^Invalid "name": /);
  invalid('text', 'invalid_value', null, /^Invalid body: /);
});

async function send(body: string | undefined, headers: Record<string, string> = {}) {
  const res = await fetch(url, { method: 'PUT', body, headers });
  return { status: res.status, body: await res.json() };
}
const json = { 'Content-Type': 'application/json' };

test('jsonBody: a good body reaches the handler parsed; an empty body counts as {}', async () => {
  assert.deepEqual(await send(JSON.stringify({ name: 'x' }), json), { status: 200, body: { got: { name: 'x' } } });
  const empty = await send(undefined);
  assert.equal(empty.status, 400, 'an empty body is validated as {}: "name" is required');
  assert.equal(empty.body.error.param, 'name');
});

test('jsonBody: a chunked body (no Content-Length) is parsed too', async () => {
  const { status, body } = await new Promise<{ status: number; body: unknown }>((resolve, reject) => {
    const req = http.request(url, { method: 'PUT', headers: json }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d)).on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    assert.equal(req.getHeader('Content-Length'), undefined);
    req.write('{"name":');
    req.end('"x"}');
  });
  assert.deepEqual({ status, body }, { status: 200, body: { got: { name: 'x' } } });
});

test('jsonBody: 415 for a body that is not JSON, 400 invalid_json, 413 past 64 KiB, 400 for what the schema refuses', async () => {
  const codeOf = async (body: string, headers: Record<string, string>) => {
    const r = await send(body, headers);
    return [r.status, r.body.error.code];
  };
  const errorOf = async (body: string, headers: Record<string, string>) => {
    const r = await send(body, headers);
    return [r.status, r.body.error.code, r.body.error.message];
  };
  assert.deepEqual(await errorOf('name=x', { 'Content-Type': 'application/x-www-form-urlencoded' }),
    [415, 'unsupported_media_type', 'Send a JSON body (Content-Type: application/json).']);
  assert.deepEqual(await errorOf('{"name":', json), [400, 'invalid_json', 'The body is not valid JSON.']);
  assert.deepEqual(await codeOf('"just a string"', json), [400, 'invalid_json'], 'strict JSON: objects and arrays only');
  assert.deepEqual(await errorOf(JSON.stringify({ name: 'x'.repeat(70 * 1024) }), json), [413, 'body_too_large', 'The JSON body is too large.']);
  assert.deepEqual(await codeOf(JSON.stringify({ name: 'x', extra: true }), json), [400, 'unknown_parameter']);
});
