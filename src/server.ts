// Entry point: validated config, services, HTTP server, graceful shutdown.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig, ConfigError, type Config } from './config';
import { createLogger, type Logger } from './log';
import { createServices, closeServices, type Services } from './services';
import { createApp } from './http/app';

export interface RunningServer {
  url: string;
  port: number;
  services: Services;
  close(): Promise<void>;
}

export async function startServer(config: Config, logger: Logger): Promise<RunningServer> {
  const services = await createServices(config, logger);
  const app = createApp(services);
  const server = http.createServer(app.callback());
  server.requestTimeout = 0; // long transcriptions are bounded by their own deadline
  server.headersTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  logger.info({ url, port, dataDir: config.dataDir, threads: config.threads, parallel: config.parallel }, 'listening');
  if (services.adminKey.generated) {
    // stdout also carries the JSON logs, which log shippers keep: print the key
    // only to a person at a terminal; otherwise say where the file is.
    if (process.stdout.isTTY) {
      logger.warn({ file: services.adminKey.file }, 'generated a new admin key (printed once below)');
      process.stdout.write(`\n  Admin key (also in ${services.adminKey.file}):\n  ${services.adminKey.value}\n\n`);
    } else {
      logger.warn({ file: services.adminKey.file }, 'generated a new admin key; read it from the file (mode 0600), it is not printed because stdout is not a terminal');
    }
  }

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      logger.info('shutting down: no new connections, finishing in-flight work');
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timeout = new Promise<void>((resolve) => setTimeout(resolve, config.shutdownTimeoutMs).unref());
      await Promise.race([Promise.all([stopped, services.local.scheduler.idle()]), timeout]);
      server.closeAllConnections();
      await closeServices(services);
      logger.info('stopped');
    })());
  return { url, port, services, close };
}

async function main(): Promise<void> {
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
  const running = await startServer(config, logger);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      running.close().then(
        () => process.exit(0),
        (err) => {
          logger.error({ err: (err as Error).message }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`stt-gateway: failed to start: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
