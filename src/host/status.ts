// GET /admin/status: what the host sees at a glance.
import type { Services } from '../services';
import type { AdminStatus } from '../admin-api';

/** The parts of the running server /admin/status reads. */
export type StatusParts = Pick<Services, 'cloud' | 'config' | 'db' | 'firstStart' | 'jobs' | 'local' | 'providers' | 'replica' | 'serviceId' | 'startedAt' | 'stt' | 'version'>;

export async function hostStatus(s: StatusParts): Promise<AdminStatus> {
  const routing = await s.stt.current();
  const q = s.local.scheduler.stats();
  const jobs = await s.jobs.store.counts();
  return {
    serviceId: s.serviceId,
    version: s.version,
    uptimeSeconds: Math.floor((Date.now() - s.startedAt) / 1000),
    mode: routing.mode,
    publicModel: await s.stt.publicModel(),
    local: s.local.status(),
    queue: { running: q.running, waiting: q.waiting, capacity: q.capacity },
    jobs: { queued: jobs.queued, running: jobs.running, oldestQueuedSeconds: jobs.oldestQueuedMs === null ? null : Math.floor(jobs.oldestQueuedMs / 1000) },
    system: { threads: s.config.threads, rssBytes: process.memoryUsage().rss },
    providers: (await s.providers.list()).map((p) => ({ id: p.id, enabled: p.enabled, lastError: s.cloud.failures.get(p.id) ?? null })),
    firstStart: s.firstStart,
    ...(s.db.shared && { replicas: await s.replica.store.live(s.replica.id) }),
    database: { backend: s.db.shared ? 'postgres' : 'sqlite', notifications: s.db.listening },
  };
}
