// Tools for the validation rule tests (prompts-validation-*.test.ts): a tool with nothing wrong,
// copies of it with one change, and the issues of one rule.

import type { ToolToCheck, ValidationIssue } from '../../src/domain/prompt-validation.js';

function cleanDefinition() {
  return {
    type: 'endpoint',
    endpoint: { argument_location: 'query', method: 'get', url: 'https://api.example.com/orders' },
    static_parameters: [
      { name: 'region', type: 'string', description: 'Store region', required: true },
    ],
    tool: {
      type: 'function',
      function: {
        name: 'lookup_order',
        description: 'Find an order.',
        parameters: {
          type: 'object',
          properties: { order_number: { type: 'string' }, email: { type: 'string' } },
          required: ['order_number'],
        },
      },
    },
  };
}

export type Definition = ReturnType<typeof cleanDefinition>;

/** A clean tool with one change made to a copy of its definition. */
export function toolWith(
  change: (definition: Definition) => void = () => {},
  fields: Partial<ToolToCheck> = {},
): ToolToCheck {
  const definition = cleanDefinition();
  change(definition);
  return { name: 'lookup_order', serviceId: 1, serviceExists: true, definition, ...fields };
}

/** The issues of one rule, as (path, value) pairs. */
export function findings(issues: ValidationIssue[], rule: string) {
  return issues.filter((issue) => issue.id === rule).map(({ path, value }) => ({ path, value }));
}
