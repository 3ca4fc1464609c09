// npm run soak [-- --minutes N] (default 10): a bounded mixed load on loopback
// against the real server in its own process, and what a host needs to know
// after it: every request answered (or abandoned by its own client), auth
// latency under upload load, and memory that returns to its level.
//
// Load: six client loops sending short (5 s) and long (60 s) clips, clients
// that leave mid-upload and mid-job, oversize and malformed uploads, revoked
// keys; a probe that lists models every 500 ms (auth + SQLite); an admin loop
// that switches routing between the local model and a loopback
// OpenAI-compatible provider and creates and revokes keys; in the middle a
// SIGTERM and a restart on the same data dir. Writes
// benchmarks/results/soak-<date>-<N>min.{json,md}.
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, speechClip, startOpenAiLike } from '../fixtures';
import { benchModel } from './lib/models';
import { procRss } from './lib/servers';
import { fmt, percentile } from './lib/stats';
import { provenance, commitState } from './lib/provenance';
import { saveReport, today } from './lib/results';
const minutesArg = process.argv.indexOf('--minutes');
const MINUTES = minutesArg >= 0 ? Number(process.argv[minutesArg + 1]) : 10;
if (!(MINUTES > 0 && MINUTES <= 120)) throw new Error('--minutes must be in (0, 120]');
const DURATION_MS = MINUTES * 60_000;
const CLIENTS = 6;
const ADMIN_KEY = 'soak-admin-key-0123456789abcdef';
const MAX_UPLOAD = 26_214_400;
const WARM_UP_MS = 180_000;

type Outcome = 'answered' | 'abandoned' | 'lost';
interface Sent { kind: string; status: number | null; outcome: Outcome; ms: number; detail?: string }

const sent: Sent[] = [];
const authMs: number[] = [];
const rss: { t: number; bytes: number; process: number }[] = [];
let server: ChildProcess | null = null;
let serverIndex = 0;
/** Set while the server restarts: clients hold back, so a refused connection then is not a lost request. */
let restarting: Promise<void> | null = null;
let apiKey = '';
let apiKeyId = '';
const revokedKeys: string[] = [];

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'stt-soak-'));
const port = 21000 + Math.floor(Math.random() * 20000);
const base = `http://127.0.0.1:${port}`;

function env(): NodeJS.ProcessEnv {
  return {
    ...process.env, PORT: String(port), HOST: '127.0.0.1', STT_DATA_DIR: dataDir, STT_ADMIN_KEY: ADMIN_KEY,
    STT_ALLOW_INSECURE_LOOPBACK: 'true', STT_DEFAULT_MODEL: 'none', LOG_LEVEL: 'warn', STT_SHUTDOWN_TIMEOUT_MS: '10000',
  };
}

async function startServer(): Promise<void> {
  const child = spawn(process.execPath, [path.join(ROOT, 'dist/src/server.js')], { env: env(), stdio: ['ignore', 'ignore', 'inherit'] });
  server = child;
  serverIndex++;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}) while starting`);
    if (i > 600) throw new Error('server did not answer /health within 60 s');
    try {
      if ((await fetch(`${base}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  await localReady();
}

/** Until the stored local model has loaded (a first start has none yet). */
async function localReady(): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const status = await admin('GET', '/admin/status');
    if (status.local.state === 'ready' || status.local.state === 'none') return;
    await sleep(100);
  }
}

async function restart(): Promise<void> {
  const child = server!;
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill('SIGTERM');
  const code = await exited;
  log(`server ${serverIndex} exited with ${code} after SIGTERM`);
  await startServer();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const started = Date.now();
const log = (m: string) => process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(0)}s] ${m}\n`);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function admin(method: string, url: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}${url}`, {
    method, headers: { Authorization: `Bearer ${ADMIN_KEY}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}: HTTP ${res.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : null;
}

function form(wav: Buffer): FormData {
  const f = new FormData();
  f.append('file', new Blob([wav as unknown as BlobPart], { type: 'audio/wav' }), 'clip.wav');
  return f;
}

/** One request through fetch; `abortAfterMs` makes its client leave (mid-job). */
async function send(kind: string, body: FormData | Blob, key: string, abortAfterMs?: number): Promise<void> {
  await restarting;
  const controller = new AbortController();
  const timer = abortAfterMs !== undefined ? setTimeout(() => controller.abort(), abortAfterMs) : null;
  const t = performance.now();
  try {
    const res = await fetch(`${base}/v1/audio/transcriptions`, { method: 'POST', body, headers: { Authorization: `Bearer ${key}` }, signal: controller.signal });
    const answer = await res.text();
    // The error code says which refusal it was (queue_full, shutting_down, ...): kept for the report.
    const code = res.status >= 500 ? (/"code":"([a-z_]+)"/.exec(answer)?.[1] ?? '') : '';
    sent.push({ kind, status: res.status, outcome: 'answered', ms: performance.now() - t, detail: code || undefined });
  } catch (err) {
    const outcome: Outcome = controller.signal.aborted ? 'abandoned' : 'lost';
    sent.push({ kind, status: null, outcome, ms: performance.now() - t, detail: outcome === 'lost' ? String((err as Error & { cause?: Error }).cause?.message ?? err) : undefined });
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/** A client that sends the headers and half a WAV, then closes its socket. */
async function leaveMidUpload(wav: Buffer): Promise<void> {
  await restarting;
  const boundary = 'soakboundary';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`);
  const total = head.length + wav.length + `\r\n--${boundary}--\r\n`.length;
  await new Promise<void>((resolve) => {
    const req = http.request(`${base}/v1/audio/transcriptions`, {
      method: 'POST', headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': total },
    });
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.write(head);
    req.write(wav.subarray(0, wav.length >> 1), () => setTimeout(() => req.destroy(), 50));
  });
  sent.push({ kind: 'leave mid-upload', status: null, outcome: 'abandoned', ms: 0 });
}

const clips = { short: speechClip(5), long: speechClip(60) };
const notWav = Buffer.from('this is not a wav file at all, just text pretending'.repeat(20));
const truncated = clips.short.subarray(0, 30);
const absurd = Buffer.from(clips.short); // a header that claims 4 GB of data
absurd.writeUInt32LE(0xfffffff0, 40);
const oversize = Buffer.alloc(MAX_UPLOAD + 1024 * 1024, 1);

/** What one client iteration sends, drawn by weight. */
const ACTIONS: [number, () => Promise<void>][] = [
  [40, () => send('short', form(clips.short), apiKey)],
  [8, () => send('long', form(clips.long), apiKey)],
  [10, () => leaveMidUpload(clips.long)],
  [10, () => send('leave mid-job', form(clips.long), apiKey, 300)],
  [4, () => send('oversize', form(oversize), apiKey)],
  [4, () => send('not WAV', form(notWav), apiKey)],
  [4, () => send('truncated WAV', form(truncated), apiKey)],
  [4, () => send('absurd WAV header', form(absurd), apiKey)],
  [4, () => send('revoked key', form(clips.short), revokedKeys[0] ?? 'sk-not-a-key')],
  [4, () => send('no file', new Blob(['x']), apiKey)],
];
const totalWeight = ACTIONS.reduce((n, [w]) => n + w, 0);

async function client(until: number): Promise<void> {
  while (Date.now() < until) {
    let pick = Math.random() * totalWeight;
    const action = ACTIONS.find(([w]) => (pick -= w) < 0)![1];
    await action();
  }
}

async function authProbe(until: number): Promise<void> {
  while (Date.now() < until) {
    await restarting;
    const t = performance.now();
    try {
      const res = await fetch(`${base}/v1/models`, { headers: { Authorization: `Bearer ${apiKey}` } });
      await res.arrayBuffer();
      if (res.ok) authMs.push(performance.now() - t);
      else sent.push({ kind: 'models probe', status: res.status, outcome: 'answered', ms: performance.now() - t });
    } catch (err) {
      sent.push({ kind: 'models probe', status: null, outcome: 'lost', ms: performance.now() - t, detail: String(err) });
    }
    await sleep(500);
  }
}

async function adminLoop(until: number, providerUrl: string, runtimeId: string): Promise<void> {
  let cloud = false;
  while (Date.now() < until) {
    await sleep(20_000);
    await restarting;
    if (Date.now() >= until) break;
    try {
      cloud = !cloud;
      await admin('PUT', '/admin/routing', cloud ? { mode: 'cloud', cloud: { providerId: 'openai', model: 'whisper-1' } } : { mode: 'local', localModel: runtimeId });
      const created = await admin('POST', '/admin/api-keys', { name: `soak-${Date.now()}` });
      const [previous, previousId] = [apiKey, apiKeyId];
      [apiKey, apiKeyId] = [created.key, created.id];
      await admin('POST', `/admin/api-keys/${previousId}/revoke`);
      revokedKeys.unshift(previous);
      log(`admin: routing ${cloud ? 'cloud' : 'local'}, key rotated`);
    } catch (err) {
      log(`admin change failed: ${(err as Error).message}`);
      sent.push({ kind: 'admin', status: null, outcome: 'lost', ms: 0, detail: (err as Error).message });
    }
  }
}

async function main(): Promise<void> {
  const source = provenance();
  const { file, weights } = await benchModel('base-q8_0-ctx64');
  mkdirSync(path.join(dataDir, 'models'));
  symlinkSync(file, path.join(dataDir, 'models', 'ggml-base.bin'));
  const provider = await startOpenAiLike('sk-soak-provider');
  await startServer();
  await admin('PUT', '/admin/providers/openai', { baseUrl: provider.url, apiKey: 'sk-soak-provider', enabled: true });
  await admin('PUT', '/admin/routing', { mode: 'local', localModel: 'whisper-base' });
  await localReady();
  const first = await admin('POST', '/admin/api-keys', { name: 'soak' });
  [apiKey, apiKeyId] = [first.key, first.id];
  log(`soak: ${MINUTES} min against ${base} (${weights} base q8_0 weights), data in ${dataDir}`);

  const sampler = setInterval(() => server?.pid && rss.push({ t: Date.now() - started, bytes: procRss(server.pid), process: serverIndex }), 1000);
  const until = Date.now() + DURATION_MS;
  const restartAt = setTimeout(() => {
    log('SIGTERM + restart');
    restarting = restart().finally(() => (restarting = null));
  }, DURATION_MS / 2);
  await Promise.all([
    ...Array.from({ length: CLIENTS }, () => client(until)),
    authProbe(until),
    adminLoop(until, provider.url, 'whisper-base'),
  ]);
  clearTimeout(restartAt);
  await restarting;
  await sleep(5000); // idle: what the process keeps once the load is gone
  clearInterval(sampler);
  rss.push({ t: Date.now() - started, bytes: procRss(server!.pid!), process: serverIndex });
  server!.kill('SIGTERM');
  await provider.close();

  const report = summarize(source);
  const byKind: Record<string, Record<string, number>> = {};
  for (const s of sent) {
    const key = s.outcome === 'answered' ? `${s.status}${s.detail ? ` ${s.detail}` : ''}` : s.outcome;
    (byKind[s.kind] ??= {})[key] = (byKind[s.kind][key] ?? 0) + 1;
  }
  saveReport(`soak-${today()}-${MINUTES}min`, report.md, { source, sent: sent.length, byKind, authMs, rss, lost: sent.filter((s) => s.outcome === 'lost') });
  if (!report.ok) process.exitCode = 1;
}

function summarize(source: ReturnType<typeof provenance>): { md: string; ok: boolean } {
  const byKind = new Map<string, Map<string, number>>();
  for (const s of sent) {
    const row = byKind.get(s.kind) ?? new Map<string, number>();
    byKind.set(s.kind, row);
    const key = s.outcome === 'answered' ? `${s.status}${s.detail ? ` ${s.detail}` : ''}` : s.outcome;
    row.set(key, (row.get(key) ?? 0) + 1);
  }
  const lost = sent.filter((s) => s.outcome === 'lost');
  // Per process: the level after its warm-up against where it ends. Three
  // minutes: the first 30-min run showed RSS still rising at 1 min (the first
  // long job paused for a short one creates a second whisper state) and flat
  // from 2 min on (466-478 MB).
  const last = rss.filter((r) => r.process === serverIndex);
  const warm = last.find((r) => r.t >= last[0].t + WARM_UP_MS) ?? last[0];
  const end = last[last.length - 1];
  const peak = Math.max(...rss.map((r) => r.bytes));
  const endRatio = end.bytes / warm.bytes;
  const ok = lost.length === 0 && endRatio <= 1.1;
  const mb = (b: number) => fmt(b / 1e6, 0);
  const lines = [
    `# Soak, ${today()}: ${MINUTES} minutes`, '',
    `Commit ${commitState(source)}; ${source.cpu}, ${source.cores} cores; \`npm run soak -- --minutes ${MINUTES}\`.`,
    `${CLIENTS} client loops, a /v1/models probe every 500 ms, routing switched local ↔ cloud (a loopback OpenAI-compatible server) and the API key rotated every 20 s, SIGTERM and restart at ${MINUTES / 2} min.`, '',
    `**Lost requests: ${lost.length}** (a request is lost when its client did not leave and it got no HTTP answer). ${ok ? 'Pass.' : 'FAIL.'}`, '',
    '| request | answers by status (abandoned: the client left) |', '|---|---|',
    ...[...byKind].map(([kind, row]) => `| ${kind} | ${[...row].sort().map(([k, n]) => `${k}: ${n}`).join(', ')} |`),
    '', `Auth latency (GET /v1/models with an API key, ${authMs.length} probes): p50 ${fmt(percentile(authMs, 50), 1)} ms, p99 ${fmt(percentile(authMs, 99), 1)} ms, max ${fmt(Math.max(...authMs), 1)} ms.`,
    '', `RSS: start ${mb(rss[0].bytes)} MB, peak ${mb(peak)} MB; the process after the restart: ${mb(warm.bytes)} MB after its ${WARM_UP_MS / 60_000}-min warm-up, ${mb(end.bytes)} MB at the end after 5 s idle (${fmt(100 * (endRatio - 1), 1)} %; limit +10 %).`,
  ];
  for (const l of lost.slice(0, 10)) lines.push(`- lost: ${l.kind} after ${fmt(l.ms, 0)} ms: ${l.detail}`);
  return { md: lines.join('\n') + '\n', ok };
}

main().catch((err) => {
  console.error(err);
  server?.kill('SIGKILL');
  process.exit(1);
});
