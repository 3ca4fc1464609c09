// The CPU time this process may use under its cgroup's CPU quota, in cores,
// so the default thread count stays within it. Node's os.availableParallelism()
// counts the CPUs the process may run on (its affinity, as a cpuset sets it),
// not a quota: `docker run --cpus=1` on a 2-core host still reports 2. Two
// threads under a one-core quota spend the quota in part of each period and
// are throttled for the rest, and ggml's threads spin at a barrier after
// every graph node, so that is slower than one thread (docs/performance.md,
// "Sharing the CPU").
// Reads cgroup v2 (cpu.max) and v1 (cpu.cfs_quota_us over cpu.cfs_period_us)
// for this process's cgroup and each ancestor within the mount (the lowest
// limit binds, as newer JVMs read it), finding the hierarchies in
// /proc/self/mountinfo. Linux only: elsewhere, or when nothing can be read, null.
import { readFileSync } from 'node:fs';
import path from 'node:path';

type Read = (file: string) => string;
const readText: Read = (file) => readFileSync(file, 'utf8');

/** One cgroup hierarchy this process is in that can limit the CPU: its group's directory and the mount point above which nothing is read. */
export interface CpuCgroup { dir: string; mountPoint: string; v2: boolean }

/** mountinfo escapes space, tab, newline and backslash as octal (\040). */
const unescape = (field: string) => field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));

/** Whether `inner` is `outer` or below it, at a path boundary. */
const within = (outer: string, inner: string) => outer === '/' || inner === outer || inner.startsWith(`${outer}/`);

/** The mounts of the v2 hierarchy, or of v1 hierarchies holding the cpu controller: the group's root in the mount, and the mount point. */
function mountsOf(mountinfo: string, v2: boolean): { root: string; point: string }[] {
  const out: { root: string; point: string }[] = [];
  for (const line of mountinfo.split('\n')) {
    // "36 35 0:30 / /sys/fs/cgroup/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu": root and point are
    // fields 4 and 5; optional fields follow until " - ", then the file system type, the source and the super options.
    const [before, after] = line.split(' - ');
    if (!after) continue;
    const [, , , root, point] = before.split(' ');
    const [type, , options = ''] = after.split(' ');
    if (v2 ? type === 'cgroup2' : type === 'cgroup' && options.split(',').includes('cpu')) out.push({ root: unescape(root), point: unescape(point) });
  }
  return out;
}

/** This process's groups that can hold a CPU quota, from /proc/self/cgroup and /proc/self/mountinfo; empty where they cannot be read. */
export function ownCpuCgroups(read: Read = readText): CpuCgroup[] {
  let mountinfo: string;
  let cgroups: string;
  try {
    mountinfo = read('/proc/self/mountinfo');
    cgroups = read('/proc/self/cgroup');
  } catch {
    return [];
  }
  const mounts = { v1: mountsOf(mountinfo, false), v2: mountsOf(mountinfo, true) };
  const out: CpuCgroup[] = [];
  for (const line of cgroups.split('\n')) {
    // "0::/path" is v2; "4:cpu,cpuacct:/path" a v1 hierarchy.
    const m = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (!m) continue;
    const v2 = m[1] === '0' && m[2] === '';
    if (!v2 && !m[2].split(',').includes('cpu')) continue;
    // A group outside this cgroup namespace ("/../x") is not under any mount here: nothing is read for it.
    if (m[3].split('/').includes('..')) continue;
    const group = path.posix.normalize(m[3]);
    // The mount that shows this group: its root is the group or an ancestor (a container sees its own group as the root).
    const mount = mounts[v2 ? 'v2' : 'v1'].find((mnt) => within(mnt.root, group));
    if (!mount) continue;
    out.push({ dir: path.posix.join(mount.point, path.posix.relative(mount.root, group)), mountPoint: mount.point, v2 });
  }
  return out;
}

/** One cgroup directory's limit in cores, or null where it sets none, has no such file or holds no number. */
function limitIn(read: Read, dir: string, v2: boolean): number | null {
  try {
    let limit: number;
    if (v2) {
      const [quota, period] = read(path.posix.join(dir, 'cpu.max')).trim().split(/\s+/);
      if (quota === 'max') return null;
      limit = Number(quota) / Number(period);
    } else {
      limit = Number(read(path.posix.join(dir, 'cpu.cfs_quota_us')).trim()) / Number(read(path.posix.join(dir, 'cpu.cfs_period_us')).trim());
    }
    return Number.isFinite(limit) && limit > 0 ? limit : null;
  } catch {
    return null;
  }
}

/** The lowest CPU quota over `groups` and their ancestors up to each mount point, in cores; null when there is none. */
export function quotaOf(groups: CpuCgroup[], read: Read = readText): number | null {
  let lowest = Infinity;
  for (const { dir, mountPoint, v2 } of groups) {
    for (let d = dir; within(mountPoint, d); d = path.posix.dirname(d)) {
      const limit = limitIn(read, d, v2);
      if (limit !== null) lowest = Math.min(lowest, limit);
      if (d === mountPoint) break;
    }
  }
  return Number.isFinite(lowest) ? lowest : null;
}

/**
 * A reader of the quota for sampling it again and again: the groups are found
 * once (parsing mountinfo), and each call reads only their limit files. A
 * process moved to another cgroup while it runs is not followed, nor are
 * groups that could not be read at the start (then it reads no quota).
 */
export function quotaReader(read: Read = readText): () => number | null {
  const groups = ownCpuCgroups(read);
  return () => quotaOf(groups, read);
}

let ownReader: (() => number | null) | undefined;

/** This process's quota reader, made at its first use: the default thread count at start-up and the free-core monitor share its groups. */
export function ownQuotaReader(): () => number | null {
  ownReader ??= quotaReader();
  return ownReader;
}

/**
 * The cores a job may use: the CPUs available to the process, at most its
 * quota rounded to the nearest whole core, at least 1. Measured with
 * whisper-cli in a real cgroup (docs/performance.md, "Sharing the CPU"): under
 * 1 core one thread is faster than two, at 1.25 they are even, at 1.5 two
 * are faster.
 */
export function usableCores(cpus: number, quota: number | null): number {
  return Math.max(1, Math.min(cpus, quota === null ? cpus : Math.round(quota)));
}
