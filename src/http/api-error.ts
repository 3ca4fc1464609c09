// ApiError carries what the contract's error envelope needs; the error
// middleware turns it into {error: {message, type, param, code}}.
export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'rate_limit_error'
  | 'server_error'
  | 'upstream_error';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  get type(): ErrorType {
    if (this.status === 401) return 'authentication_error';
    if (this.status === 429) return 'rate_limit_error';
    if (this.status === 502) return 'upstream_error';
    if (this.status >= 500) return 'server_error';
    return 'invalid_request_error';
  }

  toBody() {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export const badRequest = (code: string, message: string, param: string | null = null) => new ApiError(400, code, message, param);
export const notFound = (code: string, message: string, param: string | null = null) => new ApiError(404, code, message, param);
export const conflict = (code: string, message: string, param: string | null = null) => new ApiError(409, code, message, param);
export const unauthorized = (message = 'Missing or invalid bearer token.') => new ApiError(401, 'invalid_api_key', message);
export const unavailable = (code: string, message: string, retryAfterSeconds: number) =>
  new ApiError(503, code, message, null, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
