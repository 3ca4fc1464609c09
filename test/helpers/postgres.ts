// A throwaway PostgreSQL server for tests: Debian's binaries (installed by
// .ci/run), a cluster in a temporary directory, listening on a free loopback
// port with its socket in that directory; never the system service. Run as
// the `postgres` user when the tests run as root (PostgreSQL refuses root).
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin', 'postgres'))) : [];
  if (!versions.length) throw new Error('PostgreSQL is not installed (apt-get install postgresql; .ci/run installs it)');
  return path.join(root, versions.sort((a, b) => Number(b) - Number(a))[0], 'bin');
}

/** uid/gid to run as: the `postgres` account when we are root, ourselves otherwise. */
function account(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('running as root and there is no postgres user to run PostgreSQL as');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export class TempPostgres {
  private child: ChildProcess | null = null;
  private databases = 0;

  private constructor(readonly dir: string, readonly port: number, private readonly bin: string, private readonly as: { uid: number; gid: number } | null) {}

  /** A new cluster, started. */
  static async create(): Promise<TempPostgres> {
    const bin = binDir();
    const as = account();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'stt-pg-'));
    if (as) chownSync(dir, as.uid, as.gid);
    await run(path.join(bin, 'initdb'), ['-D', path.join(dir, 'data'), '-U', 'stt', '--auth=trust', '-E', 'UTF8', '--no-sync'], { ...(as ?? {}), cwd: dir });
    const server = new TempPostgres(dir, await freePort(), bin, as);
    await server.start();
    return server;
  }

  url(database = 'postgres'): string {
    return `postgres://stt@127.0.0.1:${this.port}/${database}`;
  }

  /** A fresh, empty database on this server, by URL. */
  async newDatabase(): Promise<string> {
    const name = `stt_${process.pid}_${++this.databases}`;
    const client = new pg.Client(this.url());
    await client.connect();
    try {
      await client.query(`CREATE DATABASE ${name}`);
    } finally {
      await client.end();
    }
    return this.url(name);
  }

  /** Starts the server (again, after stop()) and waits until it takes connections. */
  async start(): Promise<void> {
    const child = spawn(path.join(this.bin, 'postgres'), [
      '-D', path.join(this.dir, 'data'), '-p', String(this.port), '-k', this.dir,
      '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=200',
    ], { ...(this.as ?? {}), cwd: this.dir, stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
    this.child = child;
    for (let i = 0; i < 300; i++) {
      if (child.exitCode !== null) throw new Error(`postgres exited (${child.exitCode}): ${log}`);
      const client = new pg.Client({ connectionString: this.url(), connectionTimeoutMillis: 1000 });
      try {
        await client.connect();
        await client.end();
        return;
      } catch {
        await client.end().catch(() => {});
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    throw new Error(`postgres did not take connections within 30 s: ${log}`);
  }

  /** Fast shutdown (SIGINT: connections are cut, nothing is lost), waiting for the exit. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGINT');
    });
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
