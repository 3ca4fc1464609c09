// Splits a child process's output stream into whole lines.
import type { Readable } from 'node:stream';

export function onLines(stream: Readable, onLine: (line: string) => void): void {
  let buffered = '';
  stream.on('data', (d: Buffer) => {
    buffered += d.toString();
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      onLine(line);
    }
  });
}
