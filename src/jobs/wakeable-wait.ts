// The pause between a polling loop's turns, which wake() cuts short (the
// job runner's and the callback sender's: a new job, or one that ended, is
// looked at at once rather than at the next poll).
export class WakeableWait {
  private wakeUp: (() => void) | null = null;

  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = done;
    });
  }

  /** Ends the wait in progress, if any. */
  wake(): void {
    this.wakeUp?.();
  }
}
