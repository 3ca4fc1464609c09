// `npx tsx benchmarks/studies/hallucination.ts [--model base-q8_0] [--eval]`:
// what Whisper writes where nobody speaks, and what each guard leaves of it.
// The set (fixtures/hallucination-set.ts): silence, room noise, hum, music,
// clapping and a ringing phone, 5-60 s each, made by sox; and speech with
// 5-60 s pauses (hifitts utterances in quiet noise). Every clip is decoded as
// the server ships (its default beam size, temperature fallback, the full window, no
// `language`: what an app sends by default): without Silero, with its speech
// gate (the whole audio decoded, the segments of 30-s windows without speech dropped,
// no decode where there is no speech: on in the server when the Silero model
// is installed), and with VAD cutting the audio to the speech (STT_VAD). The
// annotation filter (src/stt/non-speech.ts, on in the server) is applied to
// each output afterwards, so "X" and "X + filter" come from one decode.
// `--eval`: what the gate costs in accuracy, on the held-out eval set's test
// half (npm run eval:set), each clip with and without it, a paired bootstrap. Counted: words in the text (every whitespace-separated piece, tags
// included), loops (a 4-gram three or more times), and for the paused speech
// the words whose start lies 0.3 s outside every utterance, and WER.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { decodeWav, loadModel, type Transcription } from '../../src/native';
import { readEvalSet } from '../../scripts/eval-set';
import { alignErrors, errorCount, pairedBootstrap, scoringWords, type PerClip } from '../lib/scoring';
import { DEFAULT_BEAM_SIZE } from '../../src/config';
import { withoutAnnotations } from '../../src/stt/non-speech';
import { textErrors } from '../../scripts/lib/english-normalizer';
import { realModelPath, VAD_FIXTURE, type RealModelName } from '../../fixtures';
import { NO_SPEECH_CLIPS, noSpeechPcm, pausedSpeechClips } from '../../fixtures/hallucination-set';
import { provenance, commitState } from '../lib/provenance';
import { saveReport, today } from '../lib/results';
import { fmt } from '../lib/stats';

const THREADS = 2;
type Mode = 'no gate' | 'gate' | 'VAD';
type Variant = `${Mode}${'' | ' + filter'}`;
const MODES: Mode[] = ['no gate', 'gate', 'VAD'];
const VARIANTS: Variant[] = MODES.flatMap((m) => [m, `${m} + filter`] as Variant[]);
const listen = (mode: Mode) => (mode === 'no gate' ? {} : { vad: { modelPath: VAD_FIXTURE }, speechGate: mode === 'gate' });

interface Row { clip: string; kind: string; seconds: number; variant: Variant; words: number; loops: number; inSilence: number | null; errors: number | null; refWords: number | null; ms: number; text: string }

const words = (text: string) => text.split(/\s+/).filter(Boolean);

/** A 4-gram of the normalised words occurring three or more times: a decoding loop. */
function loops(text: string): number {
  const w = words(text.toLowerCase().replace(/[^\p{L}\p{N}\s']/gu, ' '));
  const seen = new Map<string, number>();
  for (let i = 0; i + 4 <= w.length; i++) {
    const g = w.slice(i, i + 4).join(' ');
    seen.set(g, (seen.get(g) ?? 0) + 1);
  }
  return [...seen.values()].some((n) => n >= 3) ? 1 : 0;
}

function wordsOutside(r: Transcription, speech: { start: number; end: number }[]): number {
  const heard = (t: number) => speech.some((u) => t >= u.start - 0.3 && t <= u.end + 0.3);
  return r.segments.flatMap((s) => s.words ?? []).filter((w) => !heard(w.start)).length;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const name = (args.includes('--model') ? args[args.indexOf('--model') + 1] : 'base-q8_0') as RealModelName;
  const prov = provenance();
  const model = await loadModel(realModelPath(name));
  const clips: { id: string; kind: string; pcm: Float32Array; seconds: number; reference?: string; speech?: { start: number; end: number }[] }[] = [];
  for (const c of NO_SPEECH_CLIPS) clips.push({ id: c.id, kind: c.kind, pcm: await noSpeechPcm(c), seconds: c.seconds });
  for (const p of pausedSpeechClips()) clips.push({ id: p.id, kind: 'paused speech', pcm: p.pcm, seconds: p.seconds, reference: p.reference, speech: p.speech });

  const rows: Row[] = [];
  for (const clip of clips) {
    for (const mode of MODES) {
      const t0 = performance.now();
      const r = await model.transcribe(clip.pcm, { threads: THREADS, beamSize: DEFAULT_BEAM_SIZE, temperatureFallback: true, wordTimestamps: true, ...listen(mode) });
      const ms = performance.now() - t0;
      for (const filtered of [false, true]) {
        const out = filtered ? withoutAnnotations(r).result : r;
        const e = clip.reference ? textErrors(clip.reference, out.text) : null;
        rows.push({
          clip: clip.id, kind: clip.kind, seconds: clip.seconds, variant: `${mode}${filtered ? ' + filter' : ''}` as Variant,
          words: clip.reference ? 0 : words(out.text).length, loops: loops(out.text), inSilence: clip.speech ? wordsOutside(out, clip.speech) : null,
          errors: e?.errors ?? null, refWords: e?.words ?? null, ms, text: out.text.trim(),
        });
      }
      process.stdout.write('.');
    }
  }
  process.stdout.write('\n');
  const evalLines = args.includes('--eval') ? await gateCost(model) : [];
  await model.dispose();

  const noSpeech = rows.filter((r) => r.inSilence === null);
  const paused = rows.filter((r) => r.inSilence !== null);
  const sum = (rs: Row[], f: (r: Row) => number) => rs.reduce((a, r) => a + f(r), 0);
  const lines = [
    '| variant | no-speech clips with text | words on no-speech clips | loops | paused speech: words in pauses | paused speech: WER | time (all clips) |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const v of VARIANTS) {
    const ns = noSpeech.filter((r) => r.variant === v);
    const ps = paused.filter((r) => r.variant === v);
    const errors = sum(ps, (r) => r.errors ?? 0);
    const ref = sum(ps, (r) => r.refWords ?? 0);
    lines.push(`| ${v} | ${ns.filter((r) => r.words > 0).length} of ${ns.length} | ${sum(ns, (r) => r.words)} | ${sum([...ns, ...ps], (r) => r.loops)} | ${sum(ps, (r) => r.inSilence ?? 0)} | ${fmt((100 * errors) / ref, 2)} % (${errors}/${ref}) | ${fmt(sum([...ns, ...ps], (r) => r.ms) / 1000, 1)} s |`);
  }
  const perClip = ['| clip | seconds | no gate | no gate + filter | gate + filter (shipped) | VAD + filter |', '| --- | --- | --- | --- | --- | --- |'];
  for (const c of clips) {
    const text = (v: Variant) => {
      const r = rows.find((x) => x.clip === c.id && x.variant === v)!;
      return r.text ? `"${r.text.slice(0, 60).replace(/\|/g, '\\|')}${r.text.length > 60 ? '…' : ''}"` : '(empty)';
    };
    perClip.push(`| ${c.id} | ${fmt(c.seconds, 0)} | ${text('no gate')} | ${text('no gate + filter')} | ${text('gate + filter')} | ${text('VAD + filter')} |`);
  }
  const md = [
    `# Text where nobody speaks, ${today()}`, '',
    `\`npx tsx benchmarks/studies/hallucination.ts --model ${name}${evalLines.length ? ' --eval' : ''}\` at commit ${commitState(prov)}; real Whisper ${name}, the addon in-process, ${THREADS} threads, beam ${DEFAULT_BEAM_SIZE}, temperature fallback, full window, no language (detected), ${os.cpus().length} cores (${prov.cpu}).`,
    'No-speech clips: made by sox (fixtures/hallucination-set.ts). Paused speech: 4 clips of five hifitts utterances with 5-60 s of noise at about -56 dBFS between them. "filter": annotation-only segments dropped (src/stt/non-speech.ts). "gate": Silero v6.2.0 (whisper.cpp\'s defaults) decides whether and where anyone speaks, the whole audio is decoded, the segments of a 30-s window with less than 0.2 s of speech in it dropped. "VAD": the audio cut to Silero\'s speech (STT_VAD). Silero\'s time counts. The server ships "gate + filter" when the Silero model is installed, "no gate + filter" when not. Words: every whitespace-separated piece, tags such as [BLANK_AUDIO] included.', '',
    ...lines, '', ...evalLines, '## What each clip gave', '', ...perClip, '',
  ].join('\n');
  saveReport(`hallucination-${today()}-${name}`, md, { provenance: prov, rows });
}

/** The gate's accuracy cost on the eval set's test half: each clip with and without it (language given, as the eval's rows are). */
async function gateCost(model: Awaited<ReturnType<typeof loadModel>>): Promise<string[]> {
  const clips = readEvalSet().filter((c) => c.split === 'test');
  const runs: Record<'no gate' | 'gate', PerClip[]> = { 'no gate': [], gate: [] };
  let dropped = 0;
  for (const [i, clip] of clips.entries()) {
    const { pcm } = await decodeWav(readFileSync(clip.file));
    const ref = scoringWords(clip.reference, clip.language);
    const texts: Record<string, string> = {};
    // Alternate which goes first, so neither always meets a warmer cache.
    for (const mode of i % 2 ? (['gate', 'no gate'] as const) : (['no gate', 'gate'] as const)) {
      const t0 = performance.now();
      const r = await model.transcribe(pcm, { threads: THREADS, beamSize: DEFAULT_BEAM_SIZE, temperatureFallback: true, language: clip.language, ...listen(mode) });
      const ms = performance.now() - t0;
      texts[mode] = withoutAnnotations(r).result.text;
      runs[mode].push({ errors: errorCount(alignErrors(ref, scoringWords(texts[mode], clip.language))), words: ref.length, ms });
    }
    if (texts.gate !== texts['no gate']) dropped++;
    process.stdout.write(',');
  }
  process.stdout.write('\n');
  const b = pairedBootstrap(runs.gate, runs['no gate']);
  const wer = (xs: PerClip[]) => (100 * xs.reduce((a, x) => a + x.errors, 0)) / xs.reduce((a, x) => a + x.words, 0);
  return [
    '## What the gate costs on speech', '',
    `The eval set's test half (${clips.length} clips, ${fmt(clips.reduce((a, c) => a + c.seconds, 0), 0)} s, several corpora and languages; \`npm run eval:set\`), language given, both with the filter, each clip both ways in turn; paired bootstrap over clips (2,000 rounds).`, '',
    '| | WER | gate − no gate (95 % CI) | time ÷ no gate (95 % CI) | clips whose text changed |',
    '| --- | --- | --- | --- | --- |',
    `| no gate | ${fmt(wer(runs['no gate']), 2)} % | | | |`,
    `| gate | ${fmt(wer(runs.gate), 2)} % | ${fmt(b.werDiff[0], 2)} pts (${fmt(b.werDiff[1], 2)} .. ${fmt(b.werDiff[2], 2)}) | ${fmt(b.timeRatio[0], 3)} (${fmt(b.timeRatio[1], 3)} .. ${fmt(b.timeRatio[2], 3)}) | ${dropped} of ${clips.length} |`, '',
  ];
}

main().catch((err) => {
  process.stderr.write(`hallucination: ${(err as Error).stack}\n`);
  process.exit(1);
});
