// The Wyoming protocol's framing (rhasspy/wyoming, wyoming/event.py): each
// event is one line of JSON, `{"type", "data"?, "data_length"?,
// "payload_length"?, "version"?}`, then `data_length` bytes of JSON merged
// into `data`, then `payload_length` bytes of payload (audio). EventReader
// cuts a byte stream into events under fixed bounds, so a peer that sends an
// endless line or announces a huge payload is refused before anything large
// is held.

/** Bounds on what one event may hold. */
export const LIMITS = {
  /** The header line, newline included. */
  headerBytes: 16 * 1024,
  dataBytes: 64 * 1024,
  /** An audio chunk: 1 MiB is 32 s of 16-kHz 16-bit mono (Home Assistant sends about 30 ms per chunk). */
  payloadBytes: 1024 * 1024,
};

export interface WyomingEvent {
  type: string;
  data: Record<string, unknown>;
  payload: Buffer | null;
}

/** A framing the reader cannot go on from: the connection is answered with an `error` event and closed. */
export class FramingError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

/** The protocol version written in our events' headers (the wyoming package's at the time of writing). */
const VERSION = '1.10.2';

/** One event in Wyoming's framing. */
export function encodeEvent(type: string, data?: Record<string, unknown>, payload?: Buffer): Buffer {
  const header: Record<string, unknown> = { type, version: VERSION };
  const dataBytes = data && Object.keys(data).length ? Buffer.from(JSON.stringify(data), 'utf8') : null;
  if (dataBytes) header.data_length = dataBytes.length;
  if (payload?.length) header.payload_length = payload.length;
  return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`, 'utf8'), ...(dataBytes ? [dataBytes] : []), ...(payload?.length ? [payload] : [])]);
}

const lengthOf = (header: Record<string, unknown>, field: 'data_length' | 'payload_length', max: number): number => {
  const value = header[field] ?? 0;
  if (value === null) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw new FramingError('invalid_event', `${field} must be a whole number of bytes.`);
  if (value > max) throw new FramingError('event_too_large', `${field} ${value} is over this server's ${max} bytes.`);
  return value;
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Cuts bytes into events as they arrive. */
export class EventReader {
  /** Bytes of a header line not yet ended (at most LIMITS.headerBytes). */
  private head = Buffer.alloc(0);
  /** The header read, and its data and payload filling one buffer of their announced size. */
  private pending: { type: string; data: Record<string, unknown>; dataLength: number; body: Buffer; filled: number } | null = null;

  /** The events complete in what has arrived so far; throws FramingError on a framing it cannot go on from. */
  push(chunk: Buffer): WyomingEvent[] {
    const events: WyomingEvent[] = [];
    let rest = chunk;
    while (rest.length > 0 || (this.pending && this.pending.filled === this.pending.body.length)) {
      if (!this.pending) {
        const newline = rest.indexOf(0x0a);
        const line = newline < 0 ? rest : rest.subarray(0, newline);
        if (this.head.length + line.length + (newline < 0 ? 0 : 1) > LIMITS.headerBytes) {
          throw new FramingError('event_too_large', `An event's header line is over ${LIMITS.headerBytes} bytes.`);
        }
        // Header bytes are few (bounded above): copying them is cheap.
        this.head = Buffer.concat([this.head, line]);
        if (newline < 0) return events;
        rest = rest.subarray(newline + 1);
        this.pending = this.header(this.head);
        this.head = Buffer.alloc(0);
      }
      const p = this.pending;
      // Data and payload go straight into a buffer of the announced size: memory is what the header announced, however the bytes are cut.
      const take = Math.min(rest.length, p.body.length - p.filled);
      rest.copy(p.body, p.filled, 0, take);
      p.filled += take;
      rest = rest.subarray(take);
      if (p.filled < p.body.length) return events;
      events.push(this.complete(p));
      this.pending = null;
    }
    return events;
  }

  private header(line: Buffer): NonNullable<EventReader['pending']> {
    let header: unknown;
    try {
      header = JSON.parse(line.toString('utf8'));
    } catch {
      throw new FramingError('invalid_json', 'An event header is not valid JSON.');
    }
    if (!isObject(header) || typeof header.type !== 'string' || !header.type) {
      throw new FramingError('invalid_event', 'An event header is a JSON object with a string "type".');
    }
    if (header.data !== undefined && header.data !== null && !isObject(header.data)) throw new FramingError('invalid_event', '"data" must be an object.');
    const dataLength = lengthOf(header, 'data_length', LIMITS.dataBytes);
    const payloadLength = lengthOf(header, 'payload_length', LIMITS.payloadBytes);
    return { type: header.type, data: isObject(header.data) ? header.data : {}, dataLength, body: Buffer.alloc(dataLength + payloadLength), filled: 0 };
  }

  private complete({ type, data, dataLength, body }: NonNullable<EventReader['pending']>): WyomingEvent {
    if (dataLength > 0) {
      let more: unknown;
      try {
        more = JSON.parse(body.subarray(0, dataLength).toString('utf8'));
      } catch {
        throw new FramingError('invalid_json', `The data of a "${type}" event is not valid JSON.`);
      }
      if (!isObject(more)) throw new FramingError('invalid_event', `The data of a "${type}" event must be a JSON object.`);
      Object.assign(data, more);
    }
    return { type, data, payload: body.length > dataLength ? body.subarray(dataLength) : null };
  }
}
