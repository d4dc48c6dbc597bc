// The validation rules of prompts (docs/decisions.md section 4): each rule with a record that
// triggers it and near misses that do not, and the order of issues; the spec's list of every rule;
// and the demo records showing every rule through the API.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEMO_RECORDS } from '../src/cli/demo-data.js';
import {
  promptValidationIssues,
  toolValidationIssues,
  VALIDATION_RULES,
  type CheckedTool,
  type PromptToCheck,
} from '../src/domain/prompt-validation.js';
import { loadRecords } from './fixtures/prompts-records.js';
import { createTenant, createTestApi, type Schemas } from './support/harness.js';
import { anyString, stringContaining } from './support/matchers.js';
import { findings, toolWith } from './support/tools-to-check.js';

describe('prompt rules', () => {
  const clean: CheckedTool = { id: 1, name: 'lookup_order', issues: [] };
  const hangUp: CheckedTool = { id: 2, name: 'hang_up', issues: [] };
  const erroneous: CheckedTool = {
    id: 3,
    name: 'open_ticket',
    issues: toolValidationIssues(toolWith((d) => (d.endpoint.url = 'tickets/new'))),
  };
  const warned: CheckedTool = {
    id: 4,
    name: 'send_survey',
    issues: toolValidationIssues(toolWith((d) => (d.tool.function.name = 'survey'))),
  };

  function promptWith(fields: Partial<PromptToCheck>): PromptToCheck {
    return {
      context: 'You help customers.',
      sessionEndEnabled: true,
      sessionEndTool: { id: hangUp.id, name: hangUp.name },
      tools: [clean, hangUp],
      ...fields,
    };
  }

  it('find nothing wrong with a complete prompt', () => {
    expect(promptValidationIssues(promptWith({}))).toEqual([]);
  });

  describe('session-end-tool-missing (error)', () => {
    it('triggers when session end is enabled without a tool', () => {
      expect(promptValidationIssues(promptWith({ sessionEndTool: null }))).toEqual([
        {
          id: 'session-end-tool-missing',
          severity: 'error',
          path: '$.session_end_tool',
          value: null,
          message: stringContaining('disable session end'),
        },
      ]);
    });

    it('does not trigger when session end is off', () => {
      const prompt = promptWith({ sessionEndEnabled: false, sessionEndTool: null });
      expect(promptValidationIssues(prompt)).toEqual([]);
    });
  });

  describe('session-end-tool-not-linked (error)', () => {
    it("triggers when the session end tool is not one of the prompt's tools", () => {
      const issues = promptValidationIssues(promptWith({ tools: [clean] }));
      expect(issues).toEqual([
        {
          id: 'session-end-tool-not-linked',
          severity: 'error',
          path: '$.session_end_tool',
          value: 'hang_up',
          message: stringContaining('"hang_up"'),
        },
      ]);
    });

    it('does not trigger when session end is off', () => {
      const prompt = promptWith({ tools: [clean], sessionEndEnabled: false });
      expect(promptValidationIssues(prompt)).toEqual([]);
    });
  });

  describe('context-empty (error)', () => {
    it.each<[string, string | null]>([
      ['null', null],
      ['empty', ''],
      ['only white space', '  \n\t'],
    ])('triggers for a context that is %s', (_, context) => {
      expect(promptValidationIssues(promptWith({ context }))).toEqual([
        {
          id: 'context-empty',
          severity: 'error',
          path: '$.context',
          value: context,
          message: anyString(),
        },
      ]);
    });

    it('does not trigger for one character of text', () => {
      expect(promptValidationIssues(promptWith({ context: '.' }))).toEqual([]);
    });
  });

  describe('tool-has-errors (error)', () => {
    it('triggers once for each tool with error issues, at its position in tools_full', () => {
      const issues = promptValidationIssues(
        promptWith({ tools: [clean, erroneous, hangUp, warned, { ...erroneous, id: 5 }] }),
      );
      expect(findings(issues, 'tool-has-errors')).toEqual([
        { path: '$.tools_full[1]', value: 'open_ticket' },
        { path: '$.tools_full[4]', value: 'open_ticket' },
      ]);
      expect(issues[0]!.message).toContain('endpoint-url-invalid');
    });

    it('does not trigger for a tool with only warnings', () => {
      expect(warned.issues).not.toEqual([]);
      expect(promptValidationIssues(promptWith({ tools: [warned, hangUp] }))).toEqual([]);
    });
  });

  it('lists issues in rule order', () => {
    const issues = promptValidationIssues({
      context: '',
      sessionEndEnabled: true,
      sessionEndTool: null,
      tools: [erroneous],
    });
    expect(issues.map((issue) => issue.id)).toEqual([
      'session-end-tool-missing',
      'context-empty',
      'tool-has-errors',
    ]);
  });
});

describe('the contract', () => {
  const spec = parse(
    readFileSync(new URL('../../../spec/openapi.yaml', import.meta.url), 'utf8'),
  ) as { components: { schemas: { ValidationIssue: { description: string } } } };
  const description = spec.components.schemas.ValidationIssue.description;

  it.each(['prompt', 'tool'] as const)(
    'lists every %s rule with its severity, in the order issues come',
    (kind) => {
      const rules = VALIDATION_RULES[kind];
      const positions = rules.map(({ id, severity }) => {
        const position = description.indexOf(`\`${id}\` (${severity},`);
        expect(position, `${id} (${severity}) in the ValidationIssue description`).not.toBe(-1);
        return position;
      });
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
    },
  );
});

describe('the demo records', () => {
  it('show every rule through the API', async () => {
    const api = await createTestApi();
    const demo = await createTenant(api.db, 'Demo');
    await loadRecords(api.db, demo.organizationId, DEMO_RECORDS);
    const res = await api
      .request<Schemas['PromptListResponse']>('GET', '/api/v1/prompts/', { key: demo.key })
      .finally(() => api.close());
    // Listed without `fields`, every prompt carries every property.
    const items = res.body.items as Array<Required<Schemas['Prompt']>>;
    const seen = new Set(
      items.flatMap((item) =>
        [item, ...item.tools_full].flatMap((carrier) =>
          carrier.validation_issues.map((issue) => issue.id),
        ),
      ),
    );
    const all = [...VALIDATION_RULES.prompt, ...VALIDATION_RULES.tool].map((rule) => rule.id);
    expect([...seen].sort()).toEqual([...all].sort());
    expect(items.some((item) => item.validation_issues.length === 0)).toBe(true);
  });
});
