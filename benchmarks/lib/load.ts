// One round of one mix against one contender, on loopback, bounded in count,
// and the figures a reader needs to see both sides of a scheduling trade.
import type { Mix } from './mixes';
import { HttpError, procRss, resetPeakRss, type Contender, type Reply } from './servers';
import { median } from './stats';

export interface RequestResult {
  seconds: number;
  atMs: number;
  /** Latency from send to answer; null when the request was refused. */
  ms: number | null;
  /** HTTP status of a refused request. */
  status?: number;
}

export interface MixRound {
  mix: string;
  contender: string;
  requests: RequestResult[];
  /** First send to last answer, seconds. */
  makespanS: number;
  /** Peak RSS of the contender's process during the round, sampled every 200 ms. */
  peakRssBytes: number;
}

/** Sends the mix's requests at their times; `onReply` sees every answer (the output check). */
export async function runMix(c: Contender, mix: Mix, clips: Record<number, Buffer>, onReply: (seconds: number, reply: Reply) => void): Promise<MixRound> {
  // The kernel's peak for this round alone (VmHWM after a reset), with 200-ms samples as a floor where that is unavailable.
  resetPeakRss(c.pid);
  let peak = c.rssBytes();
  const sampler = setInterval(() => (peak = Math.max(peak, c.rssBytes())), 200);
  const t0 = performance.now();
  const requests = await Promise.all(mix.arrivals.map(async ({ atMs, seconds }): Promise<RequestResult> => {
    await new Promise((r) => setTimeout(r, atMs));
    try {
      const reply = await c.transcribe(clips[seconds]);
      onReply(seconds, reply);
      return { seconds, atMs, ms: reply.ms };
    } catch (err) {
      // A refusal, or no answer at all (status 0): counted, and the run goes on.
      return { seconds, atMs, ms: null, status: err instanceof HttpError ? err.status : 0 };
    }
  }));
  clearInterval(sampler);
  peak = Math.max(peak, procRss(c.pid, 'VmHWM'));
  return { mix: mix.name, contender: c.name, requests, makespanS: (performance.now() - t0) / 1000, peakRssBytes: peak };
}

/** Per-round figures; a "max" is a maximum of the few values a round has, never a percentile. */
export interface RoundFigures {
  shortP50: number | null;
  shortMax: number | null;
  longP50: number | null;
  longMax: number | null;
  meanMs: number;
  makespanS: number;
  throughput: number;
  refused: number;
  peakRssMb: number;
}

/** Short: 30 s or less (what the scheduler never pauses); long: over 30 s. */
export function figures(round: MixRound): RoundFigures {
  const done = round.requests.filter((r) => r.ms !== null) as (RequestResult & { ms: number })[];
  const short = done.filter((r) => r.seconds <= 30).map((r) => r.ms);
  const long = done.filter((r) => r.seconds > 30).map((r) => r.ms);
  const audio = done.reduce((sum, r) => sum + r.seconds, 0);
  return {
    shortP50: short.length ? median(short) : null,
    shortMax: short.length ? Math.max(...short) : null,
    longP50: long.length ? median(long) : null,
    longMax: long.length ? Math.max(...long) : null,
    meanMs: done.reduce((sum, r) => sum + r.ms, 0) / Math.max(1, done.length),
    makespanS: round.makespanS,
    throughput: audio / round.makespanS,
    refused: round.requests.length - done.length,
    peakRssMb: round.peakRssBytes / 1e6,
  };
}
