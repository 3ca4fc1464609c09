// A deadline as an AbortSignal that fires even if nothing else references it.
//
// Not AbortSignal.timeout(): Node's timer holds that signal only weakly, and
// AbortSignal.any() holds its sources weakly too, so a timeout signal passed
// only to AbortSignal.any() is garbage-collected at the next GC and never
// fires (nodejs/node#57736; seen here as a 5-s request served after 91 s with
// a 75-s deadline). Here the timer's closure holds the controller strongly.
export interface Deadline {
  readonly signal: AbortSignal;
  /** Stops the timer once the guarded work is over. */
  clear(): void;
}

export function deadline(ms: number): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException('The deadline passed.', 'TimeoutError')), Math.max(0, ms));
  timer.unref();
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}
