import { defineConfig } from 'drizzle-kit';

// PostgreSQL migrations, beside the SQLite ones (drizzle.config.ts).
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/schema/postgres.ts',
  out: './drizzle/postgres',
});
