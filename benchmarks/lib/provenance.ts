// What a result file must say about where its numbers came from: the commit,
// the machine, every STT_* setting, and which binaries ran (their sha256 and
// the pinned whisper.cpp source tree they were built from).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIN_DIR, ROOT } from '../../fixtures';

export interface Provenance {
  commit: string;
  /** Files changed against the commit when the run started (empty: a clean tree; earlier runs' untracked reports aside). */
  uncommitted: string[];
  node: string;
  cpu: string;
  cores: number;
  /** The CPU flags that decide ggml's kernels. */
  cpuFlags: string[];
  whisperCpp: { version: string; origin: string; treeSha256: string; covers: string; verifiedAtRun: string };
  /** sha256 of each binary that ran. */
  binaries: Record<string, string>;
}

const git = (args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' });
const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const SIMD = /^(sse\d*|ssse3|avx\S*|fma|f16c|bmi2|amx\S*|neon|sve\S*)$/;

/** Hashes the source tree again now: "yes", or why not (the binaries may then be from another tree). */
function verifySource(): string {
  try {
    execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'whisper-source.js')], { stdio: 'pipe', env: { ...process.env, WHISPER_CPP_DIR: '' } });
    return 'yes';
  } catch (err) {
    return `no: ${String((err as { stderr?: Buffer }).stderr ?? err).trim()}`;
  }
}

/**
 * The files `git status --porcelain` lists, but for reports of earlier runs
 * not yet committed (untracked files under benchmarks/results/): they are
 * output, and cannot change what this run measures. Any other untracked file,
 * a new source file say, still counts.
 */
export function uncommittedOf(porcelain: string): string[] {
  return porcelain.split('\n').filter(Boolean).filter((l) => !(l.startsWith('?? ') && l.slice(3).startsWith('benchmarks/results/'))).map((l) => l.slice(3));
}

/** The commit a report measured and whether the tree was clean, as every report's header says it. */
export const commitState = (p: Pick<Provenance, 'commit' | 'uncommitted'>): string =>
  `${p.commit}${p.uncommitted.length ? ` with UNCOMMITTED changes (${p.uncommitted.join(', ')})` : ' (clean tree)'}`;

export function provenance(): Provenance {
  const cpuinfo = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '';
  const flags = /^flags\s*:\s*(.*)$/m.exec(cpuinfo)?.[1].split(' ').filter((f) => SIMD.test(f)) ?? [];
  const pin = JSON.parse(readFileSync(path.join(ROOT, 'third_party', 'whisper.cpp.json'), 'utf8'));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const addon: string = require('node-gyp-build').path(ROOT);
  const binaries: Record<string, string> = { 'stt_native.node': sha256(addon) };
  for (const bin of ['whisper-server', 'whisper-cli', 'parakeet-cli', 'stt-harness']) {
    const file = path.join(BIN_DIR, bin);
    if (existsSync(file)) binaries[bin] = sha256(file);
  }
  return {
    commit: git(['rev-parse', 'HEAD']).trim(),
    uncommitted: uncommittedOf(git(['status', '--porcelain'])),
    node: process.version,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.availableParallelism(),
    cpuFlags: flags,
    whisperCpp: { version: pin.version, origin: pin.origin, treeSha256: pin.treeSha256, covers: 'src/, include/, ggml/, examples/ (checked at every build by scripts/whisper-source.js)', verifiedAtRun: verifySource() },
    binaries,
  };
}
