// One error class per kind of failure, so callers can `catch (e) { if (e instanceof NotFoundError) }`
// and read the status, the request id to quote, the parsed body and the headers.

import type { components } from './generated/openapi.js';

export type ErrorBody = components['schemas']['ErrorResponse'];
export type ValidationErrorBody = components['schemas']['HTTPValidationError'];

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
    const requestId = headers.get('x-request-id');
    return `${status} ${text}${requestId ? ` (request id ${requestId})` : ''}`;
  }
}

export class AuthenticationError extends ApiError {
  override name = 'AuthenticationError';
  declare readonly body: ErrorBody;
}
export class PermissionDeniedError extends ApiError {
  override name = 'PermissionDeniedError';
  declare readonly body: ErrorBody;
}
export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
  declare readonly body: ErrorBody;
}
export class ConflictError extends ApiError {
  override name = 'ConflictError';
  declare readonly body: ErrorBody;
}
export class UnprocessableEntityError extends ApiError {
  override name = 'UnprocessableEntityError';
  declare readonly body: ValidationErrorBody;
  /** Each input problem: where (`loc`), what (`msg`) and a machine word (`type`). */
  get detail(): ValidationErrorBody['detail'] {
    return this.body.detail;
  }
}
export class RateLimitError extends ApiError {
  override name = 'RateLimitError';
  declare readonly body: ErrorBody;
}
export class InternalServerError extends ApiError {
  override name = 'InternalServerError';
}

/** The request never got an answer (connection refused, reset, DNS...). */
export class ApiConnectionError extends AgentlineError {
  override name = 'ApiConnectionError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** No answer within the configured timeout. */
export class ApiTimeoutError extends ApiConnectionError {
  override name = 'ApiTimeoutError';
}

/** The error class for a response status. */
export function errorForResponse(status: number, body: unknown, headers: Headers): ApiError {
  switch (status) {
    case 401:
      return new AuthenticationError(status, body, headers);
    case 403:
      return new PermissionDeniedError(status, body, headers);
    case 404:
      return new NotFoundError(status, body, headers);
    case 409:
      return new ConflictError(status, body, headers);
    case 422:
      return new UnprocessableEntityError(status, body, headers);
    case 429:
      return new RateLimitError(status, body, headers);
    default:
      return status >= 500
        ? new InternalServerError(status, body, headers)
        : new ApiError(status, body, headers);
  }
}
