// Prometheus metrics (prom-client), one registry per server. Counters and
// histograms are fed where the events happen (the request log, the
// transcription route, the cloud service, the local engine); gauges of the
// scheduler's state are read at scrape time, so they cannot drift from it.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds, from a 10-ms decode to a 20-minute transcription. */
const SECONDS_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200];
/** Wall seconds per audio second: 0.05 is 20x faster than real time. */
const RTF_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 5];

export type AbortReason = 'client' | 'deadline' | 'shutdown';
export type SpillReason = 'queue_full' | 'model_loading' | 'predicted_wait';

/** What the local scheduler reports at scrape time (its SchedulerStats has these fields and more). */
export interface QueueReading {
  running: number;
  paused: number;
  waiting: number;
  preemptions: number;
}

export class Metrics {
  readonly registry = new Registry();

  readonly requests = new Counter({
    name: 'stt_http_requests_total', help: 'HTTP requests by route (the matched pattern), method and status', labelNames: ['route', 'method', 'status'] as const, registers: [this.registry],
  });
  readonly decodeSeconds = new Histogram({
    name: 'stt_upload_decode_seconds', help: 'Upload parsed to PCM: the wait for a decode slot and WAV decoding', buckets: SECONDS_BUCKETS, registers: [this.registry],
  });
  readonly queueSeconds = new Histogram({
    name: 'stt_queue_wait_seconds', help: 'Time a local job waited for the scheduler', buckets: SECONDS_BUCKETS, registers: [this.registry],
  });
  readonly sttSeconds = new Histogram({
    name: 'stt_transcription_seconds', help: 'Speech-to-text time per request by runtime, queue wait included', labelNames: ['runtime'] as const, buckets: SECONDS_BUCKETS, registers: [this.registry],
  });
  readonly audioSeconds = new Counter({
    name: 'stt_audio_seconds_total', help: 'Seconds of audio transcribed, by runtime', labelNames: ['runtime'] as const, registers: [this.registry],
  });
  readonly realTimeFactor = new Histogram({
    name: 'stt_real_time_factor', help: 'Speech-to-text seconds per audio second, by runtime', labelNames: ['runtime'] as const, buckets: RTF_BUCKETS, registers: [this.registry],
  });
  readonly aborts = new Counter({
    name: 'stt_aborts_total', help: 'Transcriptions stopped before their end: the client left, the deadline passed, or shutdown', labelNames: ['reason'] as const, registers: [this.registry],
  });
  readonly providerCalls = new Counter({
    name: 'stt_provider_calls_total', help: 'Calls to cloud providers by provider and outcome (HTTP status, or timeout/connection/refused_url)', labelNames: ['provider', 'status'] as const, registers: [this.registry],
  });
  readonly providerErrors = new Counter({
    name: 'stt_provider_errors_total', help: 'Failed cloud provider calls by provider and reason', labelNames: ['provider', 'reason'] as const, registers: [this.registry],
  });
  readonly modelLoadSeconds = new Gauge({
    name: 'stt_model_load_seconds', help: 'How long the last load of each local runtime took', labelNames: ['runtime'] as const, registers: [this.registry],
  });
  readonly spills = new Counter({
    name: 'stt_spills_total', help: 'Local requests sent to the spill-over cloud target instead, by why', labelNames: ['reason'] as const, registers: [this.registry],
  });
  readonly realtimeSessions = new Gauge({
    name: 'stt_realtime_sessions', help: 'Realtime transcription sessions open', registers: [this.registry],
  });
  readonly realtimeTurns = new Counter({
    name: 'stt_realtime_turns_total', help: 'Realtime turns committed, by what ended them: server_vad (the speech stopped), commit (the client), buffer_limit (speech past the buffer)', labelNames: ['ended_by'] as const, registers: [this.registry],
  });
  readonly wyomingConnections = new Gauge({
    name: 'stt_wyoming_connections', help: 'Wyoming clients connected', registers: [this.registry],
  });
  readonly wyomingTranscripts = new Counter({
    name: 'stt_wyoming_transcripts_total', help: 'Wyoming utterances, by how they ended: transcribed, refused (the audio or the routing: an error event), failed (the engine)', labelNames: ['outcome'] as const, registers: [this.registry],
  });
  readonly realtimeDrafts = new Counter({
    name: 'stt_realtime_drafts_total', help: 'Drafts decoded of realtime turns still being heard (for their deltas)', registers: [this.registry],
  });
  readonly realtimeDraftsRevised = new Counter({
    name: 'stt_realtime_drafts_revised_total', help: 'Realtime turns whose transcript departed from the deltas their drafts had sent (.completed carries the transcript)', registers: [this.registry],
  });
  readonly rateLimited = new Counter({
    name: 'stt_rate_limited_total', help: 'Requests refused with 429 by which per-key limit', labelNames: ['limit'] as const, registers: [this.registry],
  });

  readonly jobsFinished = new Counter({
    name: 'stt_batch_jobs_finished_total', help: 'Jobs of the jobs API this process ended, by outcome (done, failed)', labelNames: ['outcome'] as const, registers: [this.registry],
  });
  readonly jobCallbacks = new Counter({
    name: 'stt_batch_job_callbacks_total', help: 'Job callback attempts this process made, by outcome (delivered, retry, given_up)', labelNames: ['outcome'] as const, registers: [this.registry],
  });

  /** The jobs API's queue, read from the database at scrape time (every replica's jobs). */
  watchJobs(counts: () => Promise<{ queued: number; running: number; oldestQueuedMs: number | null }>): void {
    const registers = [this.registry];
    let reading: ReturnType<typeof counts> | null = null;
    let last = { queued: 0, running: 0, oldestQueuedMs: null as number | null };
    // Both gauges read one query per scrape; the database out of reach keeps the last reading rather than fail the scrape.
    const read = () => (reading ??= counts().then((c) => (last = c), () => last).finally(() => setImmediate(() => (reading = null))));
    new Gauge({
      name: 'stt_batch_jobs', help: 'Jobs of the jobs API queued and running, by status (every replica\'s)', labelNames: ['status'] as const, registers,
      async collect() {
        const c = await read();
        this.set({ status: 'queued' }, c.queued);
        this.set({ status: 'running' }, c.running);
      },
    });
    new Gauge({
      name: 'stt_batch_job_oldest_queued_seconds', help: 'How long the oldest queued job of the jobs API has waited (0 when none waits)', registers,
      async collect() {
        this.set(((await read()).oldestQueuedMs ?? 0) / 1000);
      },
    });
  }

  constructor(scheduler: () => QueueReading) {
    const registers = [this.registry];
    new Gauge({
      name: 'stt_queue_depth', help: 'Local jobs waiting for the scheduler', registers,
      collect() {
        this.set(scheduler().waiting);
      },
    });
    new Gauge({
      name: 'stt_jobs', help: 'Local jobs started and not finished, by state', labelNames: ['state'] as const, registers,
      collect() {
        const s = scheduler();
        this.set({ state: 'running' }, s.running - s.paused);
        this.set({ state: 'paused' }, s.paused);
      },
    });
    new Counter({
      name: 'stt_preemptions_total', help: 'Long local jobs paused for shorter ones', registers,
      collect() {
        this.reset();
        this.inc(scheduler().preemptions);
      },
    });
    // process_resident_memory_bytes, nodejs_eventloop_lag_seconds and the rest of Node's own.
    collectDefaultMetrics({ register: this.registry });
  }

  /** After a transcription: where its time went and how fast the runtime ran. */
  recordTranscription(runtime: string, t: { decodeMs?: number; queueMs?: number; sttMs: number; audioSeconds: number }): void {
    if (t.decodeMs !== undefined) this.decodeSeconds.observe(t.decodeMs / 1000);
    if (t.queueMs !== undefined) this.queueSeconds.observe(t.queueMs / 1000);
    this.sttSeconds.observe({ runtime }, t.sttMs / 1000);
    this.audioSeconds.inc({ runtime }, t.audioSeconds);
    // Compute time only: a job's wait in the queue says nothing of the runtime's speed.
    if (t.audioSeconds > 0) this.realTimeFactor.observe({ runtime }, (t.sttMs - (t.queueMs ?? 0)) / 1000 / t.audioSeconds);
  }
}
