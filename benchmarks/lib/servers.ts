// Starts the contenders as real processes on 127.0.0.1 and talks to them.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, requireBin, ROOT, textTokens, VAD_FIXTURE } from '../../fixtures';
import { VAD_FILE } from '../../src/stt/catalogue';
import { readWavHeader } from '../../src/stt/wav-header';
import { onLines } from './lines';
import { BENCH_WINDOW } from './window';

/** One answer: the latency, and what was transcribed (checked across contenders). */
export interface Reply {
  ms: number;
  text: string;
  /** Text token ids (below end-of-text) where the contender returns them. */
  tokens: number[] | null;
}

export interface Contender {
  name: string;
  pid: number;
  /** Sends one WAV; rejects on any answer but 200. */
  transcribe(wav: Buffer): Promise<Reply>;
  /** Like transcribe, plus the time of the addon call inside the server (stt-gateway's request log). */
  transcribeLogged?(wav: Buffer): Promise<Reply & { sttMs: number }>;
  rssBytes(): number;
  stop(): Promise<void>;
  /** Encodes every clip in the full 30-s window, whatever its length (whisper-server's default); else ours' window. */
  fullWindow?: boolean;
}

/** The HTTP status of a refused request, for the load scenarios to count. */
export class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

function waitForLine(child: ChildProcess, pattern: RegExp, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (d: Buffer) => {
      buffered += d.toString();
      const m = pattern.exec(buffered);
      if (m) {
        child.stdout?.off('data', onData);
        child.stderr?.off('data', onData);
        resolve(m[1] ?? m[0]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}) before it was ready`)));
  });
}

/** Resets a process's peak RSS (VmHWM) so the next read covers only what follows (Linux; a no-op elsewhere). */
export function resetPeakRss(pid: number): void {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    // not Linux, or not allowed: the sampled RSS still stands
  }
}

export function procRss(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Posts a form and reads a verbose_json answer (ours and whisper-server's have the same fields used here). */
async function post(url: string, form: FormData, headers: Record<string, string> = {}): Promise<Reply> {
  const t = process.hrtime.bigint();
  const res = await fetch(url, { method: 'POST', body: form, headers });
  const body = await res.text();
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (!res.ok) throw new HttpError(res.status, `${url}: HTTP ${res.status} ${body.slice(0, 200)}`);
  const json = JSON.parse(body) as { text: string; segments?: { tokens?: number[] }[] };
  // Text tokens: ours carry Whisper's timestamp tokens too, whisper-server's do not (Parakeet's ids are all below).
  const tokens = json.segments?.every((seg) => Array.isArray(seg.tokens)) ? json.segments.flatMap((seg) => textTokens(seg.tokens!)) : null;
  return { ms, text: json.text, tokens };
}

const stopChild = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  });

/**
 * The addon-call time (`sttMs`) from a server's JSON request log, for requests
 * sent with an X-Request-Id of ours. The line is written before the response,
 * but the pipe may deliver it after the client has its answer, so callers wait.
 */
function followSttMs(child: ChildProcess): (requestId: string) => Promise<number> {
  const logged = new Map<string, number>();
  const waiting = new Map<string, (sttMs: number) => void>();
  onLines(child.stdout!, (line) => {
    if (!line.includes(`"requestId":"${LOGGED_PREFIX}`)) return;
    const { requestId, sttMs } = JSON.parse(line);
    const waiter = waiting.get(requestId);
    waiting.delete(requestId);
    if (waiter) waiter(sttMs);
    else logged.set(requestId, sttMs);
  });
  return (requestId) => {
    const ready = logged.get(requestId);
    logged.delete(requestId);
    return ready !== undefined ? Promise.resolve(ready) : new Promise((resolve) => waiting.set(requestId, resolve));
  };
}
const LOGGED_PREFIX = 'bench-logged-';

export interface OursOptions {
  modelFile: string;
  threads: number;
  /** whisper.cpp's temperature fallback (on for real weights, off for random ones, as for every contender). */
  fallback: boolean;
  /** STT_SCHEDULING: `arrival` runs the server as a plain FIFO (the control); its default otherwise. */
  scheduling?: 'arrival';
  /** STT_PARALLEL; the server's default when omitted. */
  parallel?: number;
  /** Catalogue runtime and the file name it is installed under (default: whisper-base); null: no model (Node's own footprint). */
  runtime?: { id: string; file: string } | null;
  /** STT_DATABASE_URL (with a fixed STT_SECRET_KEY): PostgreSQL instead of the SQLite file. */
  databaseUrl?: string;
  /** Installs the Silero VAD model beside the runtime (realtime sessions then default to server_vad). */
  vad?: boolean;
  /** Set last, over the bench's own settings (a study that measures the shipped defaults says so here). */
  env?: Record<string, string>;
}

/** This server, in its own process, with its own data dir. */
export async function startOurs(o: OursOptions): Promise<Contender & { startedAt: bigint; settings: Record<string, string | undefined>; url: string; apiKey: string }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'stt-bench-'));
  mkdirSync(path.join(dataDir, 'models'));
  const runtime = o.runtime === undefined ? { id: 'whisper-base', file: 'ggml-base.bin' } : o.runtime;
  if (runtime) symlinkSync(o.modelFile, path.join(dataDir, 'models', runtime.file));
  if (o.vad) symlinkSync(VAD_FIXTURE, path.join(dataDir, 'models', VAD_FILE.name));
  const env = {
    ...process.env, PORT: '0', HOST: '127.0.0.1', STT_DATA_DIR: dataDir, STT_ADMIN_KEY: 'bench-admin-key-0123456789',
    STT_THREADS: String(o.threads), ...(o.parallel ? { STT_PARALLEL: String(o.parallel) } : {}), STT_QUEUE_CAPACITY: '64',
    STT_TEMPERATURE_FALLBACK: String(o.fallback), STT_MAX_TOKENS: '0', LOG_LEVEL: 'info', STT_DEFAULT_MODEL: 'none',
    // The window the output check and the report assume (benchmarks/scenarios/context.ts), whatever the caller's environment says.
    STT_ENCODER_WINDOW: BENCH_WINDOW,
    // whisper-server has no deadline: ours must not cut a request it would have answered (in arrival order a 5-s clip waits for every long one).
    STT_DEADLINE_BASE_MS: '600000',
    // Greedy, as every whisper.cpp tool here decodes (whisperDecodingArgs): the bench compares implementations, not decodings.
    STT_BEAM_SIZE: '1',
    // The load driver and the other contenders run beside it: threads that follow the free cores would read them as a busy host.
    STT_FOLLOW_FREE_CORES: 'false',
    ...(o.scheduling ? { STT_SCHEDULING: o.scheduling } : {}),
    ...(o.databaseUrl ? { STT_DATABASE_URL: o.databaseUrl, STT_SECRET_KEY: 'ab'.repeat(32) } : {}),
    ...o.env,
  };
  const admin = (args: string[]) =>
    new Promise<string>((resolve, reject) => {
      const p = spawn(process.execPath, [path.join(ROOT, 'dist/src/cli/admin.js'), ...args], { env });
      let out = '';
      p.stdout.on('data', (d) => (out += d));
      p.on('exit', (c) => (c === 0 ? resolve(out) : reject(new Error(`admin ${args.join(' ')} failed`))));
    });
  if (runtime) await admin(['runtime', 'activate', runtime.id]);
  const { key } = JSON.parse(await admin(['keys', 'create', 'bench']));
  const startedAt = process.hrtime.bigint();
  const child = spawn(process.execPath, [path.join(ROOT, 'dist/src/server.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const port = await waitForLine(child, /"port":(\d+)/, 'stt-gateway');
  if (runtime) await waitForLine(child, /local runtime ready/, 'stt-gateway');
  const sttMsOf = followSttMs(child);
  const url = `http://127.0.0.1:${port}/v1/audio/transcriptions`;
  const send = (wav: Buffer, headers: Record<string, string> = {}) => {
    const form = new FormData();
    form.append('file', new Blob([wav as unknown as BlobPart], { type: 'audio/wav' }), 'clip.wav');
    form.append('language', 'en');
    form.append('response_format', 'verbose_json');
    return post(url, form, { Authorization: `Bearer ${key}`, ...headers });
  };
  let logged = 0;
  return {
    name: o.scheduling === 'arrival' ? 'stt-gateway, arrival order' : 'stt-gateway',
    pid: child.pid!,
    startedAt,
    settings: Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith('STT_') && !['STT_ADMIN_KEY', 'STT_DATA_DIR', 'STT_SECRET_KEY'].includes(k))),
    url: `http://127.0.0.1:${port}`,
    apiKey: key,
    transcribe: (wav) => send(wav),
    transcribeLogged: async (wav) => {
      const requestId = `${LOGGED_PREFIX}${logged++}`;
      const reply = await send(wav, { 'X-Request-Id': requestId });
      return { ...reply, sttMs: await sttMsOf(requestId) };
    },
    rssBytes: () => procRss(child.pid!),
    stop: () => stopChild(child),
  };
}

/**
 * Decoding flags every whisper.cpp tool gets: greedy with whisper.cpp's
 * default best_of (5, what the library and our server use), and the
 * temperature fallback on or off as for the server.
 */
/** The name whisper-server is timed under when it runs ours' encoder window (scenarios/load.ts; the report reads it). */
export const WS_IN_OURS_WINDOW = "whisper-server, ours' window";

export const whisperDecodingArgs = (fallback: boolean) => ['-l', 'en', '-bs', '1', '-bo', '5', ...(fallback ? [] : ['-nf'])];

/**
 * whisper.cpp's whisper-server from the same source tree, same model, threads
 * and decoding. `transcribe` leaves the encoder window at its default (the
 * full 30 s, as hosts run it); `transcribeIn` sends an audio_ctx, for the
 * output check against ours.
 */
export async function startWhisperServer(modelFile: string, threads: number, fallback: boolean): Promise<Contender & { args: string[]; transcribeIn(wav: Buffer, audioCtx: number): Promise<Reply> }> {
  const port = await freePort();
  const args = ['-m', modelFile, '-t', String(threads), ...whisperDecodingArgs(fallback), '-ng', '--host', '127.0.0.1', '--port', String(port)];
  // Its output is not read: a pipe nobody drains would block it (it logs every request) after a few hundred requests.
  const child = spawn(requireBin('whisper-server'), args, { stdio: 'ignore', cwd: os.tmpdir() });
  // Its banner goes to a block-buffered stdout, so poll the port instead.
  let exited = false;
  child.once('exit', () => (exited = true));
  for (let i = 0; ; i++) {
    if (exited || i > 600) throw new Error('whisper-server did not start');
    try {
      await fetch(`http://127.0.0.1:${port}/`);
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const url = `http://127.0.0.1:${port}/inference`;
  const send = (wav: Buffer, audioCtx = 0) => {
    const form = new FormData();
    form.append('file', new Blob([wav as unknown as BlobPart], { type: 'audio/wav' }), 'clip.wav');
    form.append('response_format', 'verbose_json');
    form.append('temperature', '0');
    form.append('temperature_inc', fallback ? '0.2' : '0');
    // On by default per request in whisper-server, off in ours and the library: DTW-free token times cost time.
    form.append('token_timestamps', 'false');
    // verbose_json otherwise runs whisper_lang_auto_detect, a second encoder pass, for its language probabilities.
    form.append('no_language_probabilities', 'true');
    if (audioCtx) form.append('audio_ctx', String(audioCtx));
    return post(url, form);
  };
  return {
    name: 'whisper-server',
    args,
    pid: child.pid!,
    fullWindow: true,
    transcribe: (wav) => send(wav),
    transcribeIn: send,
    rssBytes: () => procRss(child.pid!),
    stop: () => stopChild(child),
  };
}

/**
 * The naive wrapper: one whisper-cli (or parakeet-cli) process per request,
 * with the same decoding, timestamp settings and encoder window (`windowOf`
 * a clip's seconds, whisper-cli's -ac) as ours (timestamps on: whisper-cli's
 * -nt would change what is decoded); the text comes from its -otxt file.
 */
export function naiveCli(family: 'whisper' | 'parakeet', modelFile: string, threads: number, workDir: string, fallback: boolean,
  windowOf: (seconds: number) => number): Contender {
  const bin = family === 'whisper' ? 'whisper-cli' : 'parakeet-cli';
  const args = family === 'whisper' ? [...whisperDecodingArgs(fallback), '-ng', '-np', '-otxt'] : ['-ng', '-np', '-otxt'];
  let n = 0;
  let peak = 0;
  return {
    name: `${bin} per request`,
    pid: 0,
    transcribe: async (wav) => {
      const base = path.join(workDir, `naive-${process.pid}-${n++}`);
      const file = `${base}.wav`;
      writeFileSync(file, wav);
      const t = process.hrtime.bigint();
      await new Promise<void>((resolve, reject) => {
        const window = family === 'whisper' ? ['-ac', String(windowOf(readWavHeader(wav)!.durationSeconds))] : [];
        const p = spawn(requireBin(bin), ['-m', modelFile, '-f', file, '-t', String(threads), ...args, ...window, '-of', base], { stdio: 'ignore' });
        const timer = setInterval(() => (peak = Math.max(peak, procRss(p.pid!, 'VmHWM'))), 100);
        p.on('exit', (code) => {
          clearInterval(timer);
          if (code === 0) resolve();
          else reject(new Error(`${bin} exited ${code}`));
        });
      });
      const ms = Number(process.hrtime.bigint() - t) / 1e6;
      const text = readFileSync(`${base}.txt`, 'utf8');
      rmSync(file, { force: true });
      rmSync(`${base}.txt`, { force: true });
      return { ms, text, tokens: null };
    },
    rssBytes: () => peak,
    stop: async () => {},
  };
}
