// One place turns every failure into the error bodies of the contract: 422 HTTPValidationError
// for bad input, `{detail, code, request_id}` for everything else, never a stack trace.

import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from '@hono/zod-openapi';
import {
  InputRuleError,
  EventsRemovedError,
  RecordNotFoundError,
  StateConflictError,
  type InputProblem,
} from '../domain/errors.js';
import { databaseUnavailableReason, isQueryTimeout } from '../db/engine/errors.js';
import { ProviderUnavailableError } from '../providers/telephony-provider.js';
import { IdempotencyKeyTakenError } from '../db/repositories/idempotency.js';
import type { components } from '../spec-types.js';
import type { AppEnv } from './app-env.js';
import { requestLogger } from './request-context.js';

export type ErrorCode = components['schemas']['ErrorCode'];

/**
 * The status each error code answers with. The spec's Errors section says the same in prose, and
 * test/error-codes.test.ts holds the two together; BAD_REQUEST is also 417 and 431 at the front
 * door (front-door.ts), before any route.
 */
export const STATUS_OF_CODE = {
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  GONE: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  PROVIDER_UNAVAILABLE: 502,
  SERVICE_UNAVAILABLE: 503,
} as const satisfies Record<ErrorCode, ContentfulStatusCode>;

/** An error whose status, code and message are meant for the caller. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: ContentfulStatusCode;
  constructor(
    readonly code: ErrorCode,
    detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.status = STATUS_OF_CODE[code];
  }
}

/** The client went away before its request was read: nobody is left to answer. */
export class ClientAbortError extends Error {
  override name = 'ClientAbortError';
  constructor(readonly reason: unknown) {
    super('the client closed the connection before its request was read');
  }
}

/**
 * The status logs and metrics give a request whose client left (nginx's convention): the client
 * sees nothing, and it is neither a success nor a server fault.
 */
export const CLIENT_CLOSED_REQUEST = 499;

/** Input problems found outside zod (by hand-written checks in the HTTP layer). */
export class RequestValidationError extends Error {
  override name = 'RequestValidationError';
  constructor(readonly problems: InputProblem[]) {
    super('request validation failed');
  }
}

type ValidationTarget = 'query' | 'param' | 'json' | 'header' | 'form' | 'cookie';

const LOCATION_OF_TARGET: Record<ValidationTarget, string> = {
  query: 'query',
  param: 'path',
  json: 'body',
  header: 'header',
  form: 'body',
  cookie: 'cookie',
};

/** What a bound's messages and FastAPI types say, for a lower bound and an upper one. */
const BOUND_WORDS = {
  too_small: { count: 'at least', length: 'too_short', than: 'greater than', type: 'greater_than' },
  too_big: { count: 'at most', length: 'too_long', than: 'less than', type: 'less_than' },
} as const;

function describeAllowed(values: readonly unknown[]): string {
  return values.map((v) => JSON.stringify(v)).join(', ');
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** The value at `path`; a query key given once is its list's only element. */
function givenValue(input: unknown, path: readonly PropertyKey[]): unknown {
  const parent = valueAt(input, path.slice(0, -1));
  return typeof parent === 'string' && path[path.length - 1] === 0 ? parent : valueAt(input, path);
}

/** A field as a person names it: `fields[0]` for an element of a list, `limit` otherwise. */
function fieldName(path: readonly PropertyKey[], location: string): string {
  const last = path[path.length - 1];
  if (typeof last !== 'number') return last === undefined ? location : String(last);
  return `${fieldName(path.slice(0, -1), location)}[${last}]`;
}

/** Zod's issue, in the FastAPI-style words of the contract (`int_parsing`, `less_than_equal`, ...). */
function problemOfIssue(issue: z.core.$ZodIssue, location: string, input: unknown): InputProblem {
  const loc = [location, ...issue.path.map((p) => (typeof p === 'number' ? p : String(p)))];
  const field = fieldName(issue.path, location);
  switch (issue.code) {
    case 'invalid_type': {
      if (valueAt(input, issue.path) === undefined) {
        return { loc, msg: `${field} is required.`, type: 'missing' };
      }
      const expected = issue.expected;
      const type =
        expected === 'int' || expected === 'number'
          ? location === 'body'
            ? 'int_type'
            : 'int_parsing'
          : expected === 'boolean'
            ? location === 'body'
              ? 'bool_type'
              : 'bool_parsing'
            : expected === 'array'
              ? 'list_type'
              : expected === 'object'
                ? 'object_type'
                : `${expected}_type`;
      const noun =
        expected === 'int'
          ? 'a whole number'
          : `${/^[aeiou]/.test(expected) ? 'an' : 'a'} ${expected}`;
      return { loc, msg: `${field} must be ${noun}.`, type };
    }
    case 'too_small':
    case 'too_big': {
      const words = BOUND_WORDS[issue.code];
      const bound = String(issue.code === 'too_small' ? issue.minimum : issue.maximum);
      if (issue.origin === 'string') {
        return {
          loc,
          msg: `${field} must have ${words.count} ${bound} characters.`,
          type: `string_${words.length}`,
        };
      }
      if (issue.origin === 'array' || issue.origin === 'set') {
        return {
          loc,
          msg: `${field} must have ${words.count} ${bound} items.`,
          type: words.length,
        };
      }
      return issue.inclusive === false
        ? { loc, msg: `${field} must be ${words.than} ${bound}.`, type: words.type }
        : {
            loc,
            msg: `${field} must be ${words.than} or equal to ${bound}.`,
            type: `${words.type}_equal`,
          };
    }
    case 'invalid_value':
      return {
        loc,
        msg: `${JSON.stringify(givenValue(input, issue.path))} is not allowed in ${fieldName(issue.path, location)}; it must be one of: ${describeAllowed(issue.values)}.`,
        type: issue.values.length === 1 ? 'literal_error' : 'enum',
      };
    case 'invalid_format':
      if (issue.format === 'datetime') {
        return {
          loc,
          msg: `${field} must be an ISO 8601 date-time with a time zone, for example 2026-05-01T00:00:00Z.`,
          type: 'datetime_parsing',
        };
      }
      return {
        loc,
        msg: `${field} does not have the expected format (${issue.format}${'pattern' in issue && issue.pattern ? ` ${String(issue.pattern)}` : ''}).`,
        type: issue.format === 'regex' ? 'string_pattern_mismatch' : `${issue.format}_parsing`,
      };
    case 'unrecognized_keys':
      return {
        loc,
        msg: `unknown field(s) ${issue.keys.join(', ')}; remove them.`,
        type: 'extra_forbidden',
      };
    default:
      return { loc, msg: issue.message, type: 'value_error' };
  }
}

/** `input` is what was validated, to tell a missing value from a wrong one. */
export function problemsOfZodError(
  error: z.ZodError,
  target: ValidationTarget,
  input: unknown,
): InputProblem[] {
  return error.issues.map((issue) => problemOfIssue(issue, LOCATION_OF_TARGET[target], input));
}

function validationResponse(c: Context<AppEnv>, problems: InputProblem[]) {
  return c.json({ detail: problems }, 422);
}

export function errorResponse(c: Context<AppEnv>, error: ApiError) {
  for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
  return c.json(
    { detail: error.message, code: error.code, request_id: c.get('requestId') },
    error.status,
  );
}

/**
 * A list read stopped by the list query timeout: a 422, since the query as asked is what costs
 * too much, with what to change. `timeoutMs` is 0 when no timeout is set (an operator cancelled
 * the statement).
 */
export function queryTimeoutProblem(timeoutMs: number): InputProblem {
  const took = timeoutMs > 0 ? `took longer than ${timeoutMs} ms` : 'was cancelled';
  return {
    loc: ['query'],
    msg:
      `The query ${took} and was stopped. Narrow it: search a field that is looked up exactly ` +
      '(such as session_id, conversation_id or user_id of events), add a time window ' +
      '(start_datetime, end_datetime), or use fewer and longer search values.',
    type: 'query_timeout',
  };
}

/** The app's one `onError`: typed errors become their responses, anything else a bare 500. */
export function handleError(error: Error, c: Context<AppEnv>) {
  if (error instanceof ApiError) return errorResponse(c, error);
  if (error instanceof InputRuleError || error instanceof RequestValidationError) {
    return validationResponse(c, error.problems);
  }
  if (error instanceof StateConflictError) {
    return errorResponse(c, new ApiError('CONFLICT', error.message));
  }
  if (error instanceof IdempotencyKeyTakenError) {
    // The idempotency middleware replays the twin's answer over this one.
    return errorResponse(
      c,
      new ApiError(
        'CONFLICT',
        'Another request with this Idempotency-Key was answered first; retry with the same key to get its answer.',
      ),
    );
  }
  if (error instanceof ProviderUnavailableError) {
    // Nothing was decided: a wrong "no" would be worse than "could not tell".
    const provider = error.channel?.provider ?? 'telephony';
    requestLogger(c).warn(
      { channel_id: error.channel?.id, provider, problem: error.message },
      'telephony provider unavailable',
    );
    return errorResponse(
      c,
      new ApiError(
        'PROVIDER_UNAVAILABLE',
        `The channel's telephony provider (${provider}) could not answer: ${error.message}. Nothing was decided; try again, or ask an operator to check the channel's provider settings.`,
      ),
    );
  }
  if (error instanceof RecordNotFoundError) {
    return errorResponse(c, new ApiError('NOT_FOUND', error.message));
  }
  if (error instanceof EventsRemovedError) {
    return errorResponse(c, new ApiError('GONE', error.message));
  }
  if (error instanceof ClientAbortError) {
    requestLogger(c).info(
      { code: (error.reason as { code?: string } | null)?.code },
      'client closed the connection before its request was read',
    );
    return c.body(null, CLIENT_CLOSED_REQUEST as ContentfulStatusCode);
  }
  // Hono's JSON validator throws this for a body it cannot parse.
  if (error instanceof HTTPException && error.status === 400 && /JSON/i.test(error.message)) {
    return validationResponse(c, [
      { loc: ['body'], msg: 'The request body is not valid JSON.', type: 'json_invalid' },
    ]);
  }
  if (isQueryTimeout(error)) {
    const timeoutMs = c.get('db').listQueryTimeoutMs;
    // For the operator: which lists ask too much (the request log line has the path).
    requestLogger(c).info({ timeout_ms: timeoutMs }, 'list read stopped by the list query timeout');
    return validationResponse(c, [queryTimeoutProblem(timeoutMs)]);
  }
  const unavailable = databaseUnavailableReason(error);
  if (unavailable) {
    requestLogger(c).error(
      { reason: unavailable, code: (error as { code?: string }).code },
      'database unavailable',
    );
    return errorResponse(
      c,
      new ApiError(
        'SERVICE_UNAVAILABLE',
        `The service cannot take requests right now: ${unavailable}. Nothing was written; try again later.`,
        { 'Retry-After': '30' },
      ),
    );
  }
  requestLogger(c).error({ err: error }, 'unhandled error');
  return errorResponse(
    c,
    new ApiError(
      'INTERNAL',
      'Something went wrong on our side. Quote the request id when you report it.',
    ),
  );
}
