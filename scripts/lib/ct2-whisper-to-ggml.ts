// Converts a CTranslate2 (faster-whisper) Whisper model into whisper.cpp's
// ggml layout exactly as models/convert-pt-to-ggml.py writes it: the header
// and mel filters of the fixture header for that size, the vocabulary,
// then every tensor whisper.cpp loads, matrices in f16 and 1-D tensors, conv
// biases and positional embeddings in f32. CTranslate2 fuses what Whisper
// keeps apart; this splits it back:
//   self_attention/linear_0 = [query; key; value] rows, attention/linear_1 =
//   [key; value] rows (cross-attention), and their key-bias slices are zeros
//   (Whisper's key projection has no bias; whisper.cpp has no such tensor).
// The expected names and shapes come from the same table the random-weight
// generator uses (make-models.ts), and every tensor is checked against it.
import { readFileSync } from 'node:fs';
import { whisperTensors } from '../make-models';
import { fromHalf, ModelWriter, TYPE_F16, TYPE_F32, type Tensor } from './ggml-writer';
import type { Ct2Model, Ct2Variable } from './ct2-model';

const HPARAMS = ['n_vocab', 'n_audio_ctx', 'n_audio_state', 'n_audio_head', 'n_audio_layer', 'n_text_ctx',
  'n_text_state', 'n_text_head', 'n_text_layer', 'n_mels', 'ftype'] as const;
type Hparams = Record<(typeof HPARAMS)[number], number>;

/** GPT-2's byte ↔ printable-character table: vocabulary.json spells token bytes with it. */
function unicodeToByte(): Map<string, number> {
  const bs: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) bs.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
  for (let b = 0xae; b <= 0xff; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  return new Map(bs.map((b, i) => [String.fromCodePoint(cs[i]), b]));
}

/** The fixture: magic, hparams, mel filters, vocabulary; no tensors. */
export function readFixtureHeader(file: string): { hparams: Hparams; mel: Buffer; tokens: Buffer[] } {
  const b = readFileSync(file);
  if (b.readUInt32LE(0) !== 0x67676d6c) throw new Error(`${file} is not a ggml file`);
  const hparams = Object.fromEntries(HPARAMS.map((k, i) => [k, b.readInt32LE(4 + 4 * i)])) as Hparams;
  const nMel = b.readInt32LE(48);
  const nFft = b.readInt32LE(52);
  const melEnd = 56 + 4 * nMel * nFft;
  const tokens: Buffer[] = [];
  let pos = melEnd + 4;
  for (let i = b.readInt32LE(melEnd); i > 0; i--) {
    const len = b.readUInt32LE(pos);
    tokens.push(b.subarray(pos + 4, pos + 4 + len));
    pos += 4 + len;
  }
  return { hparams, mel: b.subarray(48, melEnd), tokens };
}

/**
 * The package's vocabulary as bytes: the text tokens before <|endoftext|>
 * (whisper.cpp adds the special and timestamp tokens itself). The fixture's
 * copy replaced bytes that are not UTF-8 with U+FFFD, so it cannot serve
 * non-English text; every token it kept intact must agree with this one.
 */
export function vocabularyBytes(vocab: string[], fixtureTokens: Buffer[]): Buffer[] {
  const eot = vocab.indexOf('<|endoftext|>');
  if (eot < 0) throw new Error('the vocabulary has no <|endoftext|>');
  const table = unicodeToByte();
  const tokens = vocab.slice(0, eot).map((t) =>
    Buffer.from([...t].map((ch) => {
      const byte = table.get(ch);
      if (byte === undefined) throw new Error(`vocabulary token ${JSON.stringify(t)} has a character outside GPT-2's byte table`);
      return byte;
    })),
  );
  if (tokens.length !== fixtureTokens.length) {
    throw new Error(`vocabulary has ${tokens.length} text tokens, the fixture header ${fixtureTokens.length}`);
  }
  fixtureTokens.forEach((f, i) => {
    if (!f.toString('utf8').includes('\uFFFD') && !f.equals(tokens[i])) throw new Error(`vocabulary token ${i} differs from the fixture's`);
  });
  return tokens;
}

function f16Bytes(v: Ct2Variable): Buffer {
  if (v.dtype === 'float16') return v.data;
  throw new Error(`${v.name}: expected float16 weights, got ${v.dtype} (an int8 model needs de-quantising first)`);
}

function f32Bytes(v: Ct2Variable): Buffer {
  if (v.dtype === 'float32') return v.data;
  const n = v.data.length / 2;
  const out = Buffer.alloc(n * 4);
  for (let i = 0; i < n; i++) out.writeFloatLE(fromHalf(v.data.readUInt16LE(2 * i)), 4 * i);
  if (v.dtype !== 'float16') throw new Error(`${v.name}: unexpected dtype ${v.dtype}`);
  return out;
}

/** Rows [from, to) of a row-major matrix (or vector) as bytes. */
function rows(v: Ct2Variable, from: number, to: number, bytes: Buffer): Buffer {
  const rowBytes = bytes.length / v.dims[0];
  return bytes.subarray(from * rowBytes, to * rowBytes);
}

/** Shape of the source for `name`, in ggml order (reversed), after any split. */
interface Source {
  dims: number[];
  data: Buffer;
}

function sourceFor(m: Ct2Model, name: string, type: number, d: number): Source {
  const get = (n: string): Ct2Variable => {
    const v = m.variables.get(n) ?? m.variables.get(m.aliases.get(n) ?? '');
    if (!v) throw new Error(`the CTranslate2 model has no ${n} (needed for ${name})`);
    return v;
  };
  const bytes = (v: Ct2Variable) => (type === TYPE_F32 ? f32Bytes(v) : f16Bytes(v));
  const whole = (n: string, dims?: number[]): Source => {
    const v = get(n);
    return { dims: dims ?? [...v.dims].reverse(), data: bytes(v) };
  };
  const slice = (n: string, part: number): Source => {
    const v = get(n);
    const data = rows(v, part * d, (part + 1) * d, bytes(v));
    return { dims: v.dims.length === 2 ? [v.dims[1], d] : [d], data };
  };
  const zeroKeyBias = (n: string, part: number) => {
    const v = get(n);
    const key = rows(v, part * d, (part + 1) * d, f32Bytes(v));
    for (let i = 0; i < key.length; i += 4) if (key.readFloatLE(i) !== 0) throw new Error(`${n}: the key bias is not zero; Whisper has none`);
  };

  const fixed: Record<string, () => Source> = {
    'encoder.positional_embedding': () => whole('encoder/position_encodings/encodings'),
    'encoder.conv1.weight': () => whole('encoder/conv1/weight'),
    'encoder.conv1.bias': () => whole('encoder/conv1/bias', [1, get('encoder/conv1/bias').dims[0]]),
    'encoder.conv2.weight': () => whole('encoder/conv2/weight'),
    'encoder.conv2.bias': () => whole('encoder/conv2/bias', [1, get('encoder/conv2/bias').dims[0]]),
    'encoder.ln_post.weight': () => whole('encoder/layer_norm/gamma'),
    'encoder.ln_post.bias': () => whole('encoder/layer_norm/beta'),
    'decoder.positional_embedding': () => whole('decoder/position_encodings/encodings'),
    'decoder.token_embedding.weight': () => whole('decoder/embeddings/weight'),
    'decoder.ln.weight': () => whole('decoder/layer_norm/gamma'),
    'decoder.ln.bias': () => whole('decoder/layer_norm/beta'),
  };
  if (fixed[name]) return fixed[name]();

  const m1 = /^(encoder|decoder)\.blocks\.(\d+)\.(.+)\.(weight|bias)$/.exec(name);
  if (!m1) throw new Error(`no source known for ${name}`);
  const [, side, layer, part, kind] = m1;
  const base = `${side}/layer_${layer}`;
  const ln = (ct: string) => whole(`${base}/${ct}/layer_norm/${kind === 'weight' ? 'gamma' : 'beta'}`);
  const lin = (ct: string) => whole(`${base}/${ct}/${kind}`);
  switch (part) {
    case 'attn_ln': return ln('self_attention');
    case 'cross_attn_ln': return ln('attention');
    case 'mlp_ln': return ln('ffn');
    case 'mlp.0': return lin('ffn/linear_0');
    case 'mlp.2': return lin('ffn/linear_1');
    case 'attn.out': return lin('self_attention/linear_1');
    case 'cross_attn.query': return lin('attention/linear_0');
    case 'cross_attn.out': return lin('attention/linear_2');
    case 'attn.query': return slice(`${base}/self_attention/linear_0/${kind}`, 0);
    case 'attn.key':
      zeroKeyBias(`${base}/self_attention/linear_0/bias`, 1);
      return slice(`${base}/self_attention/linear_0/weight`, 1);
    case 'attn.value': return slice(`${base}/self_attention/linear_0/${kind}`, 2);
    case 'cross_attn.key':
      zeroKeyBias(`${base}/attention/linear_1/bias`, 0);
      return slice(`${base}/attention/linear_1/weight`, 0);
    case 'cross_attn.value': return slice(`${base}/attention/linear_1/${kind}`, 1);
    default: throw new Error(`no source known for ${name}`);
  }
}

/** Writes the f16 ggml model; returns the number of tensors written. */
export async function convertCt2Whisper(m: Ct2Model, vocab: string[], fixtureHeaderFile: string, out: string): Promise<number> {
  if (m.spec !== 'WhisperSpec') throw new Error(`not a Whisper model: spec "${m.spec}"`);
  const fixture = readFixtureHeader(fixtureHeaderFile);
  const h: Hparams = { ...fixture.hparams, ftype: TYPE_F16 };
  // The fixture's hyper-parameters must be what the weights have.
  const shape = (n: string) => m.variables.get(n)?.dims ?? [];
  const scalar = (n: string) => m.variables.get(n)?.data.readInt16LE(0);
  const checks: [string, number | undefined, number][] = [
    ['n_vocab', shape('decoder/embeddings/weight')[0], h.n_vocab],
    ['n_audio_state', shape('encoder/conv1/weight')[0], h.n_audio_state],
    ['n_mels', shape('encoder/conv1/weight')[1], h.n_mels],
    ['n_audio_ctx', shape('encoder/position_encodings/encodings')[0], h.n_audio_ctx],
    ['n_text_ctx', shape('decoder/position_encodings/encodings')[0], h.n_text_ctx],
    ['n_audio_head', scalar('encoder/num_heads'), h.n_audio_head],
    ['n_text_head', scalar('decoder/num_heads'), h.n_text_head],
    ['n_audio_layer', [...m.variables.keys()].filter((k) => /^encoder\/layer_\d+\/ffn\/linear_0\/weight$/.test(k)).length, h.n_audio_layer],
    ['n_text_layer', [...m.variables.keys()].filter((k) => /^decoder\/layer_\d+\/ffn\/linear_0\/weight$/.test(k)).length, h.n_text_layer],
  ];
  for (const [what, got, want] of checks) {
    if (got !== want) throw new Error(`${what}: the weights say ${got}, the fixture header ${fixtureHeaderFile} says ${want}`);
  }
  const tokens = vocabularyBytes(vocab, fixture.tokens);

  const header = Buffer.alloc(4 + 4 * HPARAMS.length);
  header.writeUInt32LE(0x67676d6c, 0);
  HPARAMS.forEach((k, i) => header.writeInt32LE(h[k], 4 + 4 * i));
  const vocabBlock = Buffer.concat([
    Buffer.from(Int32Array.of(tokens.length).buffer),
    ...tokens.flatMap((t) => [Buffer.from(Int32Array.of(t.length).buffer), t]),
  ]);

  const writer = new ModelWriter(out);
  await writer.write(header);
  await writer.write(fixture.mel);
  await writer.write(vocabBlock);
  const expected: Tensor[] = whisperTensors(h, TYPE_F16);
  for (const t of expected) {
    const src = sourceFor(m, t.name, t.type, h.n_audio_state);
    if (src.dims.join(',') !== t.dims.join(',')) {
      throw new Error(`${t.name}: the weights give shape [${src.dims}], whisper.cpp expects [${t.dims}]`);
    }
    const bytesPer = t.type === TYPE_F32 ? 4 : 2;
    if (src.data.length !== t.dims.reduce((a, b) => a * b, 1) * bytesPer) throw new Error(`${t.name}: wrong byte count`);
    await writer.tensor(t, src.data);
  }
  await writer.finish();
  return expected.length;
}
