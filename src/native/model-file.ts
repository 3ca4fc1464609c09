// Reads a whisper.cpp model file's structure without loading it: family,
// hyper-parameters and every tensor record, checked against the file size.
// whisper.cpp's own loaders trust their input (a bad tensor rank overflows a
// stack array), so nothing reaches them until this walk has passed.
import { open, type FileHandle } from 'node:fs/promises';
import { GGML_FILE_MAGIC, GGML_QNT_VERSION_FACTOR, GGML_TYPES, tensorBytes } from './ggml-types';

export type ModelFamily = 'whisper' | 'parakeet';

export interface ModelFileInfo {
  family: ModelFamily;
  bytes: number;
  ftype: number;
  tensors: number;
  hparams: Record<string, number>;
}

export class ModelFileError extends Error {
  constructor(
    readonly code: 'model_file_missing' | 'model_file_invalid' | 'model_file_truncated' | 'model_file_foreign' | 'model_file_incomplete',
    message: string,
  ) {
    super(message);
    this.name = 'ModelFileError';
  }
}

const WHISPER_HPARAMS = ['n_vocab', 'n_audio_ctx', 'n_audio_state', 'n_audio_head', 'n_audio_layer', 'n_text_ctx',
  'n_text_state', 'n_text_head', 'n_text_layer', 'n_mels', 'ftype'] as const;
const PARAKEET_HPARAMS = ['n_vocab', 'n_audio_ctx', 'n_audio_state', 'n_audio_head', 'n_audio_layer', 'n_mels', 'ftype',
  'n_fft', 'subsampling_factor', 'n_subsampling_channels', 'n_conv_kernel', 'n_pred_dim', 'n_pred_layers',
  'n_tdt_durations', 'n_max_tokens'] as const;
/** Hyper-parameters the loaders divide by or allocate with. */
const POSITIVE: Record<ModelFamily, readonly string[]> = {
  whisper: ['n_vocab', 'n_audio_ctx', 'n_audio_state', 'n_audio_head', 'n_audio_layer', 'n_text_ctx', 'n_text_state', 'n_text_head', 'n_text_layer', 'n_mels'],
  parakeet: ['n_vocab', 'n_audio_ctx', 'n_audio_state', 'n_audio_head', 'n_audio_layer', 'n_mels', 'n_fft', 'subsampling_factor',
    'n_subsampling_channels', 'n_conv_kernel', 'n_pred_dim', 'n_pred_layers'],
};
const HEAD_SPLITS: Record<ModelFamily, readonly [string, string][]> = {
  whisper: [['n_audio_state', 'n_audio_head'], ['n_text_state', 'n_text_head']],
  parakeet: [['n_audio_state', 'n_audio_head']],
};
/** whisper.cpp's frame (WHISPER_N_FFT, fixed): a Whisper file's mel filters cover its 201 frequency bins. */
const WHISPER_FFT = 400;
/**
 * parakeet.cpp's frame is the file's n_fft, and each request's mel worker threads allocate and transform
 * it per 10-ms hop (an O(n²) DFT on odd lengths): NeMo's models use 512.
 */
const MAX_FFT = 1 << 12;
const MAX_DIM = 1 << 24;
const MAX_NAME = 256;
const MAX_VOCAB = 1 << 20;
const MAX_TOKEN_BYTES = 1 << 12;

/** Sequential little-endian reader over a file, with bounds checked against its size. */
class FileReader {
  private pos = 0;
  private buf = Buffer.alloc(0);
  private bufStart = 0;
  constructor(private readonly fh: FileHandle, readonly size: number) {}

  get position(): number {
    return this.pos;
  }

  private async ensure(n: number): Promise<void> {
    if (this.pos + n > this.size) throw new ModelFileError('model_file_truncated', 'model file ends in the middle of a record');
    if (this.pos >= this.bufStart && this.pos + n <= this.bufStart + this.buf.length) return;
    const length = Math.min(Math.max(n, 1 << 16), this.size - this.pos);
    this.buf = Buffer.alloc(length);
    await this.fh.read(this.buf, 0, length, this.pos);
    this.bufStart = this.pos;
  }

  async i32(): Promise<number> {
    await this.ensure(4);
    const v = this.buf.readInt32LE(this.pos - this.bufStart);
    this.pos += 4;
    return v;
  }

  async bytes(n: number): Promise<Buffer> {
    await this.ensure(n);
    const out = this.buf.subarray(this.pos - this.bufStart, this.pos - this.bufStart + n);
    this.pos += n;
    return out;
  }

  skip(n: number): void {
    if (n < 0 || this.pos + n > this.size) throw new ModelFileError('model_file_truncated', 'model file is shorter than its header says');
    this.pos += n;
  }
}

function detectFamily(ints: number[]): ModelFamily | null {
  // Whisper: text and audio state are equal, and the mel filter block repeats n_mels.
  if (ints[6] === ints[2] && ints[11] === ints[9]) return 'whisper';
  // Parakeet: the filter block after its 15 hyper-parameters repeats n_mels.
  if (ints[15] === ints[5]) return 'parakeet';
  return null;
}

async function skipVocab(r: FileReader): Promise<void> {
  const n = await r.i32();
  if (n < 0 || n > MAX_VOCAB) throw new ModelFileError('model_file_invalid', `implausible vocabulary size ${n}`);
  for (let i = 0; i < n; i++) {
    const len = await r.i32();
    if (len < 0 || len > MAX_TOKEN_BYTES) throw new ModelFileError('model_file_invalid', 'implausible token length in vocabulary');
    r.skip(len);
  }
}

async function skipFloats(r: FileReader, count: number, what: string): Promise<void> {
  if (count < 0 || count > 1 << 24) throw new ModelFileError('model_file_invalid', `implausible ${what} size`);
  r.skip(count * 4);
}

/**
 * The mel filters and window as the first request uses them. The mel code indexes each frame's FFT
 * with the filters' bin count and centres the window in the frame; the assert on the bins is compiled
 * out of release builds and nothing checks the window, so a misfit reads and writes outside their
 * buffers at the first request (a debug build aborts there), long after the load succeeded.
 */
function checkMelFilters(nFft: number, bins: number, window: number): void {
  if (nFft > MAX_FFT) throw new ModelFileError('model_file_invalid', `n_fft is ${nFft}; at most ${MAX_FFT} is accepted`);
  const expected = Math.floor(nFft / 2) + 1;
  if (bins !== expected) {
    throw new ModelFileError('model_file_invalid', `mel filters have ${bins} frequency bins; an FFT of ${nFft} has ${expected}`);
  }
  if (window > nFft) throw new ModelFileError('model_file_invalid', `the ${window}-sample window is longer than n_fft ${nFft}`);
}

async function walkTensors(r: FileReader): Promise<number> {
  let count = 0;
  while (r.position < r.size) {
    const nDims = await r.i32();
    const nameLen = await r.i32();
    const type = await r.i32();
    // Rank 0 is a scalar: the Parakeet converter writes batch_norm.num_batches_tracked so.
    if (nDims < 0 || nDims > 4) throw new ModelFileError('model_file_invalid', `tensor ${count} has rank ${nDims}`);
    if (nameLen < 1 || nameLen > MAX_NAME) throw new ModelFileError('model_file_invalid', `tensor ${count} has a bad name length`);
    if (!GGML_TYPES[type]) throw new ModelFileError('model_file_invalid', `tensor ${count} has unknown type ${type}`);
    let elements = 1;
    for (let d = 0; d < nDims; d++) {
      const ne = await r.i32();
      if (ne < 1 || ne > MAX_DIM) throw new ModelFileError('model_file_invalid', `tensor ${count} has a bad dimension`);
      elements *= ne;
    }
    if (elements > 2 ** 31 - 1 || elements % GGML_TYPES[type].blockSize !== 0) {
      throw new ModelFileError('model_file_invalid', `tensor ${count} has an impossible element count`);
    }
    r.skip(nameLen);
    r.skip(tensorBytes(type, elements));
    count++;
  }
  return count;
}

export async function inspectModelFile(path: string): Promise<ModelFileInfo> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch {
    throw new ModelFileError('model_file_missing', 'model file not found or not readable');
  }
  try {
    const { size } = await fh.stat();
    const r = new FileReader(fh, size);
    if (size < 4 + 17 * 4) throw new ModelFileError('model_file_truncated', 'file is too short to be a model');
    if ((await r.i32()) >>> 0 !== GGML_FILE_MAGIC) throw new ModelFileError('model_file_foreign', 'not a ggml model file (bad magic)');
    const ints: number[] = [];
    for (let i = 0; i < 17; i++) ints.push(await r.i32());
    const family = detectFamily(ints);
    if (!family) throw new ModelFileError('model_file_foreign', 'ggml file is neither a Whisper nor a Parakeet model');
    const names = family === 'whisper' ? WHISPER_HPARAMS : PARAKEET_HPARAMS;
    const hparams: Record<string, number> = {};
    names.forEach((name, i) => (hparams[name] = ints[i]));
    for (const [name, v] of Object.entries(hparams)) {
      if (v < 0 || (name !== 'ftype' && v > MAX_DIM)) throw new ModelFileError('model_file_invalid', `implausible ${name} ${v}`);
    }
    // whisper.cpp and parakeet.cpp divide by these or size tensors with them at load:
    // a zero kills the process there (SIGFPE), before any error can be returned.
    for (const name of POSITIVE[family]) {
      if (hparams[name] < 1) throw new ModelFileError('model_file_invalid', `${name} is ${hparams[name]}; it must be at least 1`);
    }
    for (const [state, heads] of HEAD_SPLITS[family]) {
      if (hparams[state] % hparams[heads] !== 0) {
        throw new ModelFileError('model_file_invalid', `${state} ${hparams[state]} does not divide into ${hparams[heads]} heads (${heads})`);
      }
    }

    // Rewind to just after the hyper-parameters and walk the rest.
    const headerInts = names.length;
    const walker = new FileReader(fh, size);
    walker.skip(4 + headerInts * 4);
    const nMel = await walker.i32();
    const bins = await walker.i32();
    await skipFloats(walker, nMel * bins, 'mel filter');
    let window = 0; // none: Whisper's is whisper.cpp's own
    if (family === 'parakeet') {
      window = await walker.i32();
      await skipFloats(walker, window, 'window');
      walker.skip(hparams.n_tdt_durations * 4);
    }
    checkMelFilters(family === 'whisper' ? WHISPER_FFT : hparams.n_fft, bins, window);
    await skipVocab(walker);
    const tensors = await walkTensors(walker);

    if (tensors === 0) throw new ModelFileError('model_file_incomplete', 'model file has a header but no weights');
    if (family === 'whisper') {
      const expected = 11 + 15 * hparams.n_audio_layer + 24 * hparams.n_text_layer;
      if (tensors !== expected) {
        throw new ModelFileError('model_file_incomplete', `model file has ${tensors} tensors, a Whisper model of this shape has ${expected}`);
      }
    }
    return { family, bytes: size, ftype: hparams.ftype % GGML_QNT_VERSION_FACTOR, tensors, hparams };
  } finally {
    await fh.close();
  }
}
