// Errors the domain layer raises. They carry no HTTP: the HTTP layer decides how each is answered
// (see http/errors.ts), so the same rules serve the API, the CLI and tests alike.

/** Where a bad input is: `["query", "limit"]`, `["body", "variants", 1, "weight"]`. */
export type InputLocation = Array<string | number>;

export interface InputProblem {
  loc: InputLocation;
  msg: string;
  /** A short machine word such as `value_error`, `int_parsing` or `missing`. */
  type: string;
}

/** Input that is well-formed but breaks a rule; answered as a 422. */
export class InputRuleError extends Error {
  override name = 'InputRuleError';
  constructor(readonly problems: InputProblem[]) {
    super(problems.map((p) => `${p.loc.join('.')}: ${p.msg}`).join('; '));
  }
}

/** A record's state forbids the operation (a draft that is running, ...); answered as a 409. */
export class StateConflictError extends Error {
  override name = 'StateConflictError';
}

/** Event retention removed what the request needs (a position's next events); answered as a 410. */
export class EventsRemovedError extends Error {
  override name = 'EventsRemovedError';
}

/** The record does not exist in the caller's organization; answered as a 404. */
export class RecordNotFoundError extends Error {
  override name = 'RecordNotFoundError';
}
