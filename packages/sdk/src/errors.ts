// One error class per kind of failure, so callers can `catch (e) { if (e instanceof NotFoundError) }`
// and read the status, the request id to quote, the parsed body and the headers.

import type { ErrorCode, ErrorResponse, HTTPValidationError } from './generated/models.js';
import { rateLimitOf, type RateLimit } from './rate-limit.js';

/** Base class of every error the SDK throws. */
export class AgentlineError extends Error {
  override name = 'AgentlineError';
}

/** The API answered with a status outside 2xx. */
export class ApiError extends AgentlineError {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    /** The parsed JSON body, or the raw text when it was not JSON. */
    readonly body: unknown,
    readonly headers: Headers,
    message?: string,
  ) {
    super(message ?? ApiError.describe(status, body, headers));
  }

  /** The `X-Request-Id` of the failed request: quote it when reporting a problem. */
  get requestId(): string | null {
    return this.headers.get('x-request-id');
  }

  /**
   * The API key's request quota and what is left of it (`RateLimit` fields), null without them:
   * on a 429, `remaining` is 0 and `resetSeconds` says when to send again.
   */
  get rateLimit(): RateLimit | null {
    return rateLimitOf(this.headers);
  }

  /**
   * The error's machine code from the spec's `ErrorCode` (`NOT_FOUND`, `RATE_LIMITED`, ...); null
   * for a 422, whose body lists input problems instead, or a body without one.
   * @example if (error.code === 'RATE_LIMITED') await sleep(1000);
   */
  get code(): ErrorCode | null {
    const code = (this.body as { code?: unknown } | null)?.code;
    return typeof code === 'string' ? (code as ErrorCode) : null;
  }

  private static describe(status: number, body: unknown, headers: Headers): string {
    const detail = (body as { detail?: unknown } | null)?.detail;
    const text =
      typeof detail === 'string'
        ? detail
        : Array.isArray(detail)
          ? detail
              .map(
                (d: { loc?: unknown[]; msg?: string }) =>
                  `${(d.loc ?? []).join('.')}: ${d.msg ?? ''}`,
              )
              .join('; ')
          : typeof body === 'string' && body
            ? body
            : 'no details';
    const retryAfter = headers.get('retry-after');
    const requestId = headers.get('x-request-id');
    return (
      `${status} ${text}` +
      (retryAfter ? ` (the server asked to wait ${retryAfter} s before a retry)` : '') +
      (requestId ? ` (request id ${requestId})` : '')
    );
  }
}

export class BadRequestError extends ApiError {
  override name = 'BadRequestError';
  declare readonly status: 400;
}
export class AuthenticationError extends ApiError {
  override name = 'AuthenticationError';
  declare readonly status: 401;
  declare readonly body: ErrorResponse;
}
export class PermissionDeniedError extends ApiError {
  override name = 'PermissionDeniedError';
  declare readonly status: 403;
  declare readonly body: ErrorResponse;
}
export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
  declare readonly status: 404;
  declare readonly body: ErrorResponse;
}
export class ConflictError extends ApiError {
  override name = 'ConflictError';
  declare readonly status: 409;
  declare readonly body: ErrorResponse;
}
/** 410: events the request needs were removed by event retention; the message says what to do. */
export class GoneError extends ApiError {
  override name = 'GoneError';
  declare readonly status: 410;
  declare readonly body: ErrorResponse;
}
export class UnprocessableEntityError extends ApiError {
  override name = 'UnprocessableEntityError';
  declare readonly status: 422;
  declare readonly body: HTTPValidationError;
  /** Each input problem: where (`loc`), what (`msg`) and a machine word (`type`). */
  get detail(): HTTPValidationError['detail'] {
    return this.body.detail;
  }
}
export class RateLimitError extends ApiError {
  override name = 'RateLimitError';
  declare readonly status: 429;
  declare readonly body: ErrorResponse;
}
/** Any 5xx; the statuses the API declares have their own subclasses. */
export class InternalServerError extends ApiError {
  override name = 'InternalServerError';
}
/** 502: the telephony provider could not be reached or answered badly. */
export class BadGatewayError extends InternalServerError {
  override name = 'BadGatewayError';
  declare readonly status: 502;
  declare readonly body: ErrorResponse;
}
/** 503: the API cannot serve now (its database is unreachable); retried by default. */
export class ServiceUnavailableError extends InternalServerError {
  override name = 'ServiceUnavailableError';
  declare readonly status: 503;
  declare readonly body: ErrorResponse;
}

/** The request never got an answer (connection refused, reset, DNS...). */
export class ApiConnectionError extends AgentlineError {
  override name = 'ApiConnectionError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * No answer in time: the SDK's own `timeout` ran out, or the caller's signal was an
 * `AbortSignal.timeout(...)` that fired. `cause` is the signal's reason, when there was one.
 */
export class ApiTimeoutError extends ApiConnectionError {
  override name = 'ApiTimeoutError';
}

/** The caller aborted the call through its `signal`; `cause` is the abort's reason. */
export class ApiUserAbortError extends AgentlineError {
  override name = 'ApiUserAbortError';
  constructor(message = 'The call was aborted by its signal.', options?: { cause?: unknown }) {
    super(message, options);
  }
}

const STATUS_CLASSES: Record<
  number,
  new (status: number, body: unknown, headers: Headers) => ApiError
> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  410: GoneError,
  422: UnprocessableEntityError,
  429: RateLimitError,
  502: BadGatewayError,
  503: ServiceUnavailableError,
};

/** The error class for a response status. */
export function errorForResponse(status: number, body: unknown, headers: Headers): ApiError {
  const ErrorClass = STATUS_CLASSES[status] ?? (status >= 500 ? InternalServerError : ApiError);
  return new ErrorClass(status, body, headers);
}

/**
 * The SDK error for what a call threw instead of answering: its own errors pass through; an
 * abort is the caller's (ApiUserAbortError) unless it was a timeout (ApiTimeoutError), whichever
 * signal carried it; anything else is a failed connection.
 */
export function errorForFailure(
  cause: unknown,
  signal: AbortSignal | null | undefined,
): AgentlineError {
  if (cause instanceof AgentlineError) return cause;
  const reason: unknown = signal?.aborted ? signal.reason : cause;
  const name = (reason as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError') {
    return new ApiTimeoutError("No answer before the call's signal timed out.", { cause: reason });
  }
  if (signal?.aborted || name === 'AbortError') {
    return new ApiUserAbortError(undefined, { cause: reason });
  }
  return new ApiConnectionError(
    `Could not reach the Agentline API: ${cause instanceof Error ? cause.message : String(cause)}`,
    { cause },
  );
}
