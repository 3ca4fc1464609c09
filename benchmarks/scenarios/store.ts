// What the shared store (PostgreSQL, several replicas) adds to a request's
// latency against the SQLite default: two servers of ours, one on each
// backend, no model loaded, asked in turn (one request to each, alternating
// which goes first) so drift hits both alike. Three requests: GET /v1/models
// with a key already seen (PostgreSQL answers from the key cache), with a key
// never seen before (one lookup), and an upload refused for a missing file
// by a key with a request-rate limit (the rate window: in memory with SQLite,
// an upsert in PostgreSQL; and the usage upsert after the answer).
import { TempPostgres } from '../../fixtures';
import { startOurs } from '../lib/servers';
import { median, percentile } from '../lib/stats';
import type { StoreResult } from '../lib/bench-types';
import type { ScenarioType } from './context';

const ADMIN = 'bench-admin-key-0123456789';
const WARMUP = 20;

type Server = Awaited<ReturnType<typeof startOurs>>;

async function createKeys(server: Server, count: number, body: Record<string, unknown> = {}): Promise<string[]> {
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await fetch(`${server.url}/admin/api-keys`, {
      method: 'POST', headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: `bench-${i}`, ...body }),
    });
    if (res.status !== 201) throw new Error(`creating a key: ${res.status}`);
    keys.push(((await res.json()) as { key: string }).key);
  }
  return keys;
}

/** Milliseconds of one request, checked for the status it must get. */
async function timed(url: string, init: RequestInit, status: number): Promise<number> {
  const t = process.hrtime.bigint();
  const res = await fetch(url, init);
  await res.arrayBuffer();
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (res.status !== status) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status}, expected ${status}`);
  return ms;
}

export const store: ScenarioType = {
  phase: 'alone',
  async run({ bench }) {
    const requests = bench.quick ? 100 : 400;
    const pg = await TempPostgres.create();
    const servers: Server[] = [];
    try {
      servers.push(await startOurs({ modelFile: '', threads: bench.threads, fallback: false, runtime: null }));
      servers.push(await startOurs({ modelFile: '', threads: bench.threads, fallback: false, runtime: null, databaseUrl: await pg.newDatabase() }));
      const fresh = await Promise.all(servers.map((s) => createKeys(s, requests + WARMUP)));
      const limited = await Promise.all(servers.map(async (s) => (await createKeys(s, 1, { requestsPerMinute: 1_000_000 }))[0]));
      const kinds = {
        'GET /v1/models, key seen before': (s: Server) => timed(`${s.url}/v1/models`, { headers: { Authorization: `Bearer ${s.apiKey}` } }, 200),
        'GET /v1/models, key never seen': (s: Server, i: number) => timed(`${s.url}/v1/models`, { headers: { Authorization: `Bearer ${fresh[servers.indexOf(s)][i]}` } }, 200),
        'POST transcription refused (no file), rate-limited key': (s: Server) =>
          timed(`${s.url}/v1/audio/transcriptions`, { method: 'POST', headers: { Authorization: `Bearer ${limited[servers.indexOf(s)]}` }, body: new FormData() }, 400),
      };
      const rows: StoreResult['rows'] = [];
      for (const [request, send] of Object.entries(kinds)) {
        const ms: [number[], number[]] = [[], []];
        for (let i = 0; i < WARMUP + requests; i++) {
          const order = i % 2 === 0 ? [0, 1] : [1, 0];
          for (const b of order) {
            const t = await send(servers[b], i);
            if (i >= WARMUP) ms[b].push(t);
          }
        }
        rows.push({ request, sqliteMs: { median: median(ms[0]), p90: percentile(ms[0], 90) }, postgresMs: { median: median(ms[1]), p90: percentile(ms[1], 90) } });
        bench.log(`store: ${request}: SQLite ${median(ms[0]).toFixed(2)} ms, PostgreSQL ${median(ms[1]).toFixed(2)} ms`);
      }
      return { store: { requests, rows } };
    } finally {
      for (const s of servers) await s.stop();
      await pg.destroy();
    }
  },
};
