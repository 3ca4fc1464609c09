// /v1/audio/translations with real base weights on speech that is not
// English: German and Spanish sentences spoken by Debian's espeak-ng (the
// shared audio is all English). Whisper's translate task gives the same
// tokens as whisper-cli -tr, and English text that the transcription is not.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeWav } from '../../src/native';
import { realModelPath, textTokens, whisperCli, writeWav } from '../../fixtures';
import { startRealServer } from '../helpers/real-models';
import { transcribe, wavBlob, type TestServer } from '../helpers/server';

const SENTENCES = {
  de: 'Ich bin heute mit dem Zug nach Berlin gefahren, weil das Wetter sehr schön war.',
  es: 'Mañana por la mañana vamos a visitar el museo de la ciudad con mis amigos.',
};

let server: TestServer;
let dir: string;
const wavs: Record<string, string> = {};

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'stt-translate-'));
  for (const [lang, sentence] of Object.entries(SENTENCES)) {
    wavs[lang] = path.join(dir, `${lang}.wav`);
    const spoken = path.join(dir, `${lang}-22k.wav`);
    execFileSync('espeak-ng', ['-v', lang, '-w', spoken, sentence]);
    // espeak-ng writes 22.05 kHz; whisper-cli and the addon resample differently,
    // so both get the same 16-kHz samples (base's translations swing on small changes).
    const { pcm } = await decodeWav(readFileSync(spoken));
    writeFileSync(wavs[lang], writeWav({ rate: 16000, encoding: 'float32', channels: [pcm] }));
  }
  server = await startRealServer('base-q8_0');
});
after(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function translation(wav: string): Promise<{ text: string; tokens: number[]; language: string; task: string }> {
  const form = new FormData();
  form.append('file', wavBlob(readFileSync(wav)), 'speech.wav');
  form.append('response_format', 'verbose_json');
  const res = await fetch(`${server.url}/v1/audio/translations`, { method: 'POST', body: form, headers: server.auth });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return { text: body.text, tokens: body.segments.flatMap((s: { tokens: number[] }) => textTokens(s.tokens)), language: body.language, task: body.task };
}

for (const lang of Object.keys(SENTENCES) as (keyof typeof SENTENCES)[]) {
  test(`${lang}: the same tokens as whisper-cli -tr, English words, and not the transcription`, { timeout: 300_000 }, async () => {
    const ours = await translation(wavs[lang]);
    const cli = await whisperCli(realModelPath('base-q8_0'), wavs[lang], 2, ['-l', 'auto', '-tr']);
    assert.ok(cli.tokens.length > 5, `whisper-cli translated something: ${cli.text}`);
    assert.deepEqual(ours.tokens, cli.tokens, `ours: ${ours.text}\nwhisper-cli: ${cli.text}`);
    assert.equal(ours.text, cli.text.trim());
    assert.deepEqual([ours.task, ours.language], ['translate', 'english']);

    const res = await transcribe(server, { file: wavBlob(readFileSync(wavs[lang])), language: lang }, server.auth);
    const transcript = (await res.json()).text as string;
    assert.notEqual(ours.text, transcript, 'translated, not transcribed');
    // English words the source language does not use; the transcription has none of them.
    const english = /\b(the|I|to|we|with|my|because|was|is|are|going|train|weather|tomorrow|morning|museum|city|friends)\b/i;
    assert.match(ours.text, english, `English: ${ours.text}`);
    assert.doesNotMatch(transcript, english, `the ${lang} transcription: ${transcript}`);
  });
}
