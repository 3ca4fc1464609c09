// How many cores other processes leave free, so a job's thread count can
// follow them. ggml's graph threads meet at a barrier after every node: when
// another busy process holds one of two cores, the thread it displaces holds
// up the others at every node, and a 2-thread job took 2.5-3x its time where
// one thread on the free core takes about 1.6x (docs/performance.md). Read
// from /proc (Linux): the whole machine's busy time minus this process's own,
// over the last sampling interval. Elsewhere, every core counts as free.
import { readFileSync } from 'node:fs';
import os from 'node:os';

export interface CpuSample {
  /** Wall time of the sample, ms. */
  at: number;
  /** Busy CPU time of the whole machine (all but idle and iowait), seconds. */
  busy: number;
  /** This process's own CPU time (user + system), seconds. */
  own: number;
}

const TICK = 100; // USER_HZ: /proc reports times in 1/100 s on Linux

/** Reads one sample, or null where /proc is not there. */
export function readCpuSample(now = Date.now()): CpuSample | null {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal
    const busy = cpu.reduce((s, v, i) => (i === 3 || i === 4 || i > 7 ? s : s + v), 0) / TICK;
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name (which may hold spaces), from field 3 on: utime is field 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const own = (Number(fields[11]) + Number(fields[12])) / TICK;
    return { at: now, busy, own };
  } catch {
    return null;
  }
}

/**
 * Cores left free by other processes between two samples: the cores, less the
 * busy time that was not ours over the wall time between them, never below 0.
 */
export function freeCoresBetween(a: CpuSample, b: CpuSample, cores: number): number {
  const wall = (b.at - a.at) / 1000;
  if (wall <= 0) return cores;
  const others = Math.max(0, (b.busy - a.busy - (b.own - a.own)) / wall);
  return Math.max(0, cores - others);
}

/**
 * Threads for a job that may use `wanted`: one per core others leave free
 * (rounded, so a process busy a fifth of the time does not cost a thread),
 * at least one.
 */
export function threadsForFreeCores(wanted: number, freeCores: number): number {
  return Math.max(1, Math.min(wanted, Math.round(freeCores)));
}

/** Samples /proc every `intervalMs` in the background; freeCores() is the latest interval's reading. */
export class FreeCoresMonitor {
  private last: CpuSample | null;
  private free: number;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(private readonly cores = os.availableParallelism(), intervalMs = 1000) {
    this.free = cores;
    this.last = readCpuSample();
    if (this.last) {
      this.timer = setInterval(() => this.sample(), intervalMs);
      this.timer.unref();
    }
  }

  private sample(): void {
    const next = readCpuSample();
    if (!next || !this.last) return;
    this.free = freeCoresBetween(this.last, next, this.cores);
    this.last = next;
  }

  freeCores(): number {
    return this.free;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
