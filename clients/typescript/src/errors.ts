import type { ErrorBody } from "./types.js";

/** Anything the client throws for a call that did not answer. */
export class TwinMemoryError extends Error {}

/** The service could not be reached; names the URL, never a header. */
export class ConnectionFailed extends TwinMemoryError {
  constructor(readonly url: string, readonly reason: string) {
    super(`Could not reach ${url}: ${reason}.`);
    this.name = "ConnectionFailed";
  }
}

/** An error answer of the API: `status`, `code` (its `error`), `message`, and what it named. */
export class ApiError extends TwinMemoryError {
  readonly code: string;
  readonly field?: string;
  readonly bound?: unknown;
  readonly line?: number;
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
    readonly requestId?: string,
    readonly retryAfter?: number,
  ) {
    super(`${status} ${body.error}: ${body.message}${requestId ? ` (request ${requestId})` : ""}`);
    this.name = new.target.name;
    this.code = body.error;
    this.field = body.field;
    this.bound = body.bound;
    this.line = body.line;
  }
}

export class InvalidArguments extends ApiError {}
export class Unauthorized extends ApiError {}
export class InsufficientScope extends ApiError {}
export class NotFound extends ApiError {}
export class NoMemory extends NotFound {}
export class Conflict extends ApiError {}
export class TooLarge extends ApiError {}
export class RateLimited extends ApiError {}
export class Unavailable extends ApiError {}
export class ServerError extends ApiError {}

const BY_STATUS: Record<number, typeof ApiError> = {
  400: InvalidArguments,
  401: Unauthorized,
  403: InsufficientScope,
  404: NotFound,
  409: Conflict,
  413: TooLarge,
  429: RateLimited,
  503: Unavailable,
};

/** The error for an error answer: by status, and 404 no_memory as NoMemory. */
export function errorFor(status: number, body: ErrorBody, requestId?: string, retryAfter?: number): ApiError {
  const Kind = status === 404 && body.error === "no_memory" ? NoMemory : (BY_STATUS[status] ?? ServerError);
  return new Kind(status, body, requestId, retryAfter);
}
