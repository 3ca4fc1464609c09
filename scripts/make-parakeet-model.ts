// Generates Parakeet TDT models with random weights in the exact shape of
// NVIDIA's parakeet-tdt-0.6b-v3 as whisper.cpp's converter writes it
// (models/convert-parakeet-to-ggml.py; tensor shapes as parakeet.cpp's loader
// creates them). No Parakeet vocabulary is available here, so the 8192 pieces
// are real subwords taken from the Whisper fixture's vocabulary, spelt the
// SentencePiece way; the mel filters (Slaney, 128 x 257) and the Hann window
// are computed as NeMo's preprocessor does.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileFtype, ModelWriter, Rng, tensorData, TYPE_F16, TYPE_F32, TYPE_Q8_0, type Quant, type Tensor } from './lib/ggml-writer';
import { FIXTURES } from './lib/model-paths';

/** parakeet-tdt-0.6b-v3 (NeMo config), in the order of the ggml header. */
const HPARAMS_0_6B = {
  n_vocab: 8192,
  n_audio_ctx: 5000, // what the converter writes
  n_audio_state: 1024,
  n_audio_head: 8,
  n_audio_layer: 24,
  n_mels: 128,
  ftype: 0,
  n_fft: 512,
  subsampling_factor: 8,
  n_subsampling_channels: 256,
  n_conv_kernel: 9,
  n_pred_dim: 640,
  n_pred_layers: 2,
  n_tdt_durations: 5,
  n_max_tokens: 10,
};
type Hparams = typeof HPARAMS_0_6B;
const TDT_DURATIONS = [0, 1, 2, 3, 4];
const WINDOW_LENGTH = 400; // 25 ms at 16 kHz
const SAMPLE_RATE = 16000;

export const PARAKEET_SHAPES: Record<string, { quant: Quant }> = {
  'parakeet-0.6b-f16': { quant: 'f16' },
  'parakeet-0.6b-q8_0': { quant: 'q8_0' },
};

/**
 * Random weights would make the greedy TDT decoder emit up to n_max_tokens
 * symbols on every frame. The joint bias instead favours one text piece with
 * a 4-frame duration: one token per 320 ms, about the rate of real speech,
 * so decode cost is realistic and equal for every contender.
 */
const SPOKEN_PIECE = 300;
const JOINT_BIAS = 8;

function parakeetTensors(h: Hparams, wtype: number): Tensor[] {
  const t: Tensor[] = [];
  const add = (name: string, dims: number[], type: number, fill: Tensor['fill'] = 'random') => t.push({ name, dims, type, fill });
  const s = h.n_audio_state;
  const ch = h.n_subsampling_channels;
  add('encoder.pre_encode.out.weight', [(h.n_mels / h.subsampling_factor) * ch, s], wtype);
  add('encoder.pre_encode.out.bias', [s], TYPE_F32, 'zeros');
  for (const conv of [0, 2, 3, 5, 6]) {
    const pointwise = conv === 3 || conv === 6;
    add(`encoder.pre_encode.conv.${conv}.weight`, pointwise ? [1, 1, ch, ch] : [3, 3, 1, ch], TYPE_F32);
    add(`encoder.pre_encode.conv.${conv}.bias`, [1, 1, ch, 1], TYPE_F32, 'zeros');
  }
  const norm = (name: string) => {
    add(`${name}.weight`, [s], TYPE_F32, 'ones');
    add(`${name}.bias`, [s], TYPE_F32, 'zeros');
  };
  for (let i = 0; i < h.n_audio_layer; i++) {
    const p = `encoder.layers.${i}`;
    norm(`${p}.norm_feed_forward1`);
    add(`${p}.feed_forward1.linear1.weight`, [s, 4 * s], wtype);
    add(`${p}.feed_forward1.linear2.weight`, [4 * s, s], wtype);
    norm(`${p}.norm_conv`);
    add(`${p}.conv.pointwise_conv1.weight`, [s, 2 * s], wtype);
    add(`${p}.conv.depthwise_conv.weight`, [h.n_conv_kernel, s], TYPE_F32);
    add(`${p}.conv.batch_norm.weight`, [s], TYPE_F32, 'ones');
    add(`${p}.conv.batch_norm.bias`, [s], TYPE_F32, 'zeros');
    add(`${p}.conv.batch_norm.running_mean`, [s], TYPE_F32, 'zeros');
    add(`${p}.conv.batch_norm.running_var`, [s], TYPE_F32, 'ones');
    // A 0-dim torch scalar; the converter writes it with rank 0 as f32.
    add(`${p}.conv.batch_norm.num_batches_tracked`, [], TYPE_F32, 'zeros');
    add(`${p}.conv.pointwise_conv2.weight`, [s, s], wtype);
    norm(`${p}.norm_self_att`);
    add(`${p}.self_attn.pos_bias_u`, [s / h.n_audio_head, h.n_audio_head], TYPE_F32);
    add(`${p}.self_attn.pos_bias_v`, [s / h.n_audio_head, h.n_audio_head], TYPE_F32);
    for (const proj of ['q', 'k', 'v', 'out', 'pos']) add(`${p}.self_attn.linear_${proj}.weight`, [s, s], wtype);
    norm(`${p}.norm_feed_forward2`);
    add(`${p}.feed_forward2.linear1.weight`, [s, 4 * s], wtype);
    add(`${p}.feed_forward2.linear2.weight`, [4 * s, s], wtype);
    norm(`${p}.norm_out`);
  }
  const d = h.n_pred_dim;
  add('decoder.prediction.embed.weight', [d, h.n_vocab + 1], wtype);
  for (let i = 0; i < h.n_pred_layers; i++) {
    add(`decoder.prediction.dec_rnn.lstm.weight_ih_l${i}`, [d, 4 * d], wtype);
    add(`decoder.prediction.dec_rnn.lstm.weight_hh_l${i}`, [d, 4 * d], wtype);
    add(`decoder.prediction.dec_rnn.lstm.bias_h_l${i}`, [4 * d], TYPE_F32, 'zeros');
  }
  add('joint.pred.weight', [d, d], wtype);
  add('joint.pred.bias', [d], TYPE_F32, 'zeros');
  add('joint.enc.weight', [s, d], wtype);
  add('joint.enc.bias', [d], TYPE_F32, 'zeros');
  add('joint.joint_net.2.weight', [d, h.n_vocab + h.n_tdt_durations + 1], wtype);
  add('joint.joint_net.2.bias', [h.n_vocab + h.n_tdt_durations + 1], TYPE_F32, 'zeros');
  return t;
}

/** librosa's Slaney mel scale and normalisation, as NeMo's featurizer uses. */
function slaneyMelFilters(nMels: number, nFft: number): Float32Array {
  const minLogHz = 1000;
  const minLogMel = minLogHz / (200 / 3);
  const logStep = Math.log(6.4) / 27;
  const hzToMel = (f: number) => (f < minLogHz ? f / (200 / 3) : minLogMel + Math.log(f / minLogHz) / logStep);
  const melToHz = (m: number) => (m < minLogMel ? m * (200 / 3) : minLogHz * Math.exp(logStep * (m - minLogMel)));
  const nBins = nFft / 2 + 1;
  const top = hzToMel(SAMPLE_RATE / 2);
  const edges = Array.from({ length: nMels + 2 }, (_, i) => melToHz((top * i) / (nMels + 1)));
  const out = new Float32Array(nMels * nBins);
  for (let m = 0; m < nMels; m++) {
    const [lo, mid, hi] = [edges[m], edges[m + 1], edges[m + 2]];
    const norm = 2 / (hi - lo);
    for (let b = 0; b < nBins; b++) {
      const f = (b * SAMPLE_RATE) / nFft;
      const w = Math.max(0, Math.min((f - lo) / (mid - lo), (hi - f) / (hi - mid)));
      out[m * nBins + b] = w * norm;
    }
  }
  return out;
}

/** torch.hann_window(400, periodic=False). */
function hannWindow(n: number): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (n - 1)));
}

/** Real subwords from the Whisper fixture, "▁" marking a word start as in SentencePiece. */
function subwordVocabulary(n: number): Buffer[] {
  const src = readFileSync(path.join(FIXTURES, 'for-tests-ggml-base.bin'));
  let off = 4 + 11 * 4;
  const nMel = src.readInt32LE(off);
  const nFft = src.readInt32LE(off + 4);
  off += 8 + nMel * nFft * 4;
  const count = src.readInt32LE(off);
  off += 4;
  const pieces = [Buffer.from('<unk>')];
  const seen = new Set<string>();
  for (let i = 0; i < count && pieces.length < n; i++) {
    const len = src.readUInt32LE(off);
    const bytes = src.subarray(off + 4, off + 4 + len);
    off += 4 + len;
    const text = bytes.toString('utf8');
    // Skip byte tokens and anything that is not clean UTF-8 text.
    if (i < 256 || text.includes('\uFFFD') || !/^ ?[\p{L}\p{N}'.,!?-]+$/u.test(text)) continue;
    const piece = text.replace(/^ /, '\u2581');
    if (seen.has(piece)) continue;
    seen.add(piece);
    pieces.push(Buffer.from(piece));
  }
  if (pieces.length < n) throw new Error(`the Whisper fixture gave only ${pieces.length} subwords, need ${n}`);
  return pieces;
}

function int32s(...values: number[]): Buffer {
  const b = Buffer.alloc(4 * values.length);
  values.forEach((v, i) => b.writeInt32LE(v, 4 * i));
  return b;
}

function header(h: Hparams): Buffer {
  const nBins = h.n_fft / 2 + 1;
  const vocab = subwordVocabulary(h.n_vocab);
  return Buffer.concat([
    Buffer.from('lmgg', 'latin1'), // 0x67676d6c little-endian
    int32s(...Object.values(h)),
    int32s(h.n_mels, nBins),
    Buffer.from(slaneyMelFilters(h.n_mels, h.n_fft).buffer),
    int32s(WINDOW_LENGTH),
    Buffer.from(hannWindow(WINDOW_LENGTH).buffer),
    int32s(...TDT_DURATIONS),
    int32s(h.n_vocab),
    ...vocab.flatMap((piece) => [int32s(piece.length), piece]),
  ]);
}

export async function makeParakeetModel(name: string, outDir: string): Promise<string> {
  const shape = PARAKEET_SHAPES[name];
  if (!shape) throw new Error(`unknown synthetic Parakeet model ${name}; known: ${Object.keys(PARAKEET_SHAPES).join(', ')}`);
  const file = path.join(outDir, `synthetic-${name}.bin`);
  if (existsSync(file)) return file;
  mkdirSync(outDir, { recursive: true });
  const h = { ...HPARAMS_0_6B, ftype: fileFtype(shape.quant) };
  const out = new ModelWriter(file);
  await out.write(header(h));
  const rng = new Rng(0x9a4a ^ name.length);
  for (const t of parakeetTensors(h, shape.quant === 'q8_0' ? TYPE_Q8_0 : TYPE_F16)) {
    const data = tensorData(t, rng);
    if (t.name === 'joint.joint_net.2.bias') {
      data.writeFloatLE(JOINT_BIAS, SPOKEN_PIECE * 4);
      data.writeFloatLE(JOINT_BIAS, (h.n_vocab + 1 + TDT_DURATIONS.indexOf(4)) * 4);
    }
    await out.tensor(t, data);
  }
  return out.finish();
}
