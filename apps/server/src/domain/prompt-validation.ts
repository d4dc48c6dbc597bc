// What is wrong with a prompt or a tool (docs/decisions.md section 4), computed from the stored
// records alone so the same data always gives the same issues in the same order: rule order,
// then the order of the offending entries in their arrays. The rule ids, severities and paths
// are part of the contract (the ValidationIssue description in spec/openapi.yaml lists them).

import type { components } from '../spec-types.js';
import { listAt, recordAt, textAt } from './prompts.js';

export type Severity = components['schemas']['ValidationIssue']['severity'];

export interface ValidationIssue {
  /** Stable kebab-case rule id. */
  id: string;
  message: string;
  severity: Severity;
  /** JSONPath into the object that carries the issue (`$` is that prompt or tool). */
  path: string;
  /** The offending value as text, or null when it is missing. */
  value: string | null;
}

interface Finding {
  path: string;
  value: string | null;
  message: string;
}

interface Rule<Subject> {
  id: string;
  severity: Severity;
  find(subject: Subject): Finding[];
}

function runRules<Subject>(rules: ReadonlyArray<Rule<Subject>>, subject: Subject) {
  return rules.flatMap((rule) =>
    rule.find(subject).map((finding): ValidationIssue => ({
      id: rule.id,
      message: finding.message,
      severity: rule.severity,
      path: finding.path,
      value: finding.value,
    })),
  );
}

// ---- tools ---------------------------------------------------------------------------------

/** A tool as stored: the definition is checked as loaded, before any defaults fill it in. */
export interface ToolToCheck {
  name: string;
  serviceId: number | null;
  /** Whether the service the tool names exists in the tool's organization. */
  serviceExists: boolean;
  definition: unknown;
}

/** The parts of a definition the rules look at, each where the interface puts it. */
function definitionParts(definition: unknown) {
  const root = recordAt(definition);
  const endpoint = recordAt(root['endpoint']);
  const fn = recordAt(recordAt(root['tool'])['function']);
  const parameters = recordAt(fn['parameters']);
  return {
    url: textAt(endpoint['url']),
    method: textAt(endpoint['method']),
    functionName: textAt(fn['name']),
    parameterNames: new Set(Object.keys(recordAt(parameters['properties']))),
    required: listAt(parameters['required']),
    staticParameters: listAt(root['static_parameters']),
  };
}

const ENDPOINT_METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

function isAbsoluteHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

type ToolSubject = ToolToCheck & ReturnType<typeof definitionParts>;

const TOOL_RULES: ReadonlyArray<Rule<ToolSubject>> = [
  {
    id: 'service-missing',
    severity: 'error',
    find: (tool) => {
      if (tool.serviceExists) return [];
      return [
        {
          path: '$.service_id',
          value: tool.serviceId === null ? null : String(tool.serviceId),
          message:
            tool.serviceId === null
              ? 'The tool belongs to no service; assign it to the service that serves its endpoint.'
              : `Service ${tool.serviceId} does not exist; assign the tool to an existing service.`,
        },
      ];
    },
  },
  {
    id: 'endpoint-url-invalid',
    severity: 'error',
    find: ({ url }) => {
      if (url !== null && isAbsoluteHttpUrl(url)) return [];
      return [
        {
          path: '$.definition.endpoint.url',
          value: url,
          message:
            url === null
              ? 'The endpoint has no url; set an absolute http(s) URL such as https://api.example.com/orders.'
              : `"${url}" is not an absolute http(s) URL; write it in full, such as https://api.example.com/orders.`,
        },
      ];
    },
  },
  {
    id: 'endpoint-method-invalid',
    severity: 'error',
    find: ({ method }) => {
      if (method !== null && ENDPOINT_METHODS.has(method)) return [];
      return [
        {
          path: '$.definition.endpoint.method',
          value: method,
          message: `${method === null ? 'The endpoint has no method' : `"${method}" is not a method the platform calls`}; use get, post, put, patch or delete, in lower case.`,
        },
      ];
    },
  },
  {
    id: 'required-parameter-undefined',
    severity: 'error',
    find: ({ required, parameterNames }) =>
      required.flatMap((name, index) =>
        typeof name === 'string' && parameterNames.has(name)
          ? []
          : [
              {
                path: `$.definition.tool.function.parameters.required[${index}]`,
                value: typeof name === 'string' ? name : null,
                message: `"${String(name)}" is required but not declared in the function's parameters.properties; declare it or remove it from required.`,
              },
            ],
      ),
  },
  {
    id: 'function-name-mismatch',
    severity: 'warning',
    find: ({ functionName, name }) => {
      if (functionName === name) return [];
      return [
        {
          path: '$.definition.tool.function.name',
          value: functionName,
          message: `The LLM calls this tool by its function name ${functionName === null ? '(none is set)' : `"${functionName}"`}, which differs from the tool name "${name}"; use the same name for both.`,
        },
      ];
    },
  },
  {
    id: 'static-parameter-shadows-function-parameter',
    severity: 'warning',
    find: ({ staticParameters, parameterNames }) =>
      staticParameters.flatMap((parameter, index) => {
        const name = textAt(recordAt(parameter)['name']);
        if (name === null || !parameterNames.has(name)) return [];
        return [
          {
            path: `$.definition.static_parameters[${index}].name`,
            value: name,
            message: `The static parameter "${name}" has the name of a function parameter, so the platform's value and the LLM's compete for it; rename one of them.`,
          },
        ];
      }),
  },
];

export function toolValidationIssues(tool: ToolToCheck): ValidationIssue[] {
  return runRules(TOOL_RULES, { ...tool, ...definitionParts(tool.definition) });
}

// ---- prompts -------------------------------------------------------------------------------

export interface CheckedTool {
  id: number;
  name: string;
  issues: readonly ValidationIssue[];
}

export interface PromptToCheck {
  context: string | null;
  sessionEndEnabled: boolean;
  /** The session end tool, or null when none is set (or the one set no longer exists). */
  sessionEndTool: { id: number; name: string } | null;
  /** The prompt's tools in `tools_full` order, with their own issues. */
  tools: readonly CheckedTool[];
}

const PROMPT_RULES: ReadonlyArray<Rule<PromptToCheck>> = [
  {
    id: 'session-end-tool-missing',
    severity: 'error',
    find: (prompt) =>
      prompt.sessionEndEnabled && prompt.sessionEndTool === null
        ? [
            {
              path: '$.session_end_tool',
              value: null,
              message:
                "Session end is enabled but no session end tool is set; choose one of the prompt's tools or disable session end.",
            },
          ]
        : [],
  },
  {
    id: 'session-end-tool-not-linked',
    severity: 'error',
    find: ({ sessionEndEnabled, sessionEndTool, tools }) => {
      if (!sessionEndEnabled || sessionEndTool === null) return [];
      if (tools.some((tool) => tool.id === sessionEndTool.id)) return [];
      return [
        {
          path: '$.session_end_tool',
          value: sessionEndTool.name,
          message: `The session end tool "${sessionEndTool.name}" is not one of the prompt's tools, so the LLM cannot call it; add it to the tools or choose a linked one.`,
        },
      ];
    },
  },
  {
    id: 'context-empty',
    severity: 'error',
    find: ({ context }) =>
      context === null || context.trim() === ''
        ? [
            {
              path: '$.context',
              value: context,
              message:
                'The prompt has no instruction text; write the context the LLM should follow.',
            },
          ]
        : [],
  },
  {
    id: 'tool-has-errors',
    severity: 'error',
    find: ({ tools }) =>
      tools.flatMap((tool, index) => {
        const errors = tool.issues.filter((issue) => issue.severity === 'error');
        if (errors.length === 0) return [];
        return [
          {
            path: `$.tools_full[${index}]`,
            value: tool.name,
            message: `The tool "${tool.name}" has ${errors.length} error(s) (${[...new Set(errors.map((issue) => issue.id))].join(', ')}); fix them, see its validation_issues.`,
          },
        ];
      }),
  },
];

export function promptValidationIssues(prompt: PromptToCheck): ValidationIssue[] {
  return runRules(PROMPT_RULES, prompt);
}

// ---- stored prompts and tools ----------------------------------------------------------------

/** What the rules read of a stored tool. */
export interface StoredTool {
  id: number;
  name: string;
  serviceId: number | null;
  /** Null when the tool has no service or its service does not exist. */
  serviceName: string | null;
  definition: unknown;
}

/** What the rules read of a stored prompt. */
export interface StoredPrompt {
  id: number;
  context: string | null;
  sessionEndEnabled: boolean;
  sessionEndToolId: number | null;
  /** The linked tools' ids, in `tools_full` order. */
  toolIds: readonly number[];
}

export function storedToolIssues(tool: StoredTool): ValidationIssue[] {
  return toolValidationIssues({
    name: tool.name,
    serviceId: tool.serviceId,
    serviceExists: tool.serviceName !== null,
    definition: tool.definition,
  });
}

/**
 * A prompt's issues; `toolOf(id)` gives a tool of the organization with its own issues, or
 * undefined when no such tool exists.
 */
export function storedPromptIssues(
  prompt: StoredPrompt,
  toolOf: (id: number) => CheckedTool | undefined,
): ValidationIssue[] {
  return promptValidationIssues({
    context: prompt.context,
    sessionEndEnabled: prompt.sessionEndEnabled,
    sessionEndTool:
      prompt.sessionEndToolId === null ? null : (toolOf(prompt.sessionEndToolId) ?? null),
    tools: prompt.toolIds.flatMap((id) => toolOf(id) ?? []),
  });
}

/**
 * For each prompt, the ids of the rules it breaks with severity error, once each in rule order,
 * as the prompts list reports them (experiment start warnings name such prompts,
 * docs/decisions.md section 6). `tools` holds every tool the prompts link or name.
 */
export function promptErrorIssueIds(
  prompts: readonly StoredPrompt[],
  tools: ReadonlyMap<number, StoredTool>,
): Map<number, string[]> {
  const checked = new Map(
    [...tools.values()].map((tool) => [
      tool.id,
      { id: tool.id, name: tool.name, issues: storedToolIssues(tool) },
    ]),
  );
  return new Map(
    prompts.map((prompt) => {
      const issues = storedPromptIssues(prompt, (id) => checked.get(id));
      const errors = issues.filter((issue) => issue.severity === 'error');
      return [prompt.id, [...new Set(errors.map((issue) => issue.id))]];
    }),
  );
}

/** Every rule, in the order its issues are listed: for the spec check and documentation. */
export const VALIDATION_RULES = {
  prompt: PROMPT_RULES.map(({ id, severity }) => ({ id, severity })),
  tool: TOOL_RULES.map(({ id, severity }) => ({ id, severity })),
};
