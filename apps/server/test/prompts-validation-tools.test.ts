// The validation rules of tools (docs/decisions.md section 4): each rule with a record that
// triggers it and near misses that do not, and the order of issues; and the completion of a stored
// tool definition to the whole shape.

import { describe, expect, it } from 'vitest';
import { toolValidationIssues, type ToolToCheck } from '../src/domain/prompt-validation.js';
import { completeToolDefinition } from '../src/domain/prompts.js';
import { stringContaining } from './support/matchers.js';
import { findings, toolWith, type Definition } from './support/tools-to-check.js';

const parameters = (definition: Definition) => definition.tool.function.parameters;

describe('tool rules', () => {
  it('find nothing wrong with a complete tool', () => {
    expect(toolValidationIssues(toolWith())).toEqual([]);
  });

  describe('service-missing (error)', () => {
    it.each<[string, Partial<ToolToCheck>, string | null]>([
      ['no service', { serviceId: null, serviceExists: false }, null],
      ['a service that does not exist', { serviceId: 9, serviceExists: false }, '9'],
    ])('triggers for %s', (_, fields, value) => {
      const issues = toolValidationIssues(toolWith(undefined, fields));
      expect(findings(issues, 'service-missing')).toEqual([{ path: '$.service_id', value }]);
      expect(issues[0]).toMatchObject({ severity: 'error' });
    });
  });

  describe('endpoint-url-invalid (error)', () => {
    it.each<[string, string | undefined]>([
      ['a relative url', 'tickets/new'],
      ['a path', '/v1/appointments'],
      ['another scheme', 'ftp://files.example.com/x'],
      ['a scheme without a host', 'https://'],
      ['an empty url', ''],
      ['no url', undefined],
    ])('triggers for %s', (_, url) => {
      const issues = toolValidationIssues(
        toolWith((definition) => {
          if (url === undefined) delete (definition.endpoint as { url?: string }).url;
          else definition.endpoint.url = url;
        }),
      );
      expect(findings(issues, 'endpoint-url-invalid')).toEqual([
        { path: '$.definition.endpoint.url', value: url ?? null },
      ]);
    });

    it.each(['http://localhost:8080/hook', 'https://api.example.com', 'HTTPS://API.EXAMPLE.COM/x'])(
      'accepts %s',
      (url) => {
        const issues = toolValidationIssues(toolWith((d) => (d.endpoint.url = url)));
        expect(findings(issues, 'endpoint-url-invalid')).toEqual([]);
      },
    );

    it('triggers when the definition has no endpoint at all', () => {
      const issues = toolValidationIssues(
        toolWith((d) => delete (d as Partial<Definition>).endpoint),
      );
      expect(issues.map((issue) => issue.id)).toEqual([
        'endpoint-url-invalid',
        'endpoint-method-invalid',
      ]);
    });
  });

  describe('endpoint-method-invalid (error)', () => {
    it.each<[string | undefined, string | null]>([
      ['POST', 'POST'],
      ['fetch', 'fetch'],
      ['', ''],
      [undefined, null],
    ])('triggers for %s', (method, value) => {
      const issues = toolValidationIssues(
        toolWith((definition) => {
          if (method === undefined) delete (definition.endpoint as { method?: string }).method;
          else definition.endpoint.method = method;
        }),
      );
      expect(findings(issues, 'endpoint-method-invalid')).toEqual([
        { path: '$.definition.endpoint.method', value },
      ]);
    });

    it.each(['get', 'post', 'put', 'patch', 'delete'])('accepts %s', (method) => {
      const issues = toolValidationIssues(toolWith((d) => (d.endpoint.method = method)));
      expect(issues).toEqual([]);
    });
  });

  describe('required-parameter-undefined (error)', () => {
    it('triggers once for each required name that is not declared, at its index', () => {
      const issues = toolValidationIssues(
        toolWith((d) => (parameters(d).required = ['order_number', 'customer_id', 'priority'])),
      );
      expect(findings(issues, 'required-parameter-undefined')).toEqual([
        { path: '$.definition.tool.function.parameters.required[1]', value: 'customer_id' },
        { path: '$.definition.tool.function.parameters.required[2]', value: 'priority' },
      ]);
    });

    it('triggers when there are no properties at all', () => {
      const issues = toolValidationIssues(
        toolWith((d) => delete (parameters(d) as { properties?: unknown }).properties),
      );
      expect(findings(issues, 'required-parameter-undefined')).toEqual([
        { path: '$.definition.tool.function.parameters.required[0]', value: 'order_number' },
      ]);
    });

    it('does not trigger when every required name is declared, or nothing is required', () => {
      const all = toolWith((d) => (parameters(d).required = ['email', 'order_number']));
      const none = toolWith((d) => (parameters(d).required = []));
      expect(toolValidationIssues(all)).toEqual([]);
      expect(toolValidationIssues(none)).toEqual([]);
    });
  });

  describe('function-name-mismatch (warning)', () => {
    it.each<[string, string | undefined]>([
      ['another name', 'lookup'],
      ['another case', 'Lookup_Order'],
      ['no name', undefined],
    ])('triggers for %s', (_, name) => {
      const issues = toolValidationIssues(
        toolWith((definition) => {
          const fn = definition.tool.function as { name?: string };
          if (name === undefined) delete fn.name;
          else fn.name = name;
        }),
      );
      expect(issues).toEqual([
        {
          id: 'function-name-mismatch',
          severity: 'warning',
          path: '$.definition.tool.function.name',
          value: name ?? null,
          message: stringContaining('"lookup_order"'),
        },
      ]);
    });
  });

  describe('static-parameter-shadows-function-parameter (warning)', () => {
    it('triggers for each static parameter named like a function parameter', () => {
      const issues = toolValidationIssues(
        toolWith((d) =>
          d.static_parameters.push(
            { name: 'email', type: 'string', description: 'Fallback', required: false },
            { name: 'order_number', type: 'string', description: 'Fixed', required: false },
          ),
        ),
      );
      expect(findings(issues, 'static-parameter-shadows-function-parameter')).toEqual([
        { path: '$.definition.static_parameters[1].name', value: 'email' },
        { path: '$.definition.static_parameters[2].name', value: 'order_number' },
      ]);
      expect(issues.every((issue) => issue.severity === 'warning')).toBe(true);
    });

    it('does not trigger for a name that is only required, not declared', () => {
      const issues = toolValidationIssues(toolWith((d) => parameters(d).required.push('region')));
      expect(findings(issues, 'static-parameter-shadows-function-parameter')).toEqual([]);
    });
  });

  it('lists issues in rule order, then array order, whatever the key order', () => {
    const broken = (reverseKeys: boolean) =>
      toolWith(
        (d) => {
          d.endpoint = { argument_location: 'body', method: 'GET', url: 'orders' };
          parameters(d).required = ['x', 'y'];
          if (reverseKeys) {
            parameters(d).properties = {
              email: { type: 'string' },
              order_number: { type: 'string' },
            };
          }
          d.static_parameters.unshift({
            name: 'email',
            type: 'string',
            description: '',
            required: false,
          });
          d.tool.function.name = 'find_order';
        },
        { serviceId: null, serviceExists: false },
      );
    const issues = toolValidationIssues(broken(false));
    expect(issues.map(({ id, path }) => `${id} ${path}`)).toEqual([
      'service-missing $.service_id',
      'endpoint-url-invalid $.definition.endpoint.url',
      'endpoint-method-invalid $.definition.endpoint.method',
      'required-parameter-undefined $.definition.tool.function.parameters.required[0]',
      'required-parameter-undefined $.definition.tool.function.parameters.required[1]',
      'function-name-mismatch $.definition.tool.function.name',
      'static-parameter-shadows-function-parameter $.definition.static_parameters[0].name',
    ]);
    expect(toolValidationIssues(broken(true))).toEqual(issues);
  });

  it('copes with a definition that is not an object', () => {
    for (const definition of [null, [], 'endpoint']) {
      const issues = toolValidationIssues(toolWith(undefined, { definition }));
      expect(issues.map((issue) => [issue.id, issue.value])).toEqual([
        ['endpoint-url-invalid', null],
        ['endpoint-method-invalid', null],
        ['function-name-mismatch', null],
      ]);
    }
  });
});

describe('completeToolDefinition', () => {
  it('fills every part the interface names with an empty value', () => {
    for (const stored of [{}, null, [], { endpoint: 'x', tool: { function: [] } }]) {
      expect(completeToolDefinition(stored)).toMatchObject({
        type: '',
        endpoint: { argument_location: '', method: '', url: '' },
        static_parameters: [],
        tool: {
          type: '',
          function: {
            name: '',
            description: '',
            parameters: { type: '', properties: {}, required: [] },
          },
        },
      });
    }
  });

  it('completes entries of lists and maps and keeps keys the interface does not name', () => {
    const completed = completeToolDefinition({
      headers: { 'X-Api': 'v2' },
      static_parameters: [{ name: 'region', default: 'us' }],
      tool: {
        function: {
          parameters: { properties: { id: { description: 'Order' } }, required: ['id', 7] },
        },
      },
    });
    expect(completed['headers']).toEqual({ 'X-Api': 'v2' });
    expect(completed.static_parameters).toEqual([
      { name: 'region', type: '', description: '', required: false, default: 'us' },
    ]);
    expect(completed.tool.function.parameters).toEqual({
      type: '',
      properties: { id: { type: '', description: 'Order' } },
      required: ['id'],
    });
  });
});
