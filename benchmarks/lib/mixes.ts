// The request mixes of the load scenarios: when each request is sent and how
// long its clip is. Every contender gets the same schedule (Poisson arrivals
// are drawn from a fixed seed), so rounds differ only by the machine's drift.

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

/** Mulberry32: a small seeded generator, so a Poisson schedule is the same in every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Clip lengths of the Poisson mixes and how often each is drawn. */
export const POISSON_LENGTHS: { seconds: number; weight: number }[] = [
  { seconds: 5, weight: 0.7 },
  { seconds: 30, weight: 0.25 },
  { seconds: 120, weight: 0.05 },
];

/**
 * `count` requests with exponential gaps at `load` x capacity, capacity
 * being 1 / (mean service time) for the drawn lengths, from the contender's
 * own one-at-a-time times (`serviceMs` per clip length).
 */
export function poisson(load: number, count: number, serviceMs: Record<number, number>, seed = 20261123): Arrival[] {
  const random = seeded(seed);
  const meanServiceMs = POISSON_LENGTHS.reduce((sum, l) => sum + l.weight * serviceMs[l.seconds], 0);
  const meanGapMs = meanServiceMs / load;
  const out: Arrival[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    let pick = random();
    const length = POISSON_LENGTHS.find((l) => (pick -= l.weight) < 0) ?? POISSON_LENGTHS[0];
    out.push({ atMs: Math.round(at), seconds: length.seconds });
    at += -Math.log(1 - random()) * meanGapMs;
  }
  return out;
}

/** Every mix of a load round; `serviceMs` sets the Poisson rates. */
export function mixes(serviceMs: Record<number, number>, poissonCount: number): Mix[] {
  return [
    { name: 'long first', description: '2 x 120 s at once, then 500 ms later 6 x 5 s', arrivals: [...burst(2, 120), ...burst(6, 5, 500)] },
    { name: 'short first', description: '6 x 5 s at once, then 500 ms later 2 x 120 s', arrivals: [...burst(6, 5), ...burst(2, 120, 500)] },
    { name: 'all short', description: '8 x 5 s at once', arrivals: burst(8, 5) },
    { name: 'all long', description: '3 x 120 s at once', arrivals: burst(3, 120) },
    {
      name: 'poisson 70 %',
      description: `${poissonCount} requests, Poisson arrivals at 70 % of capacity, lengths 5/30/120 s drawn 70/25/5 %`,
      arrivals: poisson(0.7, poissonCount, serviceMs),
    },
    {
      name: 'poisson 90 %',
      description: `${poissonCount} requests, Poisson arrivals at 90 % of capacity, lengths 5/30/120 s drawn 70/25/5 %`,
      arrivals: poisson(0.9, poissonCount, serviceMs, 20261124),
    },
  ];
}
