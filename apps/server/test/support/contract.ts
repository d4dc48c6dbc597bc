/**
 * Checks a server response against the contract: the URL must match a spec path, the status must
 * be declared for that operation, and a JSON body must validate against the declared schema.
 *
 * No ready-made OpenAPI response validator handles 3.1, so the whole document is added to Ajv's
 * 2020-12 validator as one schema and each response schema is compiled by its JSON pointer
 * inside it; `$ref`s into components resolve because they stay inside that one schema.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: depending on the loader its default import is the plugin itself or
// the module object that carries it as `default`.
const addFormats = ((addFormatsModule as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => Ajv2020;

type JsonObject = { [key: string]: unknown };

export interface ResponseToValidate {
  method: string;
  /** A path (`/api/v1/events/?limit=5`) or a full URL; the query is ignored. */
  url: string;
  status: number;
  headers?: Headers | Record<string, string>;
  /** The parsed JSON body, or undefined when the response has none. */
  body: unknown;
}

export interface StreamMessageToValidate {
  /** The stream's path (`/api/v1/events/stream?fields=type`); the query is ignored. */
  url: string;
  /** The message's `event` field. */
  event: string;
  /** The message's `data`, parsed. */
  data: unknown;
}

export interface SpecValidator {
  /** Throws an Error that says what does not match when the response breaks the contract. */
  validateResponse(response: ResponseToValidate): void;
  /**
   * Throws unless a `text/event-stream` answer's message is one the spec declares: its `event`
   * named in the media type's `x-agentline-message-data`, its data valid against that schema.
   */
  validateStreamMessage(message: StreamMessageToValidate): void;
  /**
   * Throws unless a webhook request is one the spec's `webhooks` declares: the entry its body's
   * `type` names, the body valid against that entry's schema, each declared header present and
   * valid.
   */
  validateWebhookRequest(request: WebhookRequestToValidate): void;
}

export interface WebhookRequestToValidate {
  headers: Record<string, string | string[] | undefined>;
  /** The raw body, as it arrived. */
  body: string;
}

const DOCUMENT_ID = 'openapi.json';
const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

export function createSpecValidator(specDocument: unknown): SpecValidator {
  const document = asObject(specDocument);
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  // A format Ajv does not know (`int64` it does) is documentation only: accept any value for
  // it instead of warning on every compile.
  for (const format of formatsIn(document)) {
    if (!(format in ajv.formats)) ajv.addFormat(format, true);
  }
  ajv.addSchema(document, DOCUMENT_ID);
  const validators = new Map<string, ValidateFunction>();
  const templates = Object.keys(asObject(document['paths'])).map(pathTemplate);

  const validatorFor = (pointer: string): ValidateFunction => {
    let validate = validators.get(pointer);
    if (!validate) {
      validate = ajv.getSchema(`${DOCUMENT_ID}#${pointer}`);
      if (!validate) throw new Error(`The spec has no schema at ${pointer}`);
      validators.set(pointer, validate);
    }
    return validate;
  };

  return {
    validateWebhookRequest({ headers, body }) {
      const message = asObject(JSON.parse(body));
      const type = String(message['type']);
      const label = `webhook message "${type}"`;
      const webhooks = asObject(document['webhooks']);
      if (!(type in webhooks)) {
        throw new Error(
          `${label}: the spec declares no such webhook (declared: ${Object.keys(webhooks).join(', ')})`,
        );
      }
      const operationPointer = `/webhooks/${escapePointer(type)}/post`;
      const operation = asObject(asObject(webhooks[type])['post']);
      for (const reference of operation['parameters'] as Array<{ $ref: string }>) {
        const pointer = reference.$ref.replace(/^#/, '');
        const parameter = nodeAt(document, pointer);
        const name = String(asObject(parameter)['name']);
        const value = headers[name];
        const validate = validatorFor(`${pointer}/schema`);
        if (typeof value !== 'string' || !validate(value)) {
          throw new Error(
            `${label}: header ${name} ${JSON.stringify(value)} does not match ${DOCUMENT_ID}#${pointer}/schema`,
          );
        }
      }
      const schemaPointer = `${operationPointer}/requestBody/content/application~1json/schema`;
      const validate = validatorFor(schemaPointer);
      if (!validate(message)) {
        throw new Error(
          `${label}: the body does not match ${DOCUMENT_ID}#${schemaPointer}:\n${formatErrors(validate.errors ?? [])}\nbody: ${preview(message)}`,
        );
      }
    },
    validateStreamMessage({ url, event, data }) {
      const pathname = new URL(url, 'http://localhost').pathname;
      const template = matchTemplate(templates, pathname);
      const label = `GET ${pathname} message "${event}"`;
      if (!template) throw new Error(`${label}: the path matches no path of the spec`);
      const mediaPath = ['paths', template, 'get', 'responses', '200', 'content'];
      const mediaPointer = `/${mediaPath.map(escapePointer).join('/')}/text~1event-stream`;
      const declared = asObject(
        asObject(nodeAt(document, mediaPointer))['x-agentline-message-data'] ?? {},
      );
      if (!(event in declared)) {
        throw new Error(
          `${label}: the spec declares no such message (declared: ${Object.keys(declared).join(', ')})`,
        );
      }
      const schemaPointer = `${mediaPointer}/x-agentline-message-data/${escapePointer(event)}`;
      const validate = validatorFor(schemaPointer);
      if (!validate(data)) {
        throw new Error(
          `${label}: the data does not match ${DOCUMENT_ID}#${schemaPointer}:\n${formatErrors(validate.errors ?? [])}\ndata: ${preview(data)}`,
        );
      }
    },
    validateResponse({ method, url, status, headers, body }) {
      const pathname = new URL(url, 'http://localhost').pathname;
      const label = `${method.toUpperCase()} ${pathname} -> ${status}`;
      const template = matchTemplate(templates, pathname);
      if (!template) throw new Error(`${label}: the path matches no path of the spec`);

      const operationMethod = method.toLowerCase();
      const pathItem = asObject(asObject(document['paths'])[template]);
      if (!HTTP_METHODS.has(operationMethod) || pathItem[operationMethod] === undefined) {
        throw new Error(`${label}: the spec declares no ${method.toUpperCase()} on ${template}`);
      }
      const operationPointer = `/paths/${escapePointer(template)}/${operationMethod}`;
      const responses = asObject(asObject(pathItem[operationMethod])['responses']);
      const statusKey = [String(status), `${String(status)[0]}XX`, 'default'].find(
        (key) => key in responses,
      );
      if (!statusKey) {
        throw new Error(
          `${label}: status ${status} is not declared for ${method.toUpperCase()} ${template} (declared: ${Object.keys(responses).join(', ')})`,
        );
      }

      const { response, pointer: responsePointer } = followResponseRef(
        document,
        responses[statusKey],
        `${operationPointer}/responses/${escapePointer(statusKey)}`,
      );
      const content = asObject(response['content']);
      const mediaTypes = Object.keys(content);
      const contentType = headerValue(headers, 'content-type')?.split(';')[0]?.trim().toLowerCase();
      if (mediaTypes.length === 0) {
        if (body !== undefined && body !== null && body !== '') {
          throw new Error(
            `${label}: the spec declares no body for this response, but one was sent`,
          );
        }
        return;
      }
      if (contentType !== undefined && !mediaTypes.includes(contentType)) {
        throw new Error(
          `${label}: content type ${contentType} is not declared (declared: ${mediaTypes.join(', ')})`,
        );
      }
      if (
        !('application/json' in content) ||
        (contentType !== undefined && contentType !== 'application/json')
      )
        return;

      const schemaPointer = `${responsePointer}/content/application~1json/schema`;
      const validate = validatorFor(schemaPointer);
      if (!validate(body)) {
        throw new Error(
          `${label}: the body does not match ${DOCUMENT_ID}#${schemaPointer}:\n${formatErrors(validate.errors ?? [])}\nbody: ${preview(body)}`,
        );
      }
    },
  };
}

let defaultValidator: SpecValidator | undefined;

/** Validates against apps/server/src/generated/openapi.json, read on first use. */
function defaultSpecValidator(): SpecValidator {
  defaultValidator ??= createSpecValidator(
    JSON.parse(readFileSync(new URL('../../src/generated/openapi.json', import.meta.url), 'utf8')),
  );
  return defaultValidator;
}

export const specValidator: SpecValidator = {
  validateResponse(response) {
    defaultSpecValidator().validateResponse(response);
  },
  validateWebhookRequest(request) {
    defaultSpecValidator().validateWebhookRequest(request);
  },
  validateStreamMessage(message) {
    defaultSpecValidator().validateStreamMessage(message);
  },
};

/**
 * Reads a fetch Response (without consuming it) and validates it against the generated spec.
 *
 * @example
 *   const response = await app.request('/api/v1/events/?limit=5', { headers });
 *   await expectResponseMatchesSpec('GET', '/api/v1/events/?limit=5', response);
 */
export async function expectResponseMatchesSpec(
  method: string,
  url: string,
  response: Response,
): Promise<void> {
  const text = await response.clone().text();
  const isJson = /^application\/(?:[\w.+-]+\+)?json/i.test(
    response.headers.get('content-type') ?? '',
  );
  let body: unknown = text === '' ? undefined : text;
  if (isJson && text !== '') {
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(
        `${method.toUpperCase()} ${url} -> ${response.status}: the body is not valid JSON: ${preview(text)}`,
      );
    }
  }
  specValidator.validateResponse({
    method,
    url,
    status: response.status,
    headers: response.headers,
    body,
  });
}

// ---- helpers ---------------------------------------------------------------------------------

interface PathTemplate {
  template: string;
  pattern: RegExp;
  parameterCount: number;
}

function pathTemplate(template: string): PathTemplate {
  const parts = template.split(/(\{[^}]+\})/);
  const source = parts
    .map((part) =>
      /^\{[^}]+\}$/.test(part) ? '([^/]+)' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('');
  return {
    template,
    pattern: new RegExp(`^${source}$`),
    parameterCount: parts.filter((part) => part.startsWith('{')).length,
  };
}

/** A literal path wins over a templated one (`/items/search` over `/items/{id}`), as OpenAPI says. */
function matchTemplate(templates: PathTemplate[], pathname: string): string | undefined {
  return templates
    .filter(({ pattern }) => pattern.test(pathname))
    .sort((left, right) => left.parameterCount - right.parameterCount)[0]?.template;
}

function followResponseRef(
  document: JsonObject,
  node: unknown,
  pointer: string,
): { response: JsonObject; pointer: string } {
  let current = { response: asObject(node), pointer };
  const seen = new Set<string>();
  while (typeof current.response['$ref'] === 'string' && !seen.has(current.response['$ref'])) {
    const ref = current.response['$ref'];
    seen.add(ref);
    if (!ref.startsWith('#/')) throw new Error(`Only local $refs are supported, not ${ref}`);
    current = { response: asObject(nodeAt(document, ref.slice(1))), pointer: ref.slice(1) };
  }
  return current;
}

function formatsIn(node: unknown): Set<string> {
  const formats = new Set<string>();
  const visit = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (typeof value === 'object' && value !== null) {
      for (const [key, child] of Object.entries(value)) {
        if (key === 'format' && typeof child === 'string') formats.add(child);
        else visit(child);
      }
    }
  };
  visit(node);
  return formats;
}

function formatErrors(errors: ErrorObject[]): string {
  return errors
    .map((error) => {
      const detail =
        error.keyword === 'additionalProperties'
          ? ` (${String((error.params as { additionalProperty?: unknown }).additionalProperty)})`
          : error.keyword === 'enum'
            ? ` (${JSON.stringify((error.params as { allowedValues?: unknown }).allowedValues)})`
            : '';
      return `  ${jsonPath(error.instancePath)} ${error.message ?? 'is invalid'}${detail}`;
    })
    .join('\n');
}

/** Ajv's `/items/0/timestamp` as `$.items[0].timestamp`. */
function jsonPath(instancePath: string): string {
  if (instancePath === '') return '$';
  return (
    '$' +
    instancePath
      .slice(1)
      .split('/')
      .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
      .map((segment) =>
        /^\d+$/.test(segment)
          ? `[${segment}]`
          : /^[A-Za-z_$][\w$]*$/.test(segment)
            ? `.${segment}`
            : `[${JSON.stringify(segment)}]`,
      )
      .join('')
  );
}

function headerValue(headers: ResponseToValidate['headers'], name: string): string | undefined {
  if (!headers) return undefined;
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

function preview(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 500 ? `${text.slice(0, 497)}...` : text;
}

/** The node a JSON pointer (`/a/b~1c`) names in `document`. */
function nodeAt(document: JsonObject, pointer: string): unknown {
  return pointer
    .split('/')
    .slice(1)
    .reduce<unknown>(
      (node, segment) => asObject(node)[segment.replace(/~1/g, '/').replace(/~0/g, '~')],
      document,
    );
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

function asObject(value: unknown): JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as JsonObject)
    : {};
}
