// Writes platform-records.schema.json from the zod schema that `agentline load` validates with.
// Run `pnpm --filter @agentline/server gen:schemas` after changing src/records/format.ts;
// test/db-records-schema.test.ts fails while the committed file is stale.

import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { platformRecordsJsonSchema } from '../src/records/format.js';

export const PLATFORM_RECORDS_SCHEMA_FILE = fileURLToPath(
  new URL('./platform-records.schema.json', import.meta.url),
);

/** The file's expected text, formatted as the repository's prettier check wants it. */
export async function platformRecordsSchemaText(): Promise<string> {
  const options = await resolveConfig(PLATFORM_RECORDS_SCHEMA_FILE);
  return format(JSON.stringify(platformRecordsJsonSchema()), { ...options, parser: 'json' });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(PLATFORM_RECORDS_SCHEMA_FILE, await platformRecordsSchemaText());
  console.log(`wrote ${PLATFORM_RECORDS_SCHEMA_FILE}`);
}
