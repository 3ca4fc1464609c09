import { makeWhisperModel, PARAKEET_FIXTURE } from '../../scripts/make-models';

export { PARAKEET_FIXTURE };
export const microModel = (): Promise<string> => makeWhisperModel('micro-f16');
export const tinyModel = (): Promise<string> => makeWhisperModel('tiny-f16');
