// Layer rules of the server and the SDK, checked by `pnpm lint:layers` (part of `pnpm lint`).
// docs/architecture.md draws the layers these rules hold.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import circle makes a module unreadable on its own and its load order fragile.',
      from: { path: '^(apps/server/src|packages/sdk/src)/' },
      to: { circular: true },
    },
    {
      name: 'domain-stays-pure',
      severity: 'error',
      comment: 'Domain rules know neither HTTP, storage, the CLI, Hono nor a database driver.',
      from: { path: '^apps/server/src/domain/' },
      to: {
        path: [
          '^apps/server/src/(http|routes|db|cli|providers|use-cases)/',
          'node_modules/(hono|@hono|better-sqlite3|better-sqlite3-napi|pg|drizzle-orm)/',
        ],
      },
    },
    {
      name: 'db-below-http',
      severity: 'error',
      comment: 'Storage serves every caller: it imports no HTTP, route or CLI code.',
      from: { path: '^apps/server/src/db/' },
      to: { path: '^apps/server/src/(http|routes|cli)/' },
    },
    {
      name: 'repositories-query-only',
      severity: 'error',
      comment:
        'A repository reads and writes its resource; the use-case that owns the transaction applies the rules. The files named here still import domain/ and are to follow.',
      from: {
        path: '^apps/server/src/db/repositories/',
        pathNot: [
          '^apps/server/src/db/repositories/api-keys\\.ts$',
          '^apps/server/src/db/repositories/cursor-signer\\.ts$',
          '^apps/server/src/db/repositories/directory\\.ts$',
          '^apps/server/src/db/repositories/event-feed\\.ts$',
          '^apps/server/src/db/repositories/event-import\\.ts$',
          '^apps/server/src/db/repositories/event-readers\\.ts$',
          '^apps/server/src/db/repositories/events\\.ts$',
          '^apps/server/src/db/repositories/prompts\\.ts$',
          '^apps/server/src/db/repositories/roles\\.ts$',
          '^apps/server/src/db/repositories/sessions\\.ts$',
          '^apps/server/src/db/repositories/telephony\\.ts$',
        ],
      },
      to: { path: '^apps/server/src/domain/' },
    },
    {
      name: 'repositories-below-use-cases',
      severity: 'error',
      comment:
        'Use-cases call repositories, not the reverse. experiments.ts hands session routing (sessions.ts, whose transaction stores a planned end) the planned-end use-case until routing has a use-case of its own.',
      from: {
        path: '^apps/server/src/db/repositories/',
        pathNot: '^apps/server/src/db/repositories/experiments\\.ts$',
      },
      to: { path: '^apps/server/src/use-cases/' },
    },
    {
      name: 'use-cases',
      severity: 'error',
      comment:
        'A use-case (open the transaction, load, apply the rule, write, append history) serves the API and the CLI alike: it imports no HTTP, route or CLI code.',
      from: { path: '^apps/server/src/use-cases/' },
      to: { path: '^apps/server/src/(http|routes|cli)/' },
    },
    {
      name: 'wire-maps-only',
      severity: 'error',
      comment: "Wire mappers turn records into the spec's shapes for routes and the CLI alike.",
      from: { path: '^apps/server/src/wire/' },
      to: { path: '^apps/server/src/(http|routes|cli)/' },
    },
    {
      name: 'route-areas-apart',
      severity: 'error',
      comment: 'A route area uses only its own files; what two areas share lives below routes/.',
      from: { path: '^apps/server/src/routes/([^/]+)/' },
      to: { path: '^apps/server/src/routes/([^/]+)/', pathNot: '^apps/server/src/routes/$1/' },
    },
    {
      name: 'nothing-imports-routes',
      severity: 'error',
      comment:
        'Only app.ts mounts the route areas; the CLI and storage reach shared code elsewhere.',
      from: { path: '^apps/server/src/', pathNot: '^apps/server/src/(app\\.ts|routes/)' },
      to: { path: '^apps/server/src/routes/' },
    },
    {
      name: 'nothing-imports-app',
      severity: 'error',
      comment: 'app.ts assembles the app; the modules it assembles do not reach back into it.',
      from: { path: '^apps/server/src/', pathNot: '^apps/server/src/main\\.ts$' },
      to: { path: '^apps/server/src/app\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a circle of types is still a circle to a reader.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
  },
};
