import type { Command } from '../command.js';

export const migrateCommand: Command = {
  words: ['migrate'],
  summary: 'Create the database, or bring its schema up to date (safe to run again).',
  details: [
    'Every other command migrates too before it starts; run this one on its own when deploying.',
  ],
  async run(context) {
    await context.db();
    context.out(`database ${context.databaseName} is up to date`);
  },
};
