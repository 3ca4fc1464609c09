// Reads an Ogg file (RFC 3533) into the packets of its first logical stream,
// for the Opus decoder, which takes one packet at a time. Pages of other
// streams (a multiplexed video, a second audio stream) are skipped; the
// stream ends at its end-of-stream page, at the end of the bytes, or at the
// first page that does not parse (a truncated file keeps the packets before).
// Page checksums are not verified: a damaged packet is the codec's to refuse.

const CAPTURE = 0x5367674f; // "OggS", little-endian
const HEADER_BYTES = 27;
const FLAG_END_OF_STREAM = 0x04;

export interface OggStream {
  /** The first logical stream's packets in order, read as they are asked for (views into the bytes where a packet lies in one page). */
  packets: Iterable<Uint8Array>;
  /** The granule position of that stream's last page that states one (-1 if none does), read before any packet. */
  lastGranule: number;
}

interface Page {
  serial: number;
  flags: number;
  granule: number;
  lacing: Uint8Array;
  body: Uint8Array;
  next: number;
}

export const isOgg = (bytes: Uint8Array): boolean =>
  bytes.length >= 4 && bytes[0] === 0x4f && bytes[1] === 0x67 && bytes[2] === 0x67 && bytes[3] === 0x53;

function pageAt(bytes: Uint8Array, at: number): Page | null {
  if (at + HEADER_BYTES > bytes.length) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset + at);
  if (view.getUint32(0, true) !== CAPTURE || view.getUint8(4) !== 0) return null;
  const segments = view.getUint8(26);
  const bodyStart = at + HEADER_BYTES + segments;
  if (bodyStart > bytes.length) return null;
  const lacing = bytes.subarray(at + HEADER_BYTES, bodyStart);
  let size = 0;
  for (const l of lacing) size += l;
  if (bodyStart + size > bytes.length) return null;
  // A granule position is a signed 64-bit count; -1 means "no packet ends on this page".
  const granule = Number(view.getBigInt64(6, true));
  return { serial: view.getUint32(14, true), flags: view.getUint8(5), granule, lacing, body: bytes.subarray(bodyStart, bodyStart + size), next: bodyStart + size };
}

/** The pages of the first logical stream, up to its end-of-stream page or the first page that does not parse. */
function* streamPages(bytes: Uint8Array): Generator<Page> {
  let serial: number | null = null;
  for (let page = pageAt(bytes, 0); page; page = pageAt(bytes, page.next)) {
    serial ??= page.serial;
    if (page.serial !== serial) continue;
    yield page;
    if (page.flags & FLAG_END_OF_STREAM) return;
  }
}

function* packetsOf(bytes: Uint8Array): Generator<Uint8Array> {
  let partial: Uint8Array[] = [];
  for (const page of streamPages(bytes)) {
    let offset = 0;
    for (const l of page.lacing) {
      partial.push(page.body.subarray(offset, offset + l));
      offset += l;
      // A lacing value under 255 ends a packet; 255 continues it (into the next page, too).
      if (l < 255) {
        yield partial.length === 1 ? partial[0] : Buffer.concat(partial);
        partial = [];
      }
    }
  }
}

/** Where every page in the file lies, any stream's, up to the first that does not parse. */
export function* oggPages(bytes: Uint8Array): Generator<{ start: number; end: number }> {
  for (let start = 0, page = pageAt(bytes, 0); page; start = page.next, page = pageAt(bytes, page.next)) yield { start, end: page.next };
}

export function readOggStream(bytes: Uint8Array): OggStream {
  let lastGranule = -1;
  for (const page of streamPages(bytes)) if (page.granule >= 0) lastGranule = page.granule;
  return { packets: { [Symbol.iterator]: () => packetsOf(bytes) }, lastGranule };
}
