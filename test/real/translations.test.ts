// /v1/audio/translations with real base weights on speech that is not
// English: German and Spanish sentences spoken by Debian's espeak-ng (the
// shared audio is all English). Whisper's translate task gives the same
// tokens as whisper-cli -tr (in the full 30-s window: the server does not shorten
// it for translations), and English text that the transcription is not.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FOREIGN_SENTENCES, realModelPath, spokenWav, textTokens, whisperCli, type ForeignLanguage } from '../../fixtures';
import { startRealServer } from '../helpers/real-models';
import { transcribe, wavBlob, type TestServer } from '../helpers/server';

const LANGUAGES = Object.keys(FOREIGN_SENTENCES) as ForeignLanguage[];

let server: TestServer;
let dir: string;
const wavs = {} as Record<ForeignLanguage, string>;

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'stt-translate-'));
  for (const lang of LANGUAGES) wavs[lang] = await spokenWav(lang, dir);
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

for (const lang of LANGUAGES) {
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
