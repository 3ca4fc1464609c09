// The CTranslate2 → ggml converter on the real base weights: it reproduces the
// installed file byte for byte, and refuses, naming the tensor, a model whose
// names, shapes or fused biases are not what whisper.cpp expects.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readCt2Model, type Ct2Model } from '../../scripts/lib/ct2-model';
import { convertCt2Whisper } from '../../scripts/lib/ct2-whisper-to-ggml';
import { FIXTURES } from '../../scripts/lib/model-paths';
import { joinedModelPath, REAL_MODELS, REAL_MODELS_DIR, realModelPath, vocabularyPath } from '../../scripts/lib/real-models';

const base = REAL_MODELS.find((m) => m.size === 'base')!;
const source = base.sources[0];
const header = path.join(FIXTURES, base.fixtureHeader);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'stt-convert-'));
let modelBin: Buffer;
let vocab: string[];

before(() => {
  realModelPath('base-f16'); // fails with the reason when models:real has not run
  const joined = joinedModelPath(source);
  assert.ok(existsSync(joined), `${joined} (kept by models:real)`);
  modelBin = readFileSync(joined);
  vocab = JSON.parse(readFileSync(vocabularyPath(source), 'utf8'));
});

const fresh = (): Ct2Model => readCt2Model(modelBin);
const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

test('converting again gives the installed ggml-base.bin byte for byte', async () => {
  const out = path.join(tmp, 'again.bin');
  assert.equal(await convertCt2Whisper(fresh(), vocab, header, out), 245);
  const state = JSON.parse(readFileSync(path.join(REAL_MODELS_DIR, 'state.json'), 'utf8'));
  assert.equal(sha256(out), state.files['ggml-base.bin'].sha256);
});

test('a wrong shape, a missing tensor or a non-zero key bias is refused by name', async () => {
  const wrongShape = fresh();
  const v = wrongShape.variables.get('encoder/layer_2/ffn/linear_1/weight')!;
  wrongShape.variables.set(v.name, { ...v, dims: [v.dims[1], v.dims[0]] });
  await assert.rejects(convertCt2Whisper(wrongShape, vocab, header, path.join(tmp, 'a.bin')),
    /encoder\.blocks\.2\.mlp\.2\.weight: the weights give shape \[512,2048\], whisper\.cpp expects \[2048,512\]/);

  const missing = fresh();
  missing.variables.delete('decoder/layer_3/attention/linear_2/bias');
  await assert.rejects(convertCt2Whisper(missing, vocab, header, path.join(tmp, 'b.bin')), /no decoder\/layer_3\/attention\/linear_2\/bias/);

  const keyBias = fresh();
  const b = keyBias.variables.get('encoder/layer_1/self_attention/linear_0/bias')!;
  const data = Buffer.from(b.data);
  data.writeUInt16LE(0x3c00, 2 * 512 + 10); // 1.0 inside the key slice
  keyBias.variables.set(b.name, { ...b, data });
  await assert.rejects(convertCt2Whisper(keyBias, vocab, header, path.join(tmp, 'c.bin')), /linear_0\/bias: the key bias is not zero/);

  const otherSize = fresh();
  const emb = otherSize.variables.get('decoder/embeddings/weight')!;
  otherSize.variables.set(emb.name, { ...emb, dims: [51864, 512] });
  await assert.rejects(convertCt2Whisper(otherSize, vocab, header, path.join(tmp, 'd.bin')), /n_vocab: the weights say 51864/);

  assert.throws(() => readCt2Model(modelBin.subarray(0, modelBin.length - 100)), /truncated/);
});
