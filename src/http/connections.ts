// Bounds what slow or idle clients can hold: time for the request headers,
// time for the whole request (the upload), silence while a request is
// arriving, and open connections. At the connection limit the oldest
// connection that has not authenticated goes first, so a flood of idle or
// trickling sockets cannot lock out clients with a key.
import type http from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  headersTimeoutMs: number;
  uploadTimeoutMs: number;
  idleTimeoutMs: number;
  maxConnections: number;
}

/**
 * How long an idle keep-alive connection stays open (Node's default, made
 * explicit): a proxy in front must drop idle connections sooner
 * (deploy/nginx.conf's upstream keepalive_timeout), or it may send a request
 * into a socket this side is closing and answer the client 502.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 5000;

/** Connections that have sent a valid API or admin key. */
const authenticated = new WeakSet<Socket>();
export const markAuthenticated = (socket: Socket): void => void authenticated.add(socket);

/** Node's own bounds, for http.createServer. */
export function timeoutOptions(limits: ConnectionLimits): http.ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    // Whole request, headers and body; a transcription's own time after that is bounded by its deadline.
    requestTimeout: limits.uploadTimeoutMs,
    // How often Node checks both; a quarter of the shorter keeps the overshoot small.
    connectionsCheckingInterval: Math.max(50, Math.floor(Math.min(limits.headersTimeoutMs, limits.uploadTimeoutMs) / 4)),
  };
}

export function limitConnections(server: http.Server, limits: ConnectionLimits): void {
  // Silence closes a socket while a request is still arriving (or none is
  // under way); a client waiting for its transcription sends nothing and
  // must not be cut off.
  server.timeout = limits.idleTimeoutMs;
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  const current = new WeakMap<Socket, http.ServerResponse>();
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => current.set(req.socket, res));
  server.on('timeout', (socket: Socket) => {
    const res = current.get(socket);
    const beingAnswered = res !== undefined && res.req.complete && !res.writableFinished;
    if (!beingAnswered) socket.destroy();
  });

  const open = new Set<Socket>(); // in order of arrival
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    if (open.size <= limits.maxConnections) return;
    // Always found: the newcomer itself when every older connection has authenticated.
    [...open].find((s) => !authenticated.has(s))?.destroy();
  });
}
