// Turns zod's issues into sentences that say what is wrong in words a person editing the file
// uses ("is required", "unknown field"), each with the JSON path it is about.

import type { z } from 'zod';
import type { JsonPath } from '../records/format.js';

export interface InputIssue {
  path: JsonPath;
  message: string;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'text',
  int: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object',
  record: 'an object',
  null: 'null',
};

function typeName(expected: string): string {
  return TYPE_NAMES[expected] ?? expected;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string')
    return `"${value.length > 40 ? `${value.slice(0, 40)}...` : value}"`;
  if (typeof value === 'object') return 'an object';
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : typeof value;
}

function describeBound(
  issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig,
  inclusiveWord: string,
  exclusiveWord: string,
): string {
  const limit = Number('minimum' in issue ? issue.minimum : issue.maximum);
  const bound = `${issue.inclusive === false ? exclusiveWord : inclusiveWord} ${limit}`;
  if (issue.origin === 'string') {
    return limit === 1 && 'minimum' in issue
      ? 'must not be empty'
      : `must have ${bound} characters`;
  }
  if (issue.origin === 'array') return `must have ${bound} entries`;
  return `must be ${bound}`;
}

/** Zod issues in reading order; parse with `{ reportInput: true }` so values can be quoted. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): InputIssue[] {
  return issues.flatMap((issue): InputIssue[] => {
    switch (issue.code) {
      case 'unrecognized_keys':
        return issue.keys.map((key) => ({
          path: [...issue.path, key],
          message: 'unknown field; check its spelling or remove it',
        }));
      case 'invalid_type':
        return [
          {
            path: issue.path,
            message:
              issue.input === undefined
                ? `is required (${typeName(issue.expected)}); add it`
                : `must be ${typeName(issue.expected)}, not ${describeValue(issue.input)}`,
          },
        ];
      case 'invalid_value':
        return [
          {
            path: issue.path,
            message: `must be one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}, not ${describeValue(issue.input)}`,
          },
        ];
      case 'invalid_union': {
        const expected = [
          ...new Set(
            issue.errors
              .flat()
              .map((inner) =>
                inner.code === 'invalid_type' ? typeName(inner.expected) : inner.message,
              ),
          ),
        ];
        return [
          {
            path: issue.path,
            message: `must be ${expected.join(' or ')}, not ${describeValue(issue.input)}`,
          },
        ];
      }
      case 'too_small':
        return [{ path: issue.path, message: describeBound(issue, 'at least', 'more than') }];
      case 'too_big':
        return [{ path: issue.path, message: describeBound(issue, 'at most', 'less than') }];
      case 'invalid_format':
        return [
          {
            path: issue.path,
            message:
              issue.format === 'datetime'
                ? 'must be an ISO 8601 date-time with seconds and Z or an offset, e.g. 2026-03-17T07:22:20.252Z'
                : issue.message,
          },
        ];
      default:
        return [{ path: issue.path, message: issue.message }];
    }
  });
}
