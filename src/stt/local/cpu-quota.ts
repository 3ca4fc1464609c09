// The CPU time this process may use under its cgroup's CPU quota, in cores,
// so the default thread count stays within it. Node's os.availableParallelism()
// counts the CPUs the process may run on (its affinity, as a cpuset sets it),
// not a quota: `docker run --cpus=1` on a 2-core host still reports 2. Two
// threads under a one-core quota spend the quota in half of each period and
// are throttled for the other half, and ggml's threads meet at a barrier
// after every graph node, so that is slower than one thread.
// Reads cgroup v2 (cpu.max) and v1 (cpu.cfs_quota_us over cpu.cfs_period_us)
// for this process's cgroup and each ancestor (the lowest limit binds),
// finding the hierarchies in /proc/self/mountinfo, as Go's runtime and the
// JVM do. Linux only: elsewhere, or when nothing can be read, null.
import { readFileSync } from 'node:fs';
import path from 'node:path';

type Read = (file: string) => string;

interface CgroupMount { root: string; point: string }

/** The mount of the v2 hierarchy, or of the v1 hierarchy holding the cpu controller. */
function findMount(mountinfo: string, v2: boolean): CgroupMount | null {
  for (const line of mountinfo.split('\n')) {
    // "36 35 0:30 / /sys/fs/cgroup/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu": root and point are
    // fields 4 and 5; after the " - " come the file system type, the source and the super options.
    const [before, after] = line.split(' - ');
    if (!after) continue;
    const [, , , root, point] = before.split(' ');
    const [type, , options = ''] = after.split(' ');
    if (v2 ? type === 'cgroup2' : type === 'cgroup' && options.split(',').includes('cpu')) return { root, point };
  }
  return null;
}

/** One cgroup directory's limit in cores, or null where it sets none or has no such file. */
function limitIn(read: Read, dir: string, v2: boolean): number | null {
  try {
    if (v2) {
      const [quota, period] = read(path.posix.join(dir, 'cpu.max')).trim().split(/\s+/);
      return quota === 'max' ? null : Number(quota) / Number(period);
    }
    const quota = Number(read(path.posix.join(dir, 'cpu.cfs_quota_us')).trim());
    return quota <= 0 ? null : quota / Number(read(path.posix.join(dir, 'cpu.cfs_period_us')).trim());
  } catch {
    return null;
  }
}

/** The lowest CPU quota over this process's cgroups and their ancestors, in cores; null when there is none. */
export function cpuQuotaCores(read: Read = (file) => readFileSync(file, 'utf8')): number | null {
  let mountinfo: string;
  let cgroups: string;
  try {
    mountinfo = read('/proc/self/mountinfo');
    cgroups = read('/proc/self/cgroup');
  } catch {
    return null;
  }
  let lowest = Infinity;
  for (const line of cgroups.split('\n')) {
    // "0::/path" is v2; "4:cpu,cpuacct:/path" a v1 hierarchy.
    const m = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (!m) continue;
    const v2 = m[1] === '0' && m[2] === '';
    if (!v2 && !m[2].split(',').includes('cpu')) continue;
    const mount = findMount(mountinfo, v2);
    if (!mount) continue;
    // A container sees its own group as the mount's root.
    const inMount = m[3].startsWith(mount.root) ? m[3].slice(mount.root.length) : m[3];
    for (let dir = path.posix.join(mount.point, inMount); ; dir = path.posix.dirname(dir)) {
      const limit = limitIn(read, dir, v2);
      if (limit !== null && limit > 0) lowest = Math.min(lowest, limit);
      if (dir === mount.point || dir === '/' || !dir.startsWith(mount.point)) break;
    }
  }
  return Number.isFinite(lowest) ? lowest : null;
}

/** The cores a job may use: the CPUs available to the process, at most its quota rounded up, at least 1. */
export function usableCores(cpus: number, quota: number | null): number {
  return Math.max(1, Math.min(cpus, quota === null ? cpus : Math.ceil(quota)));
}
