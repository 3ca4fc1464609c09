// Child process for the exit test: starts a transcription, pauses it until its
// thread really waits, then leaves the way argv[2] says (exit, throw, reject).
// It must terminate; before jobs were aborted on exit it hung forever.
import { createJobControl, decodeWav, loadModel } from '../../src/native';
import { speechClip, tinyModel } from '../../fixtures';

(async () => {
  const model = await loadModel(await tinyModel());
  const { pcm } = await decodeWav(speechClip(60));
  const control = createJobControl();
  void model.transcribe(pcm, { threads: 2, language: 'en', temperatureFallback: false, maxTokens: 16, control }).catch(() => {});
  control.pause();
  for (let i = 0; i < 2000 && !control.stats().waiting; i++) await new Promise((r) => setTimeout(r, 5));
  if (!control.stats().waiting) throw new Error('the job never reached the pause gate');
  process.stdout.write('paused\n');
  const how = process.argv[2];
  if (how === 'exit') process.exit(0);
  if (how === 'throw') setImmediate(() => { throw new Error('crash while a job is paused'); });
  if (how === 'reject') void Promise.reject(new Error('unhandled rejection while a job is paused'));
})();
