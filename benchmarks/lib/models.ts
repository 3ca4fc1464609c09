// Which model file a benchmark shape uses: the real Whisper base weights when
// `npm run models:real` installed them, otherwise the generated stand-in of
// the same shape (random weights, decoding capped by n_text_ctx = 64).
// Whisper small and Parakeet have no real weights here: always generated.
import { makeModel, realModelPath, type RealModelName } from '../../fixtures';

export interface BenchModel {
  file: string;
  weights: 'real' | 'random';
}

export async function benchModel(shape: string): Promise<BenchModel> {
  const m = /^base-(f16|q8_0)-ctx64$/.exec(shape);
  if (m && !process.env.STT_BENCH_RANDOM_WEIGHTS) {
    try {
      return { file: realModelPath(`base-${m[1]}` as RealModelName), weights: 'real' };
    } catch {
      // not installed: the generated model below
    }
  }
  return { file: await makeModel(shape), weights: 'random' };
}
