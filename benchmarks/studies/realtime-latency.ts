// `npx tsx benchmarks/studies/realtime-latency.ts [--rounds 3] [--model base-q8_0] [--name NAME]`
// (after `npm run build`): realtime sessions with server_vad on real
// weights, the server in the settings it shipped with when this study was
// made (full window, temperature fallback, and STT_BEAM_SIZE's default). Each session streams a clip of five hifitts
// utterances with 1.5-2.5 s of quiet noise between them (fixtures/clips.ts
// gappedClip; each session its own five), paced in real time in 100-ms
// events, at 1 and at 4 sessions at once on the 2-core box, against two
// servers side by side in each round: drafts on (the default) and off
// (STT_REALTIME_DRAFTS=0), so the table says what drafting costs the final.
//
// Per turn it records, on the client's clock:
// - end of turn → `.completed`: from the moment the client had sent the audio
//   up to the turn's `audio_end_ms` (Silero's stop, which includes
//   silence_duration_ms of silence by design) to the `.completed` event;
// - end of speech → `.completed`: the same from the utterance's true end (the
//   clip says where its speech is), so silence_duration_ms is included;
// - start of speech → first delta: from the audio at the turn's
//   `audio_start_ms` being sent to its first delta (a draft's agreed words,
//   or with drafts off the delta sent with `.completed`);
// - whether a delta came before the turn's `speech_stopped` (while the
//   person was still speaking), and whether the deltas joined are the
//   transcript (the drafts' words were kept by the turn's transcription).
// WER of each session's turns joined, against the clip's reference. As a
// baseline in the same run, each utterance (with the 300-ms padding) is also
// uploaded alone to the same server, one at a time: the time an upload of
// the same audio takes, so the table says what the session itself adds.
import WebSocket from 'ws';
import { gappedClip, realModelPath, wav16k, type RealModelName } from '../../fixtures';
import { textErrors } from '../../scripts/lib/english-normalizer';
import { startOurs } from '../lib/servers';
import { provenance, commitState } from '../lib/provenance';
import { nameFlag, numberOption, optionValue, reportSuffix } from '../lib/args';
import { saveReport, today } from '../lib/results';
import { fmt, median, medianInterval, percentile } from '../lib/stats';
import { DEFAULT_BEAM_SIZE } from '../../src/config';
import { decodingName } from '../lib/decoding';

const args = process.argv.slice(2);
const ROUNDS = numberOption(args, '--rounds', 3);
const MODEL = (optionValue(args, '--model') ?? 'base-q8_0') as RealModelName;
const SUFFIX = reportSuffix(args);
const SESSION_COUNTS = [1, 4];
const CHUNK_MS = 100;
const GAPS = [1.5, 2, 2.5, 1.5, 2];
const DRAFTS = ['on', 'off'] as const;
type Drafts = (typeof DRAFTS)[number];

interface Turn {
  endOfTurnMs: number; endOfSpeechMs: number; startToDeltaMs: number; seconds: number; deltaWhileSpeaking: boolean; deltasJoinToTranscript: boolean;
  /** Kept in the raw results: what the deltas said against the transcript. */
  deltas: string; transcript: string;
}
interface SessionRun { turns: Turn[]; errors: number; words: number; expectedTurns: number }

/** 16-kHz float to 24-kHz PCM16 (linear interpolation: the clip is the audio a 24-kHz client would have). */
function to24k(pcm: Float32Array): Int16Array {
  const out = new Int16Array(Math.floor((pcm.length * 3) / 2));
  for (let i = 0; i < out.length; i++) {
    const x = (i * 2) / 3;
    const j = Math.floor(x);
    const v = pcm[j] + (Math.min(j + 1, pcm.length - 1) === j ? 0 : (pcm[j + 1] - pcm[j]) * (x - j));
    out[i] = Math.max(-32768, Math.min(32767, Math.round(v * 32767)));
  }
  return out;
}

async function session(url: string, key: string, firstClip: number): Promise<SessionRun> {
  const clip = gappedClip(GAPS, 0.003, firstClip);
  const pcm = to24k(clip.pcm);
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/realtime?intent=transcription`, { headers: { Authorization: `Bearer ${key}` } });
  await new Promise<void>((resolve, reject) => { ws.once('open', () => resolve()); ws.once('error', reject); });
  const started = new Map<string, number>();
  const stopped = new Map<string, number>();
  const firstDelta = new Map<string, number>();
  const stoppedAt = new Map<string, number>();
  const deltas = new Map<string, string>();
  const texts: string[] = [];
  const turns: Turn[] = [];
  let t0 = 0;
  let committed = 0;
  let cleared = false;
  const done = new Promise<void>((resolve, reject) => {
    ws.on('message', (data) => {
      const e = JSON.parse(String(data));
      const now = performance.now();
      if (e.type === 'input_audio_buffer.speech_started') started.set(e.item_id, e.audio_start_ms);
      if (e.type === 'input_audio_buffer.speech_stopped') {
        stopped.set(e.item_id, e.audio_end_ms);
        stoppedAt.set(e.item_id, now);
      }
      if (e.type === 'conversation.item.input_audio_transcription.delta') {
        if (!firstDelta.has(e.item_id)) firstDelta.set(e.item_id, now);
        deltas.set(e.item_id, (deltas.get(e.item_id) ?? '') + e.delta);
      }
      if (e.type === 'input_audio_buffer.committed') committed++;
      if (e.type === 'input_audio_buffer.cleared') cleared = true;
      if (e.type === 'error' || e.type === 'conversation.item.input_audio_transcription.failed') reject(new Error(JSON.stringify(e)));
      if (e.type === 'conversation.item.input_audio_transcription.completed') {
        texts.push(e.transcript);
        const end = stopped.get(e.item_id)!;
        const start = started.get(e.item_id)!;
        // The utterance whose speech ends last at or before this turn's end (its true end of speech).
        const speechEnd = Math.max(...clip.speech.map((s) => s.end * 1000).filter((ms) => ms <= end), start);
        // The audio up to `ms` was sent by t0 + ms (real-time pacing; the event holding it leaves at its start).
        const sentAt = (ms: number) => t0 + Math.ceil(ms / CHUNK_MS) * CHUNK_MS;
        const deltaAt = firstDelta.get(e.item_id) ?? now;
        turns.push({
          endOfTurnMs: now - sentAt(end), endOfSpeechMs: now - sentAt(speechEnd), startToDeltaMs: deltaAt - sentAt(start), seconds: e.usage.seconds,
          deltaWhileSpeaking: firstDelta.has(e.item_id) && deltaAt < (stoppedAt.get(e.item_id) ?? now),
          deltasJoinToTranscript: (deltas.get(e.item_id) ?? '') === e.transcript,
          deltas: deltas.get(e.item_id) ?? '', transcript: e.transcript,
        });
      }
      if (cleared && texts.length === committed) resolve();
    });
  });
  // English, as the uploads are sent: without a language whisper.cpp first detects it with a
  // full-window encoder pass of its own (about 2 s a turn here, measured).
  ws.send(JSON.stringify({ type: 'session.update', session: { type: 'transcription', audio: { input: { transcription: { language: 'en' } } } } }));
  t0 = performance.now();
  const step = (24000 * CHUNK_MS) / 1000;
  for (let i = 0, n = 0; i < pcm.length; i += step, n++) {
    const wait = t0 + n * CHUNK_MS - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const piece = pcm.subarray(i, i + step);
    ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength).toString('base64') }));
  }
  // Answered after every append: every turn in the clip has been cut by then.
  ws.send(JSON.stringify({ type: 'input_audio_buffer.clear' }));
  await done;
  ws.close();
  const { errors, words } = textErrors(clip.reference, texts.join(' '));
  return { turns, errors, words, expectedTurns: clip.speech.length };
}

async function main(): Promise<void> {
  const prov = provenance();
  // Both servers idle while the other is measured: one run at a time.
  const servers: Record<Drafts, Awaited<ReturnType<typeof startOurs>>> = {} as never;
  const results: Record<string, SessionRun[]> = {};
  const uploadMs: number[] = [];
  try {
    for (const drafts of DRAFTS) {
      servers[drafts] = await startOurs({
        modelFile: realModelPath(MODEL), threads: 2, fallback: true, vad: true,
        // The shipped decoding (STT_BEAM_SIZE's default: each report names it), what a realtime client gets.
        env: { STT_BEAM_SIZE: String(DEFAULT_BEAM_SIZE), STT_ENCODER_WINDOW: 'full', STT_DEADLINE_BASE_MS: '60000', STT_REALTIME_DRAFTS: drafts === 'on' ? '1' : '0' },
      });
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const count of SESSION_COUNTS) {
        // Alternating which goes first, round by round.
        for (const drafts of round % 2 ? [...DRAFTS].reverse() : DRAFTS) {
          const server = servers[drafts];
          const runs = await Promise.all(Array.from({ length: count }, (_, k) => session(server.url, server.apiKey, ((round * 4 + k) * GAPS.length) % 40)));
          (results[`${drafts} ${count}`] ??= []).push(...runs);
          process.stderr.write(`round ${round + 1}/${ROUNDS}, drafts ${drafts}, ${count} session(s): ${runs.map((r) => r.turns.length).join(', ')} turns\n`);
        }
      }
      const clip = gappedClip(GAPS, 0.003, (round * 4 * GAPS.length) % 40);
      for (const { start, end } of clip.speech) {
        const wav = wav16k(clip.pcm.subarray(Math.round((start - 0.3) * 16000), Math.round(end * 16000)));
        // Reply.ms: request to answer, on this side (post() throws on anything but 200).
        uploadMs.push((await servers.off.transcribe(wav)).ms);
      }
    }
  } finally {
    for (const server of Object.values(servers)) await server.stop();
  }
  const row = (drafts: Drafts, count: number) => {
    const runs = results[`${drafts} ${count}`];
    const turns = runs.flatMap((r) => r.turns);
    const cell = (xs: number[]) => {
      const [lo, hi] = medianInterval(xs);
      return `${fmt(median(xs), 0)} (${fmt(lo, 0)} .. ${fmt(hi, 0)}); p90 ${fmt(percentile(xs, 90), 0)}`;
    };
    const errors = runs.reduce((n, r) => n + r.errors, 0);
    const words = runs.reduce((n, r) => n + r.words, 0);
    const share = (f: (t: Turn) => boolean) => `${turns.filter(f).length} of ${turns.length}`;
    return `| ${drafts} | ${count} | ${runs.length} | ${turns.length} of ${runs.reduce((n, r) => n + r.expectedTurns, 0)} utterances | ${cell(turns.map((t) => t.endOfTurnMs))} | ${cell(turns.map((t) => t.endOfSpeechMs))} | ${cell(turns.map((t) => t.startToDeltaMs))} | ${share((t) => t.deltaWhileSpeaking)} | ${share((t) => t.deltasJoinToTranscript)} | ${fmt(median(turns.map((t) => t.seconds)), 1)} | ${fmt((100 * errors) / words, 2)} % |`;
  };
  const [ulo, uhi] = medianInterval(uploadMs);
  const md = `# Realtime latency with server_vad, ${today()}

\`npx tsx benchmarks/studies/realtime-latency.ts --rounds ${ROUNDS} --model ${MODEL}${nameFlag(SUFFIX)}\` at
commit ${commitState(prov)}, ${prov.cpu ?? ''}.
Real Whisper ${MODEL}, ${decodingName(DEFAULT_BEAM_SIZE)}, full window, temperature fallback (the shipped decoding), server_vad at
OpenAI's defaults (threshold 0.5, prefix 300 ms, silence 500 ms). Each session streams five hifitts
utterances with 1.5-2.5 s of quiet noise between them, in real time (100-ms events), \`language: en\`; ${ROUNDS} rounds
of 1 and of 4 sessions at once, 2 threads. Milliseconds on the client's clock: median (95 % interval
of the median), p90.

| drafts | sessions | session runs | turns | end of turn → .completed | end of speech → .completed | start of speech → first delta | a delta while speaking | deltas join to the transcript | turn, s (median) | WER |
|---|---|---|---|---|---|---|---|---|---|---|
${SESSION_COUNTS.flatMap((count) => DRAFTS.map((drafts) => row(drafts, count))).join('\n')}

Drafts on is the default; off is \`STT_REALTIME_DRAFTS=0\`, each on its own server, side by side in every round.
Baseline in the same run: each 1-session clip's utterances (300-ms padding included) uploaded alone,
one at a time, to the same server: **${fmt(median(uploadMs), 0)} ms** (${fmt(ulo, 0)} .. ${fmt(uhi, 0)}; p90
${fmt(percentile(uploadMs, 90), 0)}; ${uploadMs.length} uploads) from request to answer.

- End of speech → \`.completed\` includes the 500 ms of silence server_vad waits for by design.
- With drafts off, the first delta comes with \`.completed\`: start of speech → first delta is the
  turn's length plus its transcription. With drafts on, it is the first words two drafts agreed on.
`;
  saveReport(`realtime-latency-${today()}${SUFFIX}`, md, { provenance: prov, model: MODEL, rounds: ROUNDS, results, uploadMs });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
