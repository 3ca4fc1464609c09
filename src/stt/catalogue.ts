// The built-in local runtimes (contract: "Built-in local runtimes") and where
// their files come from. Only these ids and file names are ever used to build
// a path: nothing a client sends becomes part of one.
import path from 'node:path';
import { stat } from 'node:fs/promises';
import { PARAKEET_V3_LANGUAGES, WHISPER_LANGUAGES } from './languages';
import type { ModelFamily } from '../native';

export interface RuntimeFile {
  name: string;
  /** Path under STT_MODEL_BASE_URL. */
  urlPath: string;
  bytes?: number;
  sha256?: string;
}

export interface RuntimeSpec {
  id: string;
  family: ModelFamily;
  /** First found wins. */
  files: RuntimeFile[];
  languages: ReadonlySet<string>;
  supportsPrompt: boolean;
}

const whisperLanguages = new Set(Object.keys(WHISPER_LANGUAGES));
// Sizes and sha256 of whisper.cpp's hosted files (huggingface.co/ggerganov/whisper.cpp, the LFS oids):
// ggml-base.bin, -base-q5_1 and -small-q5_1 from ../shared/fixtures/models/README.md; base-q8_0,
// small and small-q8_0 from a public model registry that pins the same LFS oids (its values for
// the three files above match the fixtures README). No published checksum was found for the
// Parakeet conversions: they download only with STT_ALLOW_UNPINNED_MODELS=true, their sha256
// recorded and reported as not verified.
const file = (name: string, bytes?: number, sha256?: string, urlPath = name): RuntimeFile => ({ name, urlPath, bytes, sha256 });

export const RUNTIMES: readonly RuntimeSpec[] = [
  {
    id: 'whisper-base',
    family: 'whisper',
    files: [
      file('ggml-base-q8_0.bin', 81768585, 'c577b9a86e7e048a0b7eada054f4dd79a56bbfa911fbdacf900ac5b567cbb7d9'),
      file('ggml-base.bin', 147951465, '60ed5bc3dd14eea856493d334349b405782ddcaf0028d4b5df4088345fba2efe'),
      file('ggml-base-q5_1.bin', 59707625, '422f1ae452ade6f30a004d7e5c6a43195e4433bc370bf23fac9cc591f01a8898'),
    ],
    languages: whisperLanguages,
    supportsPrompt: true,
  },
  {
    id: 'whisper-small',
    family: 'whisper',
    files: [
      file('ggml-small-q8_0.bin', 264464607, '49c8fb02b65e6049d5fa6c04f81f53b867b5ec9540406812c643f177317f779f'),
      file('ggml-small.bin', undefined, '1be3a9b2063867b937e64e2ec7483364a79917e157fa98c5d94b5c1fffea987b'),
      file('ggml-small-q5_1.bin', 190085487, 'ae85e4a935d7a567bd102fe55afc16bb595bdb618e11b2fc7591bc08120411bb'),
    ],
    languages: whisperLanguages,
    supportsPrompt: true,
  },
  {
    id: 'parakeet-tdt-0.6b-v3',
    family: 'parakeet',
    files: [file('parakeet-tdt-0.6b-v3-q8_0.bin'), file('parakeet-tdt-0.6b-v3-f16.bin')],
    languages: PARAKEET_V3_LANGUAGES,
    supportsPrompt: false,
  },
];

/**
 * Silero VAD v6.2.0 in ggml form, used with every local runtime (fetched
 * from STT_VAD_MODEL_URL beside a runtime's download). Size and sha256 of
 * ../shared/fixtures/models/for-tests-silero-v6.2.0-ggml.bin, which its
 * README states is identical to the released ggml-silero-v6.2.0.bin.
 */
export const VAD_FILE: RuntimeFile = file('ggml-silero-v6.2.0.bin', 885098, '2aa269b785eeb53a82983a20501ddf7c1d9c48e33ab63a41391ac6c9f7fb6987');

export function runtimeById(id: string): RuntimeSpec | undefined {
  return RUNTIMES.find((r) => r.id === id);
}

/** The first of the runtime's files present in the models directory. */
export async function installedFile(modelsDir: string, spec: RuntimeSpec): Promise<{ path: string; name: string; bytes: number } | null> {
  for (const f of spec.files) {
    const p = path.join(modelsDir, f.name);
    try {
      const s = await stat(p);
      if (s.isFile()) return { path: p, name: f.name, bytes: s.size };
    } catch {
      // not this one
    }
  }
  return null;
}
