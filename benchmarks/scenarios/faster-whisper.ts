// Ours against faster-whisper (CTranslate2) on the same real Whisper base
// weights: the comparison of benchmarks/faster-whisper.ts (5-, 30- and 120-s
// clips; greedy and beam 5; q8_0/f16 against int8/float32; time, RTF and WER
// side by side), run inside `npm run bench`. Real weights only: faster-whisper
// needs the CTranslate2 model they were converted from.
import { compareWithFasterWhisper } from '../faster-whisper';
import type { ScenarioType } from './context';

export const fasterWhisper: ScenarioType = {
  phase: 'alone',
  async run({ bench, shape }) {
    if (shape.weights !== 'real') {
      bench.log('faster-whisper: skipped, the real base weights are not installed (npm run models:real)');
      return {};
    }
    return { fasterWhisper: { lines: await compareWithFasterWhisper(bench.quick) } };
  },
};
