// The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers) of an answer: the key's quota
// (`RateLimit-Policy: "default";q=600;w=60`) and what is left of it (`RateLimit:
// "default";r=599;t=1`). Both are Structured Field lists of a string item with parameters; only
// that subset is read here, and a field that does not fit it is ignored, as the draft asks.

/** What an answer says of the API key's request quota. */
export interface RateLimit {
  /** The quota policy's name (the API names its per-minute quota `default`). */
  policy: string;
  /** Requests that may be sent now without being refused for the rate (`r`). */
  remaining: number;
  /** Whole seconds until the quota grows again (`t`); null when not given. */
  resetSeconds: number | null;
  /** Requests the policy allows per window (`q` of `RateLimit-Policy`); null when not given. */
  quota: number | null;
  /** The policy's window in seconds (`w`); null when not given. */
  windowSeconds: number | null;
}

type Items = Map<string, Map<string, string>>;

/** `"name";key=value;...` items separated by commas; null for anything else. */
function parseItems(field: string | null): Items | null {
  if (field === null) return null;
  const items: Items = new Map();
  for (const member of field.split(',')) {
    const [name, ...parameters] = member.trim().split(';');
    const quoted = /^"([^"\\]*)"$/.exec(name ?? '');
    if (!quoted) return null;
    const values = new Map<string, string>();
    for (const parameter of parameters) {
      const match = /^([a-z*][a-z0-9_.*-]*)(?:=(.*))?$/.exec(parameter.trim());
      if (!match) return null;
      values.set(match[1]!, match[2] ?? '?1');
    }
    items.set(quoted[1]!, values);
  }
  return items;
}

function integer(value: string | undefined): number | null {
  return value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : null;
}

/** The quota an answer's headers describe, or null when they carry no well-formed `RateLimit`. */
export function rateLimitOf(headers: Headers): RateLimit | null {
  const limits = parseItems(headers.get('ratelimit'));
  const policies = parseItems(headers.get('ratelimit-policy'));
  const first = limits ? [...limits][0] : undefined;
  if (!first) return null;
  const [policy, values] = first;
  const remaining = integer(values.get('r'));
  if (remaining === null) return null;
  const policyValues = policies?.get(policy);
  return {
    policy,
    remaining,
    resetSeconds: integer(values.get('t')),
    quota: integer(policyValues?.get('q')),
    windowSeconds: integer(policyValues?.get('w')),
  };
}
