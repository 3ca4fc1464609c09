// The "shared" condition of the contention study and the bench's contention
// scenario: one other busy process on this machine, a Python
// `while True: pass` (one runnable thread that never sleeps), as issue 32
// measured it. Killed on stop and, whatever fails, when this process exits.
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long the busy process runs before the caller measures: the server's free-core monitor samples every second. */
const SEEN_AFTER_MS = 1500;

export async function startBusyProcess(): Promise<{ stop(): void }> {
  const child = spawn('python3', ['-c', 'while True: pass'], { stdio: 'ignore' });
  let failed: Error | undefined;
  child.once('error', (err) => (failed = err)); // python3 missing: reported below, not an unhandled event
  const kill = () => child.kill('SIGKILL');
  process.on('exit', kill);
  await sleep(SEEN_AFTER_MS);
  if (failed || child.exitCode !== null) {
    process.off('exit', kill);
    throw new Error(`the busy process did not run (${failed?.message ?? `exit ${child.exitCode}`}): is python3 installed?`);
  }
  return {
    stop: () => {
      process.off('exit', kill);
      kill();
    },
  };
}
