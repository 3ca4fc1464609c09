import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ownCpuCgroups, ownQuotaReader, quotaReader, usableCores } from '../../src/stt/local/cpu-quota';

/** The quota read once, its groups found afresh. */
const cpuQuotaCores = (read: (file: string) => string) => quotaReader(read)();

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

test('a quota reader finds the groups once and reads only their limit files again', () => {
  const fs: Record<string, string> = { '/proc/self/mountinfo': V2_MOUNT, '/proc/self/cgroup': '0::/a\n', '/sys/fs/cgroup/a/cpu.max': '100000 100000\n' };
  const read: string[] = [];
  const readQuota = quotaReader((file) => { read.push(file); return files(fs)(file); });
  assert.deepEqual(read, ['/proc/self/mountinfo', '/proc/self/cgroup']);
  assert.equal(readQuota(), 1);
  fs['/sys/fs/cgroup/a/cpu.max'] = '50000 100000\n'; // lowered while the server runs
  assert.equal(readQuota(), 0.5);
  assert.equal(read.filter((f) => f.startsWith('/proc/')).length, 2, 'mountinfo and cgroup read once, at the start');
  assert.equal(read.filter((f) => f === '/sys/fs/cgroup/a/cpu.max').length, 2, 'the limit file read at each call');
});

test('the process has one quota reader, shared by start-up and the free-core monitor', () => {
  assert.equal(ownQuotaReader(), ownQuotaReader());
});

test('the cores a job may use: the CPUs, at most the quota to the nearest core, at least one', () => {
  assert.equal(usableCores(8, null), 8);
  assert.equal(usableCores(8, 1.5), 2);
  assert.equal(usableCores(8, 1.25), 1);
  assert.equal(usableCores(8, 1), 1);
  assert.equal(usableCores(8, 0.2), 1);
  assert.equal(usableCores(2, 4), 2);
});

test('mountinfo escapes, mount roots at path boundaries, groups outside the namespace', () => {
  // A mount point with a space (mountinfo writes \040), and a group named as systemd names units (with a backslash).
  const escaped = '29 23 0:26 / /sys/fs/my\\040cgroup rw shared:4 - cgroup2 cgroup2 rw\n';
  assert.equal(cpuQuotaCores(files({
    '/proc/self/mountinfo': escaped, '/proc/self/cgroup': '0::/machine.slice/a\\x2db\n',
    '/sys/fs/my cgroup/machine.slice/a\\x2db/cpu.max': '100000 100000\n',
  })), 1);
  // A mount whose root is /a/b shows /a/b/c, not /a/bc.
  const rooted = '29 23 0:26 /a/b /sys/fs/cgroup rw shared:4 - cgroup2 cgroup2 rw\n';
  assert.deepEqual(ownCpuCgroups(files({ '/proc/self/mountinfo': rooted, '/proc/self/cgroup': '0::/a/b/c\n' })), [{ dir: '/sys/fs/cgroup/c', mountPoint: '/sys/fs/cgroup', v2: true }]);
  assert.deepEqual(ownCpuCgroups(files({ '/proc/self/mountinfo': rooted, '/proc/self/cgroup': '0::/a/bc\n' })), []);
  // A group outside this cgroup namespace: nothing is read, not even the mount's own files.
  const read: string[] = [];
  const tracking = (file: string) => { read.push(file); return files({ '/proc/self/mountinfo': V2_MOUNT, '/proc/self/cgroup': '0::/../other\n', '/sys/fs/cgroup/cpu.max': '50000 100000\n' })(file); };
  assert.equal(cpuQuotaCores(tracking), null);
  assert.deepEqual(read, ['/proc/self/mountinfo', '/proc/self/cgroup']);
  // Junk and zero periods are no limit.
  assert.equal(cpuQuotaCores(files({ '/proc/self/mountinfo': V2_MOUNT, '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/cpu.max': '100000 0\n' })), null);
  assert.equal(cpuQuotaCores(files({ '/proc/self/mountinfo': V2_MOUNT, '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/cpu.max': 'junk\n' })), null);
});

test('in a real cgroup with a one-core quota, the default STT_THREADS is 1, and 2 when two slots ask for them', (t) => {
  if (process.platform !== 'linux') return t.skip('cgroups are Linux only');
  if (os.availableParallelism() < 2) return t.skip('needs 2 or more CPUs to tell a quota from the CPU count');
  // This process's own group in a hierarchy that holds the cpu controller (v1 on the CI machine), found as the server finds it.
  const own = ownCpuCgroups()[0];
  if (!own) return t.skip('no cgroup hierarchy with the cpu controller');
  const dir = path.join(own.dir, `stt-quota-test-${process.pid}`);
  try {
    mkdirSync(dir);
  } catch (err) {
    return t.skip(`cannot make a cgroup in ${own.dir} (${(err as NodeJS.ErrnoException).code}): needs root and a writable hierarchy`);
  }
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'stt-quota-'));
  try {
    try {
      if (own.v2) writeFileSync(path.join(dir, 'cpu.max'), '100000 100000');
      else writeFileSync(path.join(dir, 'cpu.cfs_quota_us'), readFileSync(path.join(dir, 'cpu.cfs_period_us'), 'utf8').trim());
    } catch (err) {
      return t.skip(`cannot set a CPU quota here (${(err as NodeJS.ErrnoException).code})`);
    }
    const script = `const { loadConfig } = require(${JSON.stringify(path.resolve(__dirname, '../../src/config'))}); ` +
      `const env = { STT_DATA_DIR: ${JSON.stringify(dataDir)} }; ` +
      `process.stdout.write(loadConfig(env).threads + ' ' + loadConfig({ ...env, STT_PARALLEL: '2' }).threads);`;
    // The shell moves itself into the group, then becomes node: the process starts under the quota.
    const child = spawnSync('sh', ['-c', `echo $$ > "$0/cgroup.procs" && exec "$1" --import tsx -e "$2"`, dir, process.execPath, script],
      { encoding: 'utf8', cwd: path.resolve(__dirname, '../..'), timeout: 60_000 });
    assert.equal(child.status, 0, child.stderr || String(child.error));
    assert.equal(child.stdout, '1 2', `one core of quota on ${os.availableParallelism()} CPUs: one thread, and one per slot for two slots`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    // A helper the child left (tsx's esbuild) may hold the group for a moment after it exits.
    for (let tries = 0; tries < 50; tries++) {
      try {
        rmdirSync(dir);
        break;
      } catch {
        spawnSync('sleep', ['0.1']);
      }
    }
  }
});
