// deploy/nginx.conf, the real one, run by Debian's nginx in a temporary
// prefix for tests: the replica names become loopback ports, it listens on a
// free loopback port, logs and temporary files stay in the prefix.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, ROOT } from '../../fixtures';

export class TempNginx {
  private constructor(readonly dir: string, readonly port: number, private readonly child: ChildProcess, private readonly log: () => string) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The deployed configuration with replicaN:8080 → 127.0.0.1:replicaPorts[N-1]. */
  static async start(replicaPorts: number[]): Promise<TempNginx> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'stt-nginx-'));
    chmodSync(dir, 0o755); // as root, nginx's workers run as nobody and keep their temporary files here
    mkdirSync(path.join(dir, 'logs'));
    const port = await freePort();
    let conf = readFileSync(path.join(ROOT, 'deploy/nginx.conf'), 'utf8')
      .replace(/replica(\d+):8080/g, (_, n: string) => `127.0.0.1:${replicaPorts[Number(n) - 1]}`)
      .replace(/listen 80;/, `listen 127.0.0.1:${port};`)
      .replace(/worker_processes auto;/, 'worker_processes 1;');
    writeFileSync(path.join(dir, 'nginx.conf'), conf);
    const child = spawn('nginx', ['-c', path.join(dir, 'nginx.conf'), '-p', dir, '-g', `daemon off; error_log ${dir}/logs/error.log; pid ${dir}/nginx.pid;`], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let out = '';
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const log = () => out + readFileSync(path.join(dir, 'logs/error.log'), 'utf8');
    const nginx = new TempNginx(dir, port, child, log);
    for (let i = 0; i < 200; i++) {
      if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}): ${out}`);
      if (await fetch(`${nginx.url}/health`).then(() => true, () => false)) return nginx;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`nginx did not answer within 10 s: ${out}`);
  }

  errorLog(): string {
    return this.log();
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) {
      await new Promise<void>((resolve) => {
        this.child.once('exit', () => resolve());
        this.child.kill('SIGQUIT');
      });
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
