// The request mixes of the load scenarios: when each request is sent and how
// long its clip is. Every contender gets the same schedule (Poisson arrivals
// are drawn from a fixed seed), so rounds differ only by the machine's drift.
import { seededRandom } from './stats';

export interface Arrival {
  /** Milliseconds after the round starts. */
  atMs: number;
  /** Clip length in seconds (one of the benchmark's clips). */
  seconds: number;
}

export interface Mix {
  name: string;
  /** One line for the report. */
  description: string;
  arrivals: Arrival[];
}

const burst = (count: number, seconds: number, atMs = 0): Arrival[] => Array.from({ length: count }, () => ({ atMs, seconds }));


/**
 * The Poisson mixes' requests: a fixed multiset of lengths (two long clips,
 * so long-clip figures and preemption exist), shuffled with a seed; the same
 * for both loads.
 */
export const POISSON_LENGTHS = [5, 5, 5, 5, 5, 5, 5, 30, 30, 30, 120, 120];

/**
 * Exponential gaps at `load` x capacity, capacity being what one-at-a-time
 * service (`serviceMs` per clip length) gets through: the gaps are rescaled
 * so the offered load over the schedule is exactly `load` for the lengths drawn.
 */
export function poisson(load: number, serviceMs: Record<number, number>, seed: number): Arrival[] {
  const random = seededRandom(seed);
  const lengths = [...POISSON_LENGTHS];
  for (let i = lengths.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [lengths[i], lengths[j]] = [lengths[j], lengths[i]];
  }
  const gaps = lengths.map(() => -Math.log(1 - random()));
  const totalServiceMs = lengths.reduce((sum, s) => sum + serviceMs[s], 0);
  // The last request's gap would fall after the schedule: n - 1 gaps span it.
  const span = gaps.slice(0, -1).reduce((a, g) => a + g, 0);
  const scale = totalServiceMs / load / span;
  const out: Arrival[] = [];
  let at = 0;
  lengths.forEach((seconds, i) => {
    out.push({ atMs: Math.round(at), seconds });
    at += gaps[i] * scale;
  });
  return out;
}

/** Every mix of a load round; `serviceMs` sets the Poisson rates. */
export function mixes(serviceMs: Record<number, number>): Mix[] {
  return [
    { name: 'long first', description: '2 x 120 s at once, then 500 ms later 6 x 5 s', arrivals: [...burst(2, 120), ...burst(6, 5, 500)] },
    { name: 'short first', description: '6 x 5 s at once, then 500 ms later 2 x 120 s', arrivals: [...burst(6, 5), ...burst(2, 120, 500)] },
    { name: 'all short', description: '8 x 5 s at once', arrivals: burst(8, 5) },
    { name: 'all long', description: '3 x 120 s at once', arrivals: burst(3, 120) },
    {
      name: 'poisson 70 %',
      description: `${POISSON_LENGTHS.length} requests (7 x 5 s, 3 x 30 s, 2 x 120 s, seeded order), Poisson arrivals offering 70 % of one-at-a-time capacity`,
      arrivals: poisson(0.7, serviceMs, 20261123),
    },
    {
      name: 'poisson 90 %',
      description: `the same ${POISSON_LENGTHS.length} requests, Poisson arrivals offering 90 % of capacity`,
      arrivals: poisson(0.9, serviceMs, 20261123),
    },
  ];
}
