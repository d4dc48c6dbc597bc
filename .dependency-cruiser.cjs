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
      name: 'no-folder-cycle',
      scope: 'folder',
      severity: 'error',
      comment:
        'The folders stack: a folder that imports another is never imported back by it, through ' +
        'any number of others, so each can be read with only what lies below it.',
      from: { path: '^apps/server/src/' },
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
      name: 'db-is-the-floor',
      severity: 'error',
      comment:
        'Storage serves every caller: it imports no use-case, runtime, HTTP, route or CLI code ' +
        '(what runs the queries calls down to it, never the reverse). So no repository keeps a ' +
        "cache of what the tables hold: ByteBoundedLru is runtime/'s (kept-answers.ts).",
      from: { path: '^apps/server/src/db/' },
      to: { path: '^apps/server/src/(use-cases|runtime|http|routes|cli)/' },
    },
    {
      name: 'repositories-query-only',
      severity: 'error',
      comment:
        'A repository reads and writes its resource; the code that owns the operation (a ' +
        'use-case, routing) applies the rules. It imports nothing of domain/, types included: ' +
        'the names both need (list queries, properties, permissions) live in vocabulary/. The ' +
        'engine and the schema modules a repository is built on hold to the same, so loading a ' +
        'repository loads no rule.',
      from: { path: '^apps/server/src/db/(repositories|engine|schema)/' },
      to: { path: '^apps/server/src/domain/' },
    },
    {
      name: 'vocabulary-stands-alone',
      severity: 'error',
      comment:
        'vocabulary/ holds the names that domain/ and db/ share (list query shapes, property ' +
        'names, permissions, the JSON text brand, A2P records), below both: it imports no server ' +
        "module but its own, the contract's generated types and its generated enum values, and " +
        'no package.',
      from: { path: '^apps/server/src/vocabulary/' },
      to: {
        path: ['^apps/server/src/', 'node_modules/'],
        pathNot: '^apps/server/src/(vocabulary/|spec-types\\.ts$|generated/enum-values\\.ts$)',
      },
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

    {
      name: 'runtime-callers',
      severity: 'error',
      comment:
        "runtime/ is what a process runs beside its requests (the live event feed, SQLite's " +
        'reader threads, the webhook dispatcher, the kept answers, the periodic jobs): the ' +
        'entries that start it (main.ts, app.ts), HTTP, routes and the CLI use it. Below it ' +
        'nothing does.',
      from: {
        path: '^apps/server/src/',
        pathNot: '^apps/server/src/(main\\.ts$|app\\.ts$|http/|routes/|cli/|runtime/)',
      },
      to: { path: '^apps/server/src/runtime/' },
    },
    {
      name: 'runtime-below-http',
      severity: 'error',
      comment: 'The runtime serves HTTP and the CLI alike: it imports no HTTP, route or CLI code.',
      from: { path: '^apps/server/src/runtime/' },
      to: { path: '^apps/server/src/(http|routes|cli)/' },
    },
    {
      name: 'sql-stays-in-db',
      severity: 'error',
      comment:
        'Only storage writes and runs SQL: the SQL runner (db/engine/portable-sql.ts: Steps, ' +
        'prepared statements, transactions, rendered for either backend), the schema modules, ' +
        'drizzle and the drivers are imported by src/db/ alone; runtime/ reads through ' +
        'repositories and needs none of them. Types alone run nothing and may be imported. Left ' +
        'out: use-cases own their transactions (they open one around repository steps, and write ' +
        "no SQL); the records file format names the schema's enum values, and the records loader " +
        'writes a whole file in one transaction of its own.',
      from: {
        path: '^apps/server/src/',
        pathNot: [
          '^apps/server/src/db/',
          '^apps/server/src/use-cases/',
          '^apps/server/src/records/(format|loader)\\.ts$',
        ],
      },
      to: {
        path: [
          '^apps/server/src/db/(engine/portable-sql\\.ts$|schema/)',
          'node_modules/(drizzle-orm|pg|better-sqlite3|better-sqlite3-napi)/',
        ],
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'http-outside-db-engine',
      severity: 'error',
      comment:
        "HTTP holds the database handle (client.ts's Db) and turns storage's errors into answers " +
        "(errors.ts); the rest of db/engine (SQL, caches, batching) is storage's own, which http/ " +
        'reaches through repositories and runtime/.',
      from: { path: '^apps/server/src/http/' },
      to: {
        path: '^apps/server/src/db/engine/',
        pathNot: '^apps/server/src/db/engine/(client|errors)\\.ts$',
      },
    },
    {
      name: 'http-opens-no-database',
      severity: 'error',
      comment:
        'HTTP is handed its database (main.ts opens it): it imports client.ts for its types only.',
      from: { path: '^apps/server/src/http/' },
      to: { path: '^apps/server/src/db/engine/client\\.ts$', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a circle of types is still a circle to a reader.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
  },
};
