// The gate in front of realtime sessions: Koa never sees an HTTP Upgrade, so
// the server's 'upgrade' event lands here. In order: the path
// (/v1/realtime), the Host allow-list, the API key (a bearer header, or the
// `openai-insecure-api-key.<key>` subprotocol browsers send), the intent or
// model, Local mode, the session caps (all keys, one key), the key's request
// rate (a session is one request). A refusal is the contract's JSON error
// envelope with its HTTP status, written on the raw socket; a session is
// then handed to ws. Shutdown stops new sessions and ends the open ones
// (1001) once their committed turns are answered.
import { existsSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { Services } from '../../services';
import { ApiError, unauthorized } from '../api-error';
import { knownApiError } from '../error-map';
import { hostAllowed, hostName } from '../middleware/allowed-host';
import { bearerToken, verifyApiKey } from '../middleware/auth';
import { markAuthenticated } from '../connections';
import { RealtimeSession, type SessionLimits } from './session';
import type { Dialect } from './events';
import { VAD_FILE } from '../../stt/catalogue';

export const REALTIME_PATH = '/v1/realtime';
const KEY_PROTOCOL = 'openai-insecure-api-key.';
const BETA_PROTOCOL = 'openai-beta.realtime-v1';
/** The largest event a client may send: 2 MiB holds about 32 s of 24-kHz PCM16 in base64 (4 bytes per 3). */
const MAX_EVENT_BYTES = 2 * 1024 * 1024;

export type RealtimeParts = Pick<Services, 'stt' | 'apiKeys' | 'keyLimiter' | 'logger' | 'metrics'> & {
  config: Pick<Services['config'], 'allowedHosts' | 'realtimeMaxSessions' | 'realtimeSessionsPerKey' | 'realtimeIdleMs' | 'realtimeDrafts' | 'maxAudioSeconds' | 'modelsDir'>;
};

export interface Realtime {
  /** Stops new sessions; ends the open ones once their committed turns are answered. */
  close(): Promise<void>;
  /** Cuts the sessions still open (after the shutdown timeout). */
  terminate(): void;
}

/**
 * Whether a request asks for a WebSocket. Node 22.21 and 24.9 pass other
 * upgrades (curl --http2's h2c) to the app as plain requests when the server
 * is told this (src/server.ts); Node 20 sends every upgrade here, and those
 * get 400 upgrade_not_supported.
 */
export const isWebSocketUpgrade = (req: http.IncomingMessage): boolean => /^websocket$/i.test(String(req.headers.upgrade ?? '').trim());

function protocolsOf(req: http.IncomingMessage): string[] {
  return (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim()).filter(Boolean);
}

/** The Silero model server_vad listens with, if the host has it (it comes with a local runtime's install). */
function installedVadModel(modelsDir: string): string | null {
  const file = path.join(modelsDir, VAD_FILE.name);
  return existsSync(file) ? file : null;
}

/** The envelope on a socket that has not been upgraded, then closed. */
function refuse(socket: Duplex, err: ApiError): void {
  const body = JSON.stringify(err.toBody());
  const headers = { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close', ...err.headers };
  const status = err.status === 499 ? 400 : err.status;
  socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${body}`);
}

export function attachRealtime(server: http.Server, s: RealtimeParts): Realtime {
  const limits: SessionLimits = {
    maxBufferSeconds: Math.min(120, s.config.maxAudioSeconds),
    maxWaitingTurns: 2,
    idleMs: s.config.realtimeIdleMs,
    maxSessionMs: 60 * 60_000,
  };
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_EVENT_BYTES,
    perMessageDeflate: false,
    // A browser that offered protocols fails a handshake that selects none; the key's protocol is never echoed.
    handleProtocols: (offered) => (offered.has('realtime') ? 'realtime' : offered.has(BETA_PROTOCOL) ? BETA_PROTOCOL : false),
  });
  const open = new Set<RealtimeSession>();
  /** Sessions open or in their handshake, all keys and by key: what the caps count. */
  let held = 0;
  const perKey = new Map<string, number>();
  let closing = false;

  /**
   * Checks the caps and takes a place in the same synchronous step, so
   * handshakes racing in cannot pass them together; returns its release.
   */
  function reserve(keyId: string): () => void {
    if (closing) throw new ApiError(503, 'shutting_down', 'The server is shutting down; retry shortly or on another instance.', null, { 'Retry-After': '1' });
    if (held >= s.config.realtimeMaxSessions) {
      throw new ApiError(503, 'too_many_sessions', `This server holds at most ${s.config.realtimeMaxSessions} realtime sessions; retry later.`, null, { 'Retry-After': '5' });
    }
    if ((perKey.get(keyId) ?? 0) >= s.config.realtimeSessionsPerKey) {
      throw new ApiError(429, 'too_many_sessions', `This key may hold ${s.config.realtimeSessionsPerKey} realtime sessions at once; close one first.`, null, { 'Retry-After': '5' });
    }
    held++;
    perKey.set(keyId, (perKey.get(keyId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held--;
      const left = (perKey.get(keyId) ?? 1) - 1;
      if (left > 0) perKey.set(keyId, left);
      else perKey.delete(keyId);
    };
  }

  async function admit(req: http.IncomingMessage): Promise<{ key: Awaited<ReturnType<typeof verifyApiKey>> & object; model: string; dialect: Dialect }> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!isWebSocketUpgrade(req)) {
      throw new ApiError(400, 'upgrade_not_supported', `This server upgrades only to WebSocket, at ${REALTIME_PATH}; send the request without an Upgrade header (curl: without --http2 on http://).`);
    }
    if (url.pathname !== REALTIME_PATH) throw new ApiError(404, 'not_found', `No WebSocket is served at ${url.pathname}; realtime transcription is at ${REALTIME_PATH}.`);
    if (s.config.allowedHosts !== null && !hostAllowed(s.config.allowedHosts, hostName(req.headers.host ?? ''))) {
      throw new ApiError(403, 'host_not_allowed', 'This server does not answer for that Host; see STT_ALLOWED_HOSTS.');
    }
    const fromProtocol = protocolsOf(req).find((p) => p.startsWith(KEY_PROTOCOL))?.slice(KEY_PROTOCOL.length);
    const token = bearerToken(req.headers.authorization) ?? fromProtocol ?? null;
    const key = token ? await verifyApiKey(s.apiKeys, token) : null;
    if (!key) throw unauthorized(token ? 'Invalid or revoked API key.' : 'Missing API key: send Authorization: Bearer <key>, or the subprotocol openai-insecure-api-key.<key>.');
    // Off is off, whatever the request asks for or where transcriptions go.
    if (s.config.realtimeMaxSessions === 0) throw new ApiError(404, 'realtime_disabled', 'Realtime sessions are off on this server (STT_REALTIME_MAX_SESSIONS=0).');
    const route = await s.stt.route();
    const intent = url.searchParams.get('intent');
    const model = url.searchParams.get('model');
    if (intent !== null && intent !== 'transcription') {
      throw new ApiError(400, 'unsupported_intent', `This server serves realtime transcription only (intent=transcription), not "${intent}".`, 'intent');
    }
    if (intent === null && model === null) throw new ApiError(400, 'missing_required_parameter', 'Open the session with ?intent=transcription (or ?model=<model>).', 'intent');
    if (model !== null && !(model === route.target.alias || route.target.aliases.includes(model))) {
      throw new ApiError(404, 'model_not_found', `The model "${model}" is not served here; use "${route.target.alias}".`, 'model');
    }
    if (route.target.mode !== 'local') {
      throw new ApiError(409, 'realtime_unavailable', 'Realtime sessions run on the local runtime, and this server sends transcriptions to a cloud provider.');
    }
    await s.keyLimiter.openLive(key);
    const beta = protocolsOf(req).includes(BETA_PROTOCOL) || /realtime=v1/.test(String(req.headers['openai-beta'] ?? ''));
    return { key, model: model ?? route.target.alias, dialect: beta ? 'beta' : 'ga' };
  }

  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    let gone = false;
    socket.once('close', () => (gone = true));
    socket.on('error', () => socket.destroy());
    admit(req).then(
      ({ key, model, dialect }) => {
        if (gone || socket.destroyed) return; // the client left during the checks
        let release: () => void;
        try {
          release = reserve(key.id);
        } catch (err) {
          return refuse(socket, err as ApiError);
        }
        let upgraded = false;
        // ws refuses a bad handshake itself (Sec-WebSocket-Key, version) with its own 400, or drops a socket that closed.
        socket.once('close', () => upgraded || release());
        markAuthenticated(req.socket);
        wss.handleUpgrade(req, socket, head, (ws) => {
          upgraded = true;
          let session: RealtimeSession;
          try {
            session = new RealtimeSession(ws, dialect, key, model, {
              stt: s.stt, keyLimiter: s.keyLimiter, logger: s.logger, limits, vadModelPath: installedVadModel(s.config.modelsDir), drafts: s.config.realtimeDrafts,
              keyNow: (id) => s.apiKeys.get(id),
              turnsEnded: (by) => s.metrics.realtimeTurns.inc({ ended_by: by }),
              drafted: () => s.metrics.realtimeDrafts.inc(),
              draftsRevised: () => s.metrics.realtimeDraftsRevised.inc(),
            });
          } catch (err) {
            // Thrown here it would be an unhandled rejection: close this socket, keep the server.
            s.logger.error({ err: (err as Error).message }, 'realtime session could not start');
            release();
            ws.close(1011, 'internal error');
            return;
          }
          open.add(session);
          s.metrics.realtimeSessions.set(open.size);
          s.logger.info({ session: session.id, key: key.id, dialect }, 'realtime session opened');
          ws.on('close', (code) => {
            open.delete(session);
            s.metrics.realtimeSessions.set(open.size);
            release();
            s.logger.info({ session: session.id, code }, 'realtime session closed');
          });
        });
      },
      (err: unknown) => {
        const api = knownApiError(err);
        if (!api) s.logger.error({ err: (err as Error).message }, 'realtime upgrade failed');
        refuse(socket, api ?? new ApiError(500, 'internal_error', 'Internal server error.'));
      },
    );
  });

  return {
    async close() {
      closing = true;
      await Promise.all([...open].map((session) => session.end()));
      wss.close();
    },
    terminate() {
      for (const session of open) session.terminate();
    },
  };
}
