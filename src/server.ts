// Entry point: validated config, services, HTTP server, graceful shutdown.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig, ConfigError, wantedThreadpoolSize, type Config } from './config';
import { createLogger, type Logger } from './log';
import { createServices, closeServices, type Services } from './services';
import { createApp } from './app';
import { limitConnections, timeoutOptions } from './http/connections';
import { firstStart, type FirstStart } from './first-start';
import { abortAllJobs } from './native';
import { replicaAddress, startHeartbeat } from './host/heartbeat';
import { attachRealtime, isWebSocketUpgrade } from './http/realtime/upgrade';
import { startWyoming, type WyomingServer } from './wyoming/server';

/** After the shutdown timeout, how long aborted jobs get to return and their requests to be answered. */
const ABORT_GRACE_MS = 2000;

export interface RunningServer {
  url: string;
  port: number;
  services: Services;
  firstStart: FirstStart;
  /** The Wyoming server's port, when STT_WYOMING_PORT is set. */
  wyomingPort: number | null;
  close(): Promise<void>;
}

export async function startServer(config: Config, logger: Logger): Promise<RunningServer> {
  const services = await createServices(config, logger);
  const app = createApp(services);
  // Upgrades other than WebSocket reach the app as plain requests where Node
  // supports telling them apart (22.21, 24.9); on Node 20 the gate refuses them.
  const options = { ...timeoutOptions(config), shouldUpgradeCallback: isWebSocketUpgrade } as http.ServerOptions;
  const server = http.createServer(options, app.callback());
  limitConnections(server, config);
  const realtime = attachRealtime(server, services);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  logger.info({ url, port, dataDir: config.dataDir, threads: config.threads, parallel: config.parallel }, 'listening');
  const wyoming: WyomingServer | null = config.wyomingPort === null ? null : await startWyoming(services, config.wyomingPort, config.wyomingHost);
  const stopHeartbeat = services.db.shared ? startHeartbeat(services, replicaAddress(config.host, port)) : null;
  const first = await firstStart(services);
  announceSecrets(services, first, logger);

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      logger.info('shutting down: no new connections, finishing in-flight work');
      // A routing change arriving now (the admin API, the routing poll, another replica) is stored, not loaded:
      // the next start loads it.
      services.local.refuseLoads();
      // A job is not in-flight work a client waits on: it goes back to the queue, to resume from its last piece.
      await services.jobs.runner.stop();
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // Realtime sessions take no new turns; each closes (1001) once its committed turns are answered.
      const sessionsEnded = Promise.all([realtime.close(), wyoming?.close()]);
      const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), config.shutdownTimeoutMs).unref());
      const finished = await Promise.race([Promise.all([stopped, services.local.scheduler.idle(), sessionsEnded]), timeout]);
      if (finished === 'timeout') {
        // Past the timeout: abort what is left (queued, running, paused, even a
        // job whose client is long gone), give the aborted requests a moment to
        // get their 503, then close whatever is still open.
        const left = services.local.scheduler.stats();
        logger.warn({ running: left.running, waiting: left.waiting }, 'shutdown timeout: aborting the jobs left');
        services.shuttingDown.abort();
        services.local.scheduler.abortWaiting();
        abortAllJobs();
        // The grace covers the live sessions too: their aborted turns are answered with an error, then each
        // sends shutting_down and closes 1001; only those still open after it are cut below.
        const grace = new Promise<void>((resolve) => setTimeout(resolve, ABORT_GRACE_MS).unref());
        await Promise.race([Promise.all([stopped, services.local.scheduler.idle(), sessionsEnded]), grace]);
      }
      server.closeAllConnections();
      realtime.terminate();
      wyoming?.terminate();
      await stopHeartbeat?.();
      await closeServices(services);
      logger.info('stopped');
    })());
  return { url, port, services, firstStart: first, wyomingPort: wyoming?.port ?? null, close };
}

/**
 * Shows a generated admin key and a first API key once. stdout also carries
 * the JSON logs, which log shippers keep: the keys are printed only to a
 * person at a terminal; otherwise the log names the 0600 files that hold them.
 */
function announceSecrets(services: Services, first: FirstStart, logger: Logger): void {
  const shown: string[] = [];
  if (services.adminKey.generated) {
    shown.push(`  Admin key (also in ${services.adminKey.file}):\n  ${services.adminKey.value}`);
    logger.warn({ file: services.adminKey.file }, process.stdout.isTTY
      ? 'generated a new admin key (printed once below)'
      : 'generated a new admin key; read it from the file (mode 0600), it is not printed because stdout is not a terminal');
  }
  if (first.apiKey) {
    shown.push(`  First API key, for /v1 (also in ${first.apiKey.file}):\n  ${first.apiKey.key}`);
    logger.warn({ file: first.apiKey.file }, process.stdout.isTTY
      ? 'created a first API key (printed once below)'
      : 'created a first API key; read it from the file (mode 0600), it is not printed because stdout is not a terminal');
  }
  if (shown.length && process.stdout.isTTY) process.stdout.write(`\n${shown.join('\n\n')}\n\n`);
}

async function main(): Promise<void> {
  // Size libuv's pool before its first use, so that every slot and as many
  // paused jobs hold a thread with two to spare (see config.ts). A size the
  // host set is kept, and refused by loadConfig if it is too small.
  if (!process.env.UV_THREADPOOL_SIZE) {
    const parallel = Number(process.env.STT_PARALLEL) || 1;
    process.env.UV_THREADPOOL_SIZE = String(wantedThreadpoolSize(parallel));
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`stt-gateway: invalid configuration: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  // Signals are handled from the first moment: one that arrives while the
  // model loads or the first start runs stops the server as soon as it is up,
  // instead of killing it half-started (and the default action would skip the
  // database close). A second signal falls back to the default: exit at once.
  let running: RunningServer | null = null;
  let stopRequested = false;
  const stop = () => {
    if (!running) {
      stopRequested = true;
      return;
    }
    running.close().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err: (err as Error).message }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, stop);
  running = await startServer(config, logger);
  if (stopRequested) stop();
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`stt-gateway: failed to start: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
