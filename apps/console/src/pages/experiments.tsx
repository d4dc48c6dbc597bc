import { useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { ErrorNotice } from '../components/api-error.js';
import { DataTable } from '../components/data-table.js';
import { formatTime } from '../components/format.js';
import { PageTitle } from '../components/page-title.js';
import { Pager } from '../components/pager.js';
import { useApi } from '../components/use-api.js';
import { useSession } from '../session.js';

const STATUSES = ['all', 'draft', 'running', 'stopped'] as const;

export function ExperimentsPage() {
  const { client } = useSession();
  const [status, setStatus] = useState<(typeof STATUSES)[number]>('all');
  const [page, setPage] = useState(0);
  const list = useApi(
    () =>
      client.experiments.list({
        page,
        limit: 25,
        ...(status === 'all' ? {} : { search_fields: ['status'], search_field_values: [status] }),
      }),
    [status, page],
  );
  return (
    <section>
      <PageTitle title="Experiments" />
      <div class="tabs" role="group" aria-label="Status">
        {STATUSES.map((value) => (
          <button
            key={value}
            type="button"
            aria-pressed={status === value}
            onClick={() => {
              setStatus(value);
              setPage(0);
            }}
          >
            {value}
          </button>
        ))}
      </div>
      <ErrorNotice error={list.error} />
      {list.data && (
        <>
          <DataTable
            caption={`Experiments, ${status}`}
            columns={['Name', 'Status', 'Target', 'Variants', 'Started']}
          >
            {list.data.items.map((experiment) => (
              <tr key={experiment.id}>
                <td>
                  <Link href={`/experiments/${experiment.id}`}>{experiment.name}</Link>
                </td>
                <td>
                  <span class={`status status-${experiment.status}`}>{experiment.status}</span>
                </td>
                <td>
                  {experiment.target?.channel_name} · {experiment.target?.target}
                </td>
                <td>{experiment.variants?.length}</td>
                <td>{formatTime(experiment.started_at)}</td>
              </tr>
            ))}
          </DataTable>
          {list.data.items.length === 0 && <p>No experiments here.</p>}
          <Pager page={page} totalPages={list.data.total_pages} onPage={setPage} />
        </>
      )}
    </section>
  );
}
