// The Wyoming TCP server (STT_WYOMING_PORT; off unless set), for Home
// Assistant's voice pipeline. Wyoming has no authentication, so the server
// listens on loopback unless the host names another address
// (STT_WYOMING_HOST), which is logged as a warning: anyone who reaches that
// address transcribes on this machine, outside API keys and their budgets
// (docs/security.md). Bounded: connections at once, and each connection's
// own bounds (protocol.ts, connection.ts: idle time without an utterance's
// audio, the utterance, unsent output). Shutdown stops new connections and ends each
// open one once its utterance, if any, is answered.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Services } from '../services';
import { WyomingConnection } from './connection';

/** Connections open at once; past it a new one is closed at once. */
const MAX_CONNECTIONS = 16;
/** No utterance audio (or audio-stop) from the client for this long, and nothing being transcribed: the connection is closed. */
const IDLE_MS = 30_000;

export interface WyomingServer {
  port: number;
  /** Stops new connections; ends the open ones once their utterance is answered. */
  close(): Promise<void>;
  /** Cuts the connections still open (after the shutdown timeout). */
  terminate(): void;
}

const isLoopback = (host: string) => host === 'localhost' || host === '::1' || host.startsWith('127.');

export async function startWyoming(s: Pick<Services, 'stt' | 'logger' | 'metrics' | 'config'>, port: number, host: string): Promise<WyomingServer> {
  const connections = new Map<net.Socket, WyomingConnection>();
  // Half-open: a client may end its side after audio-stop and still read its transcript.
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    socket.setNoDelay(true);
    const connection = new WyomingConnection(socket, {
      stt: s.stt,
      logger: s.logger,
      maxAudioSeconds: s.config.maxAudioSeconds,
      idleMs: IDLE_MS,
      counted: (outcome) => s.metrics.wyomingTranscripts.inc({ outcome }),
    });
    connections.set(socket, connection);
    s.metrics.wyomingConnections.inc();
    socket.on('close', () => {
      connections.delete(socket);
      s.metrics.wyomingConnections.dec();
    });
  });
  server.maxConnections = MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  // After the listen, an accept error (EMFILE) is logged, never an unhandled 'error' that ends the process.
  server.on('error', (err) => s.logger.error({ err: err.message }, 'wyoming server error'));
  const bound = (server.address() as AddressInfo).port;
  if (isLoopback(host)) s.logger.info({ host, port: bound }, 'wyoming listening on loopback');
  else s.logger.warn({ host, port: bound }, 'wyoming listening beyond loopback: Wyoming has no authentication, anyone who reaches this address can transcribe');
  return {
    port: bound,
    close: async () => {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([...connections.values()].map((c) => c.end()));
      await stopped;
    },
    terminate: () => {
      for (const socket of connections.keys()) socket.destroy();
    },
  };
}
