// How many cores other processes leave free, so a job's decoder threads can
// follow them. ggml's graph threads meet at a barrier after every node: when
// another busy process holds one of two cores, the thread it displaces holds
// up the others at every node. The decoder's graphs are hundreds of nodes of
// microseconds per token, so it loses most there; the encoder's large
// products share their chunks out and keep both threads (docs/performance.md). Read
// from /proc (Linux): the busy time of the CPUs this process may run on (its
// affinity, as a container's cpuset sets it) minus this process's own, over
// the last sampling interval; steal time (a VM's host running others) counts
// as busy. A container's CPU quota (cpu-quota.ts) caps the free cores too,
// read again at every sample (only the limit files: the groups are found
// once), so a quota lowered by `docker update --cpus` is followed without a
// restart; the quota also caps the default
// STT_THREADS, read at start (a raised quota needs a restart).
// Elsewhere, every core counts as free.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { ownQuotaReader } from './cpu-quota';

export interface CpuSample {
  /** Wall time of the sample, ms. */
  at: number;
  /** Busy CPU time of the whole machine (all but idle and iowait), seconds. */
  busy: number;
  /** This process's own CPU time (user + system), seconds. */
  own: number;
}

const TICK = 100; // USER_HZ: /proc reports times in 1/100 s on Linux

/** The CPUs in a list such as "0-3,6" (/proc/self/status, Cpus_allowed_list). */
export function parseCpuList(list: string): Set<number> {
  const out = new Set<number>();
  for (const part of list.trim().split(',').filter(Boolean)) {
    const [lo, hi = lo] = part.split('-').map(Number);
    for (let c = lo; c <= hi; c++) out.add(c);
  }
  return out;
}

/** Reads one sample, or null where /proc is not there. */
export function readCpuSample(now = Date.now()): CpuSample | null {
  try {
    const allowedList = /^Cpus_allowed_list:\s*(.*)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    const allowed = allowedList ? parseCpuList(allowedList) : null;
    let busy = 0;
    for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
      const m = /^cpu(\d+)\s+(.*)$/.exec(line);
      if (!m || (allowed && !allowed.has(Number(m[1])))) continue;
      // user nice system idle iowait irq softirq steal (guest time is inside user already)
      busy += m[2].trim().split(/\s+/).slice(0, 8).map(Number).reduce((s, v, i) => (i === 3 || i === 4 ? s : s + v), 0);
    }
    busy /= TICK;
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name (which may hold spaces), from field 3 on: utime is field 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const own = (Number(fields[11]) + Number(fields[12])) / TICK;
    return { at: now, busy, own };
  } catch {
    return null;
  }
}

/** Cores' worth of CPU time other processes used between two samples (not floored: tick rounding may make it slightly negative). */
export function othersBusyBetween(a: CpuSample, b: CpuSample): number {
  const wall = (b.at - a.at) / 1000;
  return wall <= 0 ? 0 : (b.busy - a.busy - (b.own - a.own)) / wall;
}

/**
 * Cores left free by other processes between two samples: the cores less the
 * others' use, never below 0, and never over this process's CPU quota (in
 * cores; null: none). The quota does not take the others' use off: they may
 * be using CPUs the quota would not have let us fill.
 */
export function freeCoresBetween(a: CpuSample, b: CpuSample, cores: number, quota: number | null = null): number {
  return Math.max(0, Math.min(quota ?? Infinity, cores - Math.max(0, othersBusyBetween(a, b))));
}

/**
 * Threads for a job whose slot's share is `share` of `threads` in all:
 * its share of the free cores, one thread per core (rounded, so a process
 * busy a fifth of the time does not cost a thread), at least one.
 */
export function threadsForFreeCores(share: number, freeCores: number, threads = share): number {
  return Math.max(1, Math.min(share, Math.round((freeCores * share) / threads)));
}

/**
 * The scheduler's decoderThreadsFor for a host of `threads` in all: a job's
 * decoder gets its slot's share of the cores `monitor` last saw free.
 */
export function decoderThreadsFollowing(monitor: { freeCores(): number }, threads: number): (share: number) => number {
  return (share) => threadsForFreeCores(share, monitor.freeCores(), threads);
}

/** Samples /proc (and the CPU quota) every `intervalMs` in the background; freeCores() is the latest interval's reading. */
export class FreeCoresMonitor {
  private last: CpuSample | null;
  private free: number;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly cores = os.availableParallelism(),
    intervalMs = 1000,
    private readonly readQuota: () => number | null = ownQuotaReader(),
  ) {
    this.free = Math.min(cores, readQuota() ?? Infinity);
    this.last = readCpuSample();
    if (this.last) {
      this.timer = setInterval(() => this.sample(), intervalMs);
      this.timer.unref();
    }
  }

  private sample(): void {
    const next = readCpuSample();
    if (!next || !this.last) return;
    this.free = freeCoresBetween(this.last, next, this.cores, this.readQuota());
    this.last = next;
  }

  freeCores(): number {
    return this.free;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
