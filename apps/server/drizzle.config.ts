import { defineConfig } from 'drizzle-kit';

// SQLite migrations live in drizzle/sqlite so PostgreSQL can get drizzle/postgres beside them.
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/db/schema/sqlite.ts',
  out: './drizzle/sqlite',
});
