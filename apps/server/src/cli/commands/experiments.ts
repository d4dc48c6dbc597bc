// What an experiment's owner asks of it from the command line: the experiment, each variant's
// weight beside its sessions and observed share, and who changed what, newest first. The same
// wire objects the API answers (--json prints them).

import { sessionCountsByVariant } from '../../db/repositories/experiment-results.js';
import { experimentHistoryList } from '../../domain/experiments.js';
import { experimentHistoryPage, readExperimentNow } from '../../use-cases/experiment-reads.js';
import { toWireChange, toWireExperiment, toWireResults } from '../../wire/experiments.js';
import { CliError } from '../cli-error.js';
import { idArgument, orgOption, stringOption, type Command } from '../command.js';
import { formatTable } from '../table.js';
import { everyRecord } from './directory.js';

const percent = (share: number) => `${(share * 100).toFixed(1)}%`;

export const experimentsShowCommand: Command = {
  words: ['experiments', 'show'],
  positionals: ['<id>'],
  summary:
    'Show an experiment: its variants with weight, sessions and observed share, and its change history.',
  options: [
    orgOption(),
    ['--json', 'print {experiment, results, history} as the API answers them'],
  ],
  details: [
    'The history lists every change, newest first, with who made it (an API key, the operator',
    'or the system for a planned end) and the fields it changed. Example:',
    '  agentline experiments show 3 --org "Acme Support"',
  ],
  async run(context, values, [raw]) {
    const id = idArgument(
      raw,
      'experiment',
      'for example: agentline experiments show 3 --org "Acme Support"',
    );
    const organization = await context.organization(stringOption(values, 'org'));
    const db = await context.db();
    const record = await readExperimentNow(db, organization.id, id);
    if (!record) {
      throw new CliError(
        `organization "${organization.name}" has no experiment ${id}`,
        'its experiments are listed by GET /api/v1/experiments/ (a deleted one keeps its history there: GET /api/v1/experiments/<id>/history)',
      );
    }
    const experiment = toWireExperiment(record);
    const results = toWireResults(record, await sessionCountsByVariant(db, id));
    const history = (
      await everyRecord(
        db,
        organization.id,
        experimentHistoryList(id),
        (_, organizationId, query) => experimentHistoryPage(db, organizationId, id, query),
      )
    ).map(toWireChange);
    if (values.json) {
      context.out(JSON.stringify({ experiment, results, history }, null, 2));
      return;
    }
    const { target } = experiment;
    context.out(`Experiment ${experiment.id} "${experiment.name}": ${experiment.status}`);
    context.out(`  target ${target.id} (${target.channel_name} ${target.target})`);
    context.out(
      `  started ${experiment.started_at ?? '-'}, stopped ${experiment.stopped_at ?? '-'}${experiment.ended_reason ? ` (${experiment.ended_reason})` : ''}`,
    );
    context.out(
      `  planned end: end_at ${experiment.end_at ?? '-'}, max_sessions ${experiment.max_sessions ?? '-'}`,
    );
    context.out('');
    const agentOf = new Map(experiment.variants.map((v) => [v.id, v.agent_name]));
    const variantRows = results.variants.map((v) => [
      String(v.variant_id),
      v.name + (v.is_control ? ' (control)' : ''),
      agentOf.get(v.variant_id) ?? '-',
      `${v.weight}%`,
      String(v.session_count),
      percent(v.share),
    ]);
    const header = ['VARIANT', 'NAME', 'AGENT', 'WEIGHT', 'SESSIONS', 'SHARE'];
    for (const line of formatTable([header, ...variantRows])) context.out(line);
    context.out(`  ${results.total_sessions} sessions in all`);
    context.out('');
    const changeRows = history.map((change) => [
      change.occurred_at,
      change.action,
      change.actor.type === 'api_key' ? `key ${change.actor.key_name}` : change.actor.type,
      Object.entries(change.changes)
        .map(([field, { from, to }]) =>
          field === 'variants'
            ? 'variants'
            : `${field}: ${JSON.stringify(from)} -> ${JSON.stringify(to)}`,
        )
        .join('; ') || '-',
    ]);
    for (const line of formatTable([['WHEN', 'ACTION', 'BY', 'CHANGED'], ...changeRows])) {
      context.out(line);
    }
  },
};
