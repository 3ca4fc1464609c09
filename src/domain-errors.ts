// What can go wrong in speech-to-text and host management, said in the
// domain's terms. Each class is a kind of failure, not a status code:
// src/http/error-map.ts is the one table that turns them into HTTP answers.
// `code` is the stable machine-readable reason clients see; `param` names the
// field at fault.

export class SttError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

/** The request asks for something malformed or that this route cannot do. */
export class InvalidInputError extends SttError {
  override readonly name = 'InvalidInputError';
}

/** /v1/audio/translations on a runtime or provider without Whisper's translate task. */
export const cannotTranslate = (what: string): InvalidInputError =>
  new InvalidInputError('translation_unsupported', `${what} cannot translate; /v1/audio/translations needs a Whisper runtime or an OpenAI-kind provider.`, 'model');

/** It names a runtime, provider, key or model that does not exist. */
export class NotFoundError extends SttError {
  override readonly name = 'NotFoundError';
}

/** It clashes with the current state (an active runtime, a running download, the live cloud route). */
export class ConflictError extends SttError {
  override readonly name = 'ConflictError';
}

/** Nothing is wrong with the request; the service cannot take it now (loading, full, shutting down). */
export class BusyError extends SttError {
  override readonly name = 'BusyError';
  constructor(code: string, message: string, readonly retryAfterSeconds: number) {
    super(code, message);
  }
}

/** The caller is over a share given to it (its key's part of the local queue); others are still served. */
export class OverShareError extends SttError {
  override readonly name = 'OverShareError';
  constructor(code: string, message: string, readonly retryAfterSeconds: number) {
    super(code, message);
  }
}

/** The backend that should do the work (the local model, a cloud provider) failed or is missing. */
export class BackendError extends SttError {
  override readonly name = 'BackendError';
}

/**
 * The request was abandoned (the client left, its deadline passed, the server
 * gave up on it at shutdown). Named like DOM's and Node's aborts.
 */
export class AbortedError extends Error {
  constructor() {
    super('aborted');
    this.name = 'AbortError';
  }
}
