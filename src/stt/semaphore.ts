// At most `size` holders at once. tryAcquire() refuses at once when every
// permit is taken (for a 503); acquire() waits its turn, in order, unless its
// signal fires first.
import { AbortedError } from '../domain-errors';

export class Semaphore {
  private held = 0;
  private readonly waiters: { grant: () => void }[] = [];

  constructor(readonly size: number) {}

  get full(): boolean {
    return this.held >= this.size;
  }

  tryAcquire(): boolean {
    if (this.full) return false;
    this.held++;
    return true;
  }

  /** Resolves with a permit; rejects with AbortedError if `signal` fires first. */
  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(new AbortedError());
    if (this.tryAcquire()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(new AbortedError());
      };
      const waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next.grant(); // the permit passes straight to the next in line
    else this.held--;
  }
}
