// The server's own OpenAPI document (what @hono/zod-openapi registers) must say what the spec
// says. A difference is printed one line each, so a failing run shows exactly what drifted.
// The spec is read from spec/openapi.yaml itself, not from a generated copy, so an edit of the
// contract that the server has not followed fails here even before anything is regenerated.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { openApiDocumentConfig } from '../src/generated/routes.js';
import { createTestApi } from './support/harness.js';
import { diffOpenApiDocuments } from './support/openapi-diff.js';

const spec: unknown = parse(
  readFileSync(new URL('../../../spec/openapi.yaml', import.meta.url), 'utf8'),
);

describe('the server matches spec/openapi.yaml', async () => {
  const api = await createTestApi();
  const serverDocument = api.app.getOpenAPI31Document(openApiDocumentConfig);
  await api.close();

  it('registers every operation exactly as the spec describes it', () => {
    const differences = diffOpenApiDocuments(spec, serverDocument);
    expect(differences.join('\n')).toBe('');
  });
});
