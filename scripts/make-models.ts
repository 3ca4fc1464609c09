// Generates loadable Whisper models with random weights from the fixture
// headers in ../shared/fixtures/models (real vocabulary and mel filters);
// Parakeet shapes come from make-parakeet-model.ts. Compute cost depends on
// shapes, not values, so the exact base/small shapes serve benchmarks; the
// micro shape keeps tests fast.
// Usage: tsx scripts/make-models.ts [--out DIR] [name ...]   (default: the test set)
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileFtype, ModelWriter, Rng, tensorData, toHalf, TYPE_F16, TYPE_F32, TYPE_Q8_0, type Quant, type Tensor } from './lib/ggml-writer';
import { FIXTURES, SYNTHETIC_DIR } from './lib/model-paths';
import { makeParakeetModel, PARAKEET_SHAPES } from './make-parakeet-model';

export { FIXTURES, SYNTHETIC_DIR };

interface Shape {
  header: string;
  quant: Quant;
  /** Overrides of the header's hyper-parameters (micro shapes for tests). */
  state?: number;
  heads?: number;
  layers?: number;
  /** Decoder context; its half is whisper.cpp's token cap per window. Benchmarks shrink it to bound random-weight decoding for every contender alike. */
  textCtx?: number;
  /**
   * Make the decoder prefer text tokens: one constant hidden dimension (from
   * decoder.ln.bias) against a negative weight in every special token's
   * embedding. Random weights otherwise emit timestamp tokens at once, so
   * whisper.cpp re-encodes a new window every second of audio; with this,
   * every window decodes to the cap and the next window starts 30 s later,
   * for every contender alike.
   */
  textOnly?: boolean;
}

export const SHAPES: Record<string, Shape> = {
  'micro-f16': { header: 'for-tests-ggml-tiny.bin', quant: 'f16', state: 64, heads: 2, layers: 1 },
  'micro-q8_0': { header: 'for-tests-ggml-tiny.bin', quant: 'q8_0', state: 64, heads: 2, layers: 1 },
  'tiny-f16': { header: 'for-tests-ggml-tiny.bin', quant: 'f16' },
  'base-f16': { header: 'for-tests-ggml-base.bin', quant: 'f16' },
  'base-q8_0': { header: 'for-tests-ggml-base.bin', quant: 'q8_0' },
  'small-f16': { header: 'for-tests-ggml-small.bin', quant: 'f16' },
  'small-q8_0': { header: 'for-tests-ggml-small.bin', quant: 'q8_0' },
  'base-f16-ctx64': { header: 'for-tests-ggml-base.bin', quant: 'f16', textCtx: 64, textOnly: true },
  'base-q8_0-ctx64': { header: 'for-tests-ggml-base.bin', quant: 'q8_0', textCtx: 64, textOnly: true },
  'small-f16-ctx64': { header: 'for-tests-ggml-small.bin', quant: 'f16', textCtx: 64, textOnly: true },
  'small-q8_0-ctx64': { header: 'for-tests-ggml-small.bin', quant: 'q8_0', textCtx: 64, textOnly: true },
};
export const TEST_SET = ['micro-f16', 'micro-q8_0', 'tiny-f16'];

export function whisperTensors(h: Record<string, number>, wtype: number): Tensor[] {
  const s = h.n_audio_state;
  const t: Tensor[] = [];
  const add = (name: string, dims: number[], type: number, fill: Tensor['fill'] = 'random') => t.push({ name, dims, type, fill });
  const convType = wtype === TYPE_F32 ? TYPE_F32 : TYPE_F16;
  add('encoder.positional_embedding', [s, h.n_audio_ctx], TYPE_F32);
  add('encoder.conv1.weight', [3, h.n_mels, s], convType);
  add('encoder.conv1.bias', [1, s], TYPE_F32, 'zeros');
  add('encoder.conv2.weight', [3, s, s], convType);
  add('encoder.conv2.bias', [1, s], TYPE_F32, 'zeros');
  add('encoder.ln_post.weight', [s], TYPE_F32, 'ones');
  add('encoder.ln_post.bias', [s], TYPE_F32, 'zeros');
  const block = (prefix: string, cross: boolean) => {
    add(`${prefix}.mlp_ln.weight`, [s], TYPE_F32, 'ones');
    add(`${prefix}.mlp_ln.bias`, [s], TYPE_F32, 'zeros');
    add(`${prefix}.mlp.0.weight`, [s, 4 * s], wtype);
    add(`${prefix}.mlp.0.bias`, [4 * s], TYPE_F32, 'zeros');
    add(`${prefix}.mlp.2.weight`, [4 * s, s], wtype);
    add(`${prefix}.mlp.2.bias`, [s], TYPE_F32, 'zeros');
    const attn = (a: string) => {
      add(`${prefix}.${a}_ln.weight`, [s], TYPE_F32, 'ones');
      add(`${prefix}.${a}_ln.bias`, [s], TYPE_F32, 'zeros');
      add(`${prefix}.${a}.query.weight`, [s, s], wtype);
      add(`${prefix}.${a}.query.bias`, [s], TYPE_F32, 'zeros');
      add(`${prefix}.${a}.key.weight`, [s, s], wtype);
      add(`${prefix}.${a}.value.weight`, [s, s], wtype);
      add(`${prefix}.${a}.value.bias`, [s], TYPE_F32, 'zeros');
      add(`${prefix}.${a}.out.weight`, [s, s], wtype);
      add(`${prefix}.${a}.out.bias`, [s], TYPE_F32, 'zeros');
    };
    attn('attn');
    if (cross) attn('cross_attn');
  };
  for (let i = 0; i < h.n_audio_layer; i++) block(`encoder.blocks.${i}`, false);
  add('decoder.positional_embedding', [s, h.n_text_ctx], TYPE_F32);
  add('decoder.token_embedding.weight', [s, h.n_vocab], wtype);
  add('decoder.ln.weight', [s], TYPE_F32, 'ones');
  add('decoder.ln.bias', [s], TYPE_F32, 'zeros');
  for (let i = 0; i < h.n_text_layer; i++) block(`decoder.blocks.${i}`, true);
  return t;
}

/** First special token (end of text) of the multilingual vocabulary. */
const FIRST_SPECIAL = 50257;
const BIAS_DIM_VALUE = 10;
const SPECIAL_WEIGHT = -5;

/** The text-preferring decoder of `textOnly`: see Shape.textOnly. */
function preferText(t: Tensor, data: Buffer): void {
  if (t.name === 'decoder.ln.bias') data.writeFloatLE(BIAS_DIM_VALUE, 0);
  if (t.name !== 'decoder.token_embedding.weight') return;
  const [state, vocab] = t.dims;
  for (let row = FIRST_SPECIAL; row < vocab; row++) {
    if (t.type === TYPE_F16) data.writeUInt16LE(toHalf(SPECIAL_WEIGHT), row * state * 2);
    else {
      const block = (row * state) / 32;
      data.writeUInt16LE(toHalf(-SPECIAL_WEIGHT / 127), block * 34);
      data.writeInt8(-127, block * 34 + 2);
      for (let i = 1; i < 32; i++) data.writeInt8(0, block * 34 + 2 + i);
    }
  }
}

export async function makeWhisperModel(name: string, outDir = SYNTHETIC_DIR): Promise<string> {
  const shape = SHAPES[name];
  if (!shape) throw new Error(`unknown synthetic model ${name}; known: ${Object.keys(SHAPES).join(', ')}`);
  const file = path.join(outDir, `synthetic-${name}.bin`);
  if (existsSync(file)) return file;
  mkdirSync(outDir, { recursive: true });

  const src = readFileSync(path.join(FIXTURES, shape.header));
  const names = ['n_vocab', 'n_audio_ctx', 'n_audio_state', 'n_audio_head', 'n_audio_layer', 'n_text_ctx',
    'n_text_state', 'n_text_head', 'n_text_layer', 'n_mels', 'ftype'];
  const h: Record<string, number> = {};
  names.forEach((k, i) => (h[k] = src.readInt32LE(4 + i * 4)));
  if (shape.state) h.n_audio_state = h.n_text_state = shape.state;
  if (shape.heads) h.n_audio_head = h.n_text_head = shape.heads;
  if (shape.layers) h.n_audio_layer = h.n_text_layer = shape.layers;
  if (shape.textCtx) h.n_text_ctx = shape.textCtx;
  h.ftype = fileFtype(shape.quant);

  // The fixture holds magic, hparams, mel filters and vocabulary, and no tensors.
  const header = Buffer.from(src);
  names.forEach((k, i) => header.writeInt32LE(h[k], 4 + i * 4));

  const out = new ModelWriter(file);
  await out.write(header);
  const rng = new Rng(0x5eed ^ name.length);
  const wtype = shape.quant === 'q8_0' ? TYPE_Q8_0 : TYPE_F16;
  for (const t of whisperTensors(h, wtype)) {
    const data = tensorData(t, rng);
    if (shape.textOnly) preferText(t, data);
    await out.tensor(t, data);
  }
  return out.finish();
}

/** Any generated model by name: a Whisper shape or a Parakeet shape. */
export function makeModel(name: string, outDir = SYNTHETIC_DIR): Promise<string> {
  return name in PARAKEET_SHAPES ? makeParakeetModel(name, outDir) : makeWhisperModel(name, outDir);
}

/** The tiny random Parakeet fixture is already a complete model. */
export const PARAKEET_FIXTURE = path.join(FIXTURES, 'for-tests-ggml-parakeet-tdt.bin');

if (require.main === module) {
  const args = process.argv.slice(2);
  const outAt = args.indexOf('--out');
  const outDir = outAt >= 0 ? path.resolve(args[outAt + 1]) : SYNTHETIC_DIR;
  const wanted = args.filter((a, i) => !a.startsWith('--') && (outAt < 0 || i !== outAt + 1));
  const list = wanted.includes('all') ? [...Object.keys(SHAPES), ...Object.keys(PARAKEET_SHAPES)] : wanted.length ? wanted : TEST_SET;
  (async () => {
    for (const name of list) {
      const started = Date.now();
      const file = await makeModel(name, outDir);
      console.log(`${name}: ${file} (${Date.now() - started} ms)`);
    }
  })().catch((err) => {
    console.error(err.message);
    process.exit(1);
  });
}
