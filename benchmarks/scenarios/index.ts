// The scenario types of `npm run bench`, by the `type` SCENARIOS
// (benchmarks/trials.ts) names them with: one file each.
import type { ScenarioType } from './context';
import { overhead } from './overhead';
import { control } from './control';
import { floor } from './floor';
import { load } from './load';
import { naive } from './naive';
import { coldStart } from './cold-start';
import { store } from './store';
import { fasterWhisper } from './faster-whisper';
import { contention } from './contention';

export const SCENARIO_TYPES = { overhead, control, floor, load, naive, 'cold-start': coldStart, store, 'faster-whisper': fasterWhisper, contention } satisfies Record<string, ScenarioType>;
export type ScenarioTypeName = keyof typeof SCENARIO_TYPES;
export * from './context';
