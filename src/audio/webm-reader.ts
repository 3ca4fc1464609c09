// Reads a WebM or Matroska file into its first audio track's codec, header
// and frames, for the Opus decoder. What browsers' MediaRecorder writes is the
// case that matters: a Segment and Clusters of unknown size (it cannot seek
// back to write them), no Duration, SimpleBlocks without lacing. So the
// elements are read as a flat scan instead of a tree: the masters that hold
// what we need are entered (their size ignored), every other element is
// skipped by its size, and leaves are read where they stand. An element that
// does not fit in the bytes ends the scan (a truncated file keeps the frames
// before it).

const ID = {
  ebml: 0x1a45dfa3,
  docType: 0x4282,
  segment: 0x18538067,
  info: 0x1549a966,
  timecodeScale: 0x2ad7b1,
  duration: 0x4489,
  tracks: 0x1654ae6b,
  trackEntry: 0xae,
  trackNumber: 0xd7,
  trackType: 0x83,
  codecId: 0x86,
  codecPrivate: 0x63a2,
  audio: 0xe1,
  samplingFrequency: 0xb5,
  channels: 0x9f,
  cluster: 0x1f43b675,
  blockGroup: 0xa0,
  block: 0xa1,
  simpleBlock: 0xa3,
} as const;

/** Masters scanned into rather than skipped. */
const ENTERED = new Set<number>([ID.ebml, ID.segment, ID.info, ID.tracks, ID.trackEntry, ID.audio, ID.cluster, ID.blockGroup]);
const TRACK_TYPE_AUDIO = 2;
/** More track entries than any real file has are ignored (each would cost an object). */
const MAX_TRACKS = 64;

export interface WebmTrack {
  number: number;
  type: number;
  /** Matroska's codec id: A_OPUS, A_VORBIS, A_AAC, ... */
  codecId: string;
  codecPrivate: Uint8Array | null;
  sampleRate: number;
  channels: number;
}

export interface WebmAudio {
  /** "webm" or "matroska". */
  docType: string;
  /** The first audio track, or null when the file has none. */
  track: WebmTrack | null;
  /** That track's frames in order, read as they are asked for (views into the file's bytes). */
  frames: Iterable<Uint8Array>;
  /** The Segment's stated duration in seconds, or null (MediaRecorder states none). */
  durationSeconds: number | null;
}

export const isEbml = (bytes: Uint8Array): boolean =>
  bytes.length >= 4 && bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3;

/** An EBML variable-length integer at `at`: its value (the marker bit kept for ids) and length, or null. */
function vint(bytes: Uint8Array, at: number, keepMarker: boolean): { value: number; length: number; unknown: boolean } | null {
  if (at >= bytes.length) return null;
  const first = bytes[at];
  const length = first === 0 ? 9 : Math.clz32(first) - 23;
  if (length > 8 || at + length > bytes.length) return null;
  let value = keepMarker ? first : first & (0xff >> length);
  let allOnes = value === 0xff >> length;
  for (let i = 1; i < length; i++) {
    value = value * 256 + bytes[at + i];
    allOnes &&= bytes[at + i] === 0xff;
  }
  return { value, length, unknown: !keepMarker && allOnes };
}

function readUint(body: Uint8Array): number {
  let v = 0;
  for (const b of body) v = v * 256 + b;
  return v;
}

function readFloat(body: Uint8Array): number {
  const view = new DataView(body.buffer, body.byteOffset, body.length);
  return body.length === 4 ? view.getFloat32(0) : body.length === 8 ? view.getFloat64(0) : NaN;
}

const readString = (body: Uint8Array): string => Buffer.from(body).toString('latin1').replace(/\0+$/, '');

/** The frames in a Block or SimpleBlock's body if it belongs to `track` (lacing undone), or null if it does not parse. */
function blockFrames(body: Uint8Array, track: number): Uint8Array[] | null {
  const number = vint(body, 0, false);
  if (!number) return null;
  if (number.value !== track) return [];
  let at = number.length + 3; // timecode (2 bytes), flags (1)
  if (at > body.length) return null;
  const lacing = (body[at - 1] >> 1) & 3;
  if (lacing === 0) return [body.subarray(at)];
  if (at >= body.length) return null;
  const count = body[at++] + 1;
  const sizes: number[] = [];
  if (lacing === 1) {
    // Xiph: each size but the last as a run of 255s and a final byte.
    for (let i = 0; i < count - 1; i++) {
      let size = 0;
      for (;;) {
        if (at >= body.length) return null;
        const b = body[at++];
        size += b;
        if (b < 255) break;
      }
      sizes.push(size);
    }
  } else if (lacing === 3) {
    // EBML: the first size as a vint, then each next one as a signed difference.
    const first = vint(body, at, false);
    if (!first) return null;
    at += first.length;
    sizes.push(first.value);
    for (let i = 1; i < count - 1; i++) {
      const diff = vint(body, at, false);
      if (!diff) return null;
      at += diff.length;
      const next = sizes[i - 1] + diff.value - (2 ** (7 * diff.length - 1) - 1);
      if (next < 0) return null;
      sizes.push(next);
    }
  } else {
    // Fixed: equal sizes.
    const each = (body.length - at) / count;
    if (!Number.isInteger(each)) return null;
    for (let i = 0; i < count - 1; i++) sizes.push(each);
  }
  const laced = sizes.reduce((a, b) => a + b, 0);
  if (at + laced > body.length) return null;
  sizes.push(body.length - at - laced);
  return sizes.map((size) => {
    const frame = body.subarray(at, at + size);
    at += size;
    return frame;
  });
}

interface Element {
  id: number;
  /** Null for an entered master. */
  body: Uint8Array | null;
}

/** The flat scan: every element from `at` on, entered masters with a null body. */
function* elements(bytes: Uint8Array, at: number): Generator<Element> {
  while (at < bytes.length) {
    const id = vint(bytes, at, true);
    if (!id) return;
    const size = vint(bytes, at + id.length, false);
    if (!size) return;
    const bodyStart = at + id.length + size.length;
    if (ENTERED.has(id.value)) {
      at = bodyStart;
      yield { id: id.value, body: null };
      continue;
    }
    // Only the masters above may have an unknown size.
    if (size.unknown || bodyStart + size.value > bytes.length) return;
    at = bodyStart + size.value;
    yield { id: id.value, body: bytes.subarray(bodyStart, at) };
  }
}

function* framesOf(blocks: Iterable<Element>, track: number): Generator<Uint8Array> {
  for (const { id, body } of blocks) {
    if ((id !== ID.simpleBlock && id !== ID.block) || !body) continue;
    const got = blockFrames(body, track);
    if (!got) return;
    yield* got;
  }
}

export function readWebm(bytes: Uint8Array): WebmAudio {
  let docType = '';
  let timecodeScale = 1_000_000;
  let duration: number | null = null;
  const tracks: WebmTrack[] = [];
  // The header: everything up to the first Cluster.
  const scan = elements(bytes, 0);
  // Read by hand: a for-of that breaks would close the generator the frames are read from next.
  for (let next = scan.next(); !next.done; next = scan.next()) {
    const { id, body } = next.value;
    if (id === ID.cluster) break;
    if (id === ID.trackEntry && tracks.length < MAX_TRACKS) tracks.push({ number: 0, type: 0, codecId: '', codecPrivate: null, sampleRate: 0, channels: 1 });
    if (!body) continue;
    const track = tracks[tracks.length - 1];
    switch (id) {
      case ID.docType: docType = readString(body); break;
      case ID.timecodeScale: timecodeScale = readUint(body); break;
      case ID.duration: duration = readFloat(body); break;
      case ID.trackNumber: if (track) track.number = readUint(body); break;
      case ID.trackType: if (track) track.type = readUint(body); break;
      case ID.codecId: if (track) track.codecId = readString(body); break;
      case ID.codecPrivate: if (track) track.codecPrivate = body; break;
      case ID.samplingFrequency: if (track) track.sampleRate = readFloat(body); break;
      case ID.channels: if (track) track.channels = readUint(body); break;
    }
  }
  const track = tracks.find((t) => t.type === TRACK_TYPE_AUDIO || t.codecId.startsWith('A_')) ?? null;
  const durationSeconds = duration !== null && Number.isFinite(duration) && duration > 0 ? (duration * timecodeScale) / 1e9 : null;
  // The frames: read from where the header ended, once, as the decoder asks.
  const frames: Iterable<Uint8Array> = { [Symbol.iterator]: () => framesOf(track ? scan : [], track?.number ?? 0) };
  return { docType, track, frames, durationSeconds };
}
