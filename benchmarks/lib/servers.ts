// Starts the contenders as real processes on 127.0.0.1 and talks to them.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { requireBin } from './harness';
import { onLines } from './lines';

const ROOT = path.resolve(__dirname, '..', '..');

export interface Contender {
  name: string;
  pid: number;
  /** Sends one WAV, resolves with the latency in ms. */
  transcribe(wav: Buffer): Promise<number>;
  /** Like transcribe, plus the time of the addon call inside the server (stt-gateway's request log). */
  transcribeLogged?(wav: Buffer): Promise<{ ms: number; sttMs: number }>;
  rssBytes(): number;
  stop(): Promise<void>;
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

export function procRss(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

async function post(url: string, form: FormData, headers: Record<string, string> = {}): Promise<number> {
  const t = process.hrtime.bigint();
  const res = await fetch(url, { method: 'POST', body: form, headers });
  const body = await res.text();
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status} ${body.slice(0, 200)}`);
  return Number(process.hrtime.bigint() - t) / 1e6;
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
  /** STT_PARALLEL; the server's default when omitted. */
  parallel?: number;
  /** Catalogue runtime and the file name it is installed under (default: whisper-base). */
  runtime?: { id: string; file: string };
}

/** This server, in its own process, with its own data dir. */
export async function startOurs(o: OursOptions): Promise<Contender & { startedAt: bigint }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'stt-bench-'));
  mkdirSync(path.join(dataDir, 'models'));
  const runtime = o.runtime ?? { id: 'whisper-base', file: 'ggml-base.bin' };
  symlinkSync(o.modelFile, path.join(dataDir, 'models', runtime.file));
  const env = {
    ...process.env, PORT: '0', HOST: '127.0.0.1', STT_DATA_DIR: dataDir, STT_ADMIN_KEY: 'bench-admin-key-0123456789',
    STT_THREADS: String(o.threads), ...(o.parallel ? { STT_PARALLEL: String(o.parallel) } : {}), STT_QUEUE_CAPACITY: '64',
    STT_TEMPERATURE_FALLBACK: 'false', STT_MAX_TOKENS: '0', LOG_LEVEL: 'info',
  };
  const admin = (args: string[]) =>
    new Promise<string>((resolve, reject) => {
      const p = spawn(process.execPath, [path.join(ROOT, 'dist/src/cli/admin.js'), ...args], { env });
      let out = '';
      p.stdout.on('data', (d) => (out += d));
      p.on('exit', (c) => (c === 0 ? resolve(out) : reject(new Error(`admin ${args.join(' ')} failed`))));
    });
  await admin(['runtime', 'activate', runtime.id]);
  const { key } = JSON.parse(await admin(['keys', 'create', 'bench']));
  const startedAt = process.hrtime.bigint();
  const child = spawn(process.execPath, [path.join(ROOT, 'dist/src/server.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const port = await waitForLine(child, /"port":(\d+)/, 'stt-gateway');
  await waitForLine(child, /local runtime ready/, 'stt-gateway');
  const sttMsOf = followSttMs(child);
  const url = `http://127.0.0.1:${port}/v1/audio/transcriptions`;
  const send = (wav: Buffer, headers: Record<string, string> = {}) => {
    const form = new FormData();
    form.append('file', new Blob([wav as unknown as BlobPart], { type: 'audio/wav' }), 'clip.wav');
    form.append('language', 'en');
    return post(url, form, { Authorization: `Bearer ${key}`, ...headers });
  };
  let logged = 0;
  return {
    name: 'stt-gateway',
    pid: child.pid!,
    startedAt,
    transcribe: (wav) => send(wav),
    transcribeLogged: async (wav) => {
      const requestId = `${LOGGED_PREFIX}${logged++}`;
      const ms = await send(wav, { 'X-Request-Id': requestId });
      return { ms, sttMs: await sttMsOf(requestId) };
    },
    rssBytes: () => procRss(child.pid!),
    stop: () => stopChild(child),
  };
}

/** whisper.cpp's whisper-server from the same source tree, same model, threads and greedy decoding. */
export async function startWhisperServer(modelFile: string, threads: number): Promise<Contender> {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const child = spawn(requireBin('whisper-server'), ['-m', modelFile, '-t', String(threads), '-l', 'en', '-bs', '1', '-bo', '1', '-nf', '-ng',
    '--host', '127.0.0.1', '--port', String(port)], { stdio: ['ignore', 'pipe', 'pipe'], cwd: os.tmpdir() });
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
  return {
    name: 'whisper-server',
    pid: child.pid!,
    transcribe: (wav) => {
      const form = new FormData();
      form.append('file', new Blob([wav as unknown as BlobPart], { type: 'audio/wav' }), 'clip.wav');
      form.append('response_format', 'json');
      form.append('temperature', '0');
      form.append('temperature_inc', '0');
      return post(url, form);
    },
    rssBytes: () => procRss(child.pid!),
    stop: () => stopChild(child),
  };
}

/** The naive wrapper: one whisper-cli (or parakeet-cli) process per request. */
export function naiveCli(family: 'whisper' | 'parakeet', modelFile: string, threads: number, workDir: string): Contender {
  const bin = family === 'whisper' ? 'whisper-cli' : 'parakeet-cli';
  const args = family === 'whisper' ? ['-l', 'en', '-bs', '1', '-bo', '1', '-nf', '-ng', '-np', '-nt'] : ['-ng', '-np'];
  let n = 0;
  let peak = 0;
  return {
    name: `${bin} per request`,
    pid: 0,
    transcribe: async (wav) => {
      const file = path.join(workDir, `naive-${process.pid}-${n++}.wav`);
      writeFileSync(file, wav);
      const t = process.hrtime.bigint();
      await new Promise<void>((resolve, reject) => {
        const p = spawn(requireBin(bin), ['-m', modelFile, '-f', file, '-t', String(threads), ...args], { stdio: 'ignore' });
        const timer = setInterval(() => (peak = Math.max(peak, procRss(p.pid!, 'VmHWM'))), 100);
        p.on('exit', (code) => {
          clearInterval(timer);
          if (code === 0) resolve();
          else reject(new Error(`${bin} exited ${code}`));
        });
      });
      rmSync(file, { force: true });
      return Number(process.hrtime.bigint() - t) / 1e6;
    },
    rssBytes: () => peak,
    stop: async () => {},
  };
}
