import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cpuQuotaCores, usableCores } from '../../src/stt/local/cpu-quota';

/** A reader over a fake file system: path → contents; anything else is missing, as on a real host. */
const files = (fs: Record<string, string>) => (file: string): string => {
  if (!(file in fs)) throw Object.assign(new Error(`ENOENT: ${file}`), { code: 'ENOENT' });
  return fs[file];
};

const V2_MOUNT = '29 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n';
const V1_MOUNTS = [
  '35 30 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:10 - cgroup cgroup rw,cpu,cpuacct',
  '36 30 0:31 / /sys/fs/cgroup/memory rw,relatime shared:11 - cgroup cgroup rw,memory',
  '37 30 0:32 / /sys/fs/cgroup/unified rw,relatime shared:12 - cgroup2 cgroup2 rw',
].join('\n');

test('cgroup v2: a container\'s cpu.max, and the lowest limit over the ancestors', () => {
  // docker run --cpus=1.5: the container sees its group as the root.
  assert.equal(cpuQuotaCores(files({
    '/proc/self/mountinfo': V2_MOUNT, '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/cpu.max': '150000 100000\n',
  })), 1.5);
  // A service's group under a slice that allows less.
  assert.equal(cpuQuotaCores(files({
    '/proc/self/mountinfo': V2_MOUNT, '/proc/self/cgroup': '0::/system.slice/stt.service\n',
    '/sys/fs/cgroup/system.slice/stt.service/cpu.max': 'max 100000\n',
    '/sys/fs/cgroup/system.slice/cpu.max': '50000 100000\n',
    '/sys/fs/cgroup/cpu.max': '400000 100000\n',
  })), 0.5);
  // No limit anywhere, or no cpu.max at all (the cpu controller not enabled).
  assert.equal(cpuQuotaCores(files({ '/proc/self/mountinfo': V2_MOUNT, '/proc/self/cgroup': '0::/a\n', '/sys/fs/cgroup/a/cpu.max': 'max 100000\n' })), null);
  assert.equal(cpuQuotaCores(files({ '/proc/self/mountinfo': V2_MOUNT, '/proc/self/cgroup': '0::/a\n' })), null);
});

test('cgroup v1: cfs_quota_us over cfs_period_us in the hierarchy with the cpu controller; -1 is no limit', () => {
  const cgroup = '4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n0::/\n';
  assert.equal(cpuQuotaCores(files({
    '/proc/self/mountinfo': V1_MOUNTS, '/proc/self/cgroup': cgroup,
    '/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us': '200000\n', '/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us': '100000\n',
    '/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us': '-1\n', '/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us': '100000\n',
  })), 2);
  // A container whose mount's root is its own group (the path in /proc/self/cgroup is the same).
  const inContainer = V1_MOUNTS.replace('35 30 0:30 / ', '35 30 0:30 /docker/abc ');
  assert.equal(cpuQuotaCores(files({
    '/proc/self/mountinfo': inContainer, '/proc/self/cgroup': cgroup,
    '/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us': '50000\n', '/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us': '100000\n',
  })), 0.5);
  assert.equal(cpuQuotaCores(files({
    '/proc/self/mountinfo': V1_MOUNTS, '/proc/self/cgroup': cgroup,
    '/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us': '-1\n', '/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us': '100000\n',
  })), null);
});

test('no /proc (not Linux), or no cgroup mounts: no quota', () => {
  assert.equal(cpuQuotaCores(files({})), null);
  assert.equal(cpuQuotaCores(files({ '/proc/self/mountinfo': '', '/proc/self/cgroup': '0::/\n' })), null);
});

test('the cores a job may use: the CPUs, at most the quota rounded up, at least one', () => {
  assert.equal(usableCores(8, null), 8);
  assert.equal(usableCores(8, 1.5), 2);
  assert.equal(usableCores(8, 1), 1);
  assert.equal(usableCores(8, 0.2), 1);
  assert.equal(usableCores(2, 4), 2);
});

test('in a real cgroup with a one-core quota, the default STT_THREADS is 1', (t) => {
  if (os.availableParallelism() < 2) return t.skip('needs 2 or more CPUs to tell a quota from the CPU count');
  // This process's cgroup in the v1 hierarchy with the cpu controller (what the CI machine has), or in v2.
  const mountinfo = readFileSync('/proc/self/mountinfo', 'utf8');
  const cgroups = readFileSync('/proc/self/cgroup', 'utf8');
  const v1 = /^\d+:[^:]*\bcpu\b[^:]*:(.*)$/m.exec(cgroups);
  const v1Mount = mountinfo.split('\n').find((l) => / - cgroup \S+ \S*\bcpu\b/.test(l));
  const v2 = /^0::(.*)$/m.exec(cgroups);
  const v2Mount = mountinfo.split('\n').find((l) => / - cgroup2 /.test(l));
  const base = v1 && v1Mount ? path.join(v1Mount.split(' ')[4], v1[1]) : v2 && v2Mount ? path.join(v2Mount.split(' ')[4], v2[1]) : null;
  if (!base) return t.skip('no cgroup hierarchy with the cpu controller');
  const dir = path.join(base, `stt-quota-test-${process.pid}`);
  try {
    mkdirSync(dir);
  } catch (err) {
    return t.skip(`cannot make a cgroup here (${(err as NodeJS.ErrnoException).code}): needs root`);
  }
  try {
    try {
      if (v1 && v1Mount) writeFileSync(path.join(dir, 'cpu.cfs_quota_us'), String(Number(readFileSync(path.join(dir, 'cpu.cfs_period_us'), 'utf8'))));
      else writeFileSync(path.join(dir, 'cpu.max'), '100000 100000');
    } catch (err) {
      return t.skip(`cannot set a CPU quota here (${(err as NodeJS.ErrnoException).code})`);
    }
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'stt-quota-'));
    const script = `const { loadConfig } = require(${JSON.stringify(path.resolve(__dirname, '../../src/config'))}); ` +
      `process.stdout.write(String(loadConfig({ STT_DATA_DIR: ${JSON.stringify(dataDir)} }).threads));`;
    // The shell moves itself into the group, then becomes node: the process starts under the quota.
    const child = spawnSync('sh', ['-c', `echo $$ > "$0/cgroup.procs" && exec "$1" --import tsx -e "$2"`, dir, process.execPath, script], { encoding: 'utf8', cwd: path.resolve(__dirname, '../..') });
    assert.equal(child.status, 0, child.stderr);
    assert.equal(child.stdout, '1', `one core of quota on ${os.availableParallelism()} CPUs`);
  } finally {
    rmdirSync(dir);
  }
});
