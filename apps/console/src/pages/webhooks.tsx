// Webhook endpoints and their delivery log: every attempt with its answer, a test message, and a
// replay from a time (after an outage of the receiver). Writing needs WEBHOOKS_WRITE.
import { useState } from 'preact/hooks';
import type { WebhookEndpointListItem } from '@agentline/sdk';
import { ErrorNotice } from '../components/api-error.js';
import { DataTable } from '../components/data-table.js';
import { formatTime } from '../components/format.js';
import { PageTitle } from '../components/page-title.js';
import { Pager } from '../components/pager.js';
import { TextField } from '../components/text-field.js';
import { useApi } from '../components/use-api.js';
import { useSession } from '../session.js';

export function WebhooksPage() {
  const { client } = useSession();
  const endpoints = useApi(() => client.webhooks.list({ limit: 100 }), []);
  const [selected, setSelected] = useState<number | null>(null);
  return (
    <section>
      <PageTitle title="Webhooks" />
      <ErrorNotice error={endpoints.error} />
      {endpoints.data?.items.length === 0 && <p>No webhook endpoints yet.</p>}
      <ul class="endpoints">
        {endpoints.data?.items.map((endpoint) => (
          <li key={endpoint.id}>
            <button
              type="button"
              aria-pressed={selected === endpoint.id}
              onClick={() => setSelected(endpoint.id)}
            >
              {endpoint.url}
            </button>{' '}
            <span class={endpoint.enabled ? 'status status-ok' : 'status status-bad'}>
              {endpoint.enabled
                ? 'enabled'
                : `disabled${endpoint.disabled_reason ? `: ${endpoint.disabled_reason}` : ''}`}
            </span>
          </li>
        ))}
      </ul>
      {selected !== null && (
        <Endpoint
          key={selected}
          endpoint={endpoints.data!.items.find((endpoint) => endpoint.id === selected)!}
        />
      )}
    </section>
  );
}

function Endpoint({ endpoint }: { endpoint: WebhookEndpointListItem }) {
  const { client, can } = useSession();
  const [page, setPage] = useState(0);
  const [since, setSince] = useState('');
  const [notice, setNotice] = useState<string>();
  const [error, setError] = useState<unknown>();
  const deliveries = useApi(
    () => client.webhooks.deliveries(endpoint.id, { page, limit: 25 }),
    [endpoint.id, page],
  );
  const act = (call: Promise<string>) => {
    setError(undefined);
    call.then((said) => {
      setNotice(said);
      deliveries.reload();
    }, setError);
  };
  return (
    <section aria-labelledby="endpoint-heading">
      <h2 id="endpoint-heading">Deliveries to {endpoint.url}</h2>
      {can('WEBHOOKS_WRITE') && (
        <div class="actions">
          <button
            type="button"
            onClick={() =>
              act(
                client.webhooks
                  .test(endpoint.id)
                  .then((sent) => `Test message ${sent.webhook_id} queued.`),
              )
            }
          >
            Send a test message
          </button>
          <form
            class="inline"
            onSubmit={(event) => {
              event.preventDefault();
              act(
                client.webhooks
                  .replay(endpoint.id, { start_datetime: new Date(since).toISOString() })
                  .then(
                    () =>
                      `Delivery starts again from ${formatTime(new Date(since).toISOString())}.`,
                  ),
              );
            }}
          >
            <TextField
              id="replay-since"
              label="Replay from"
              type="datetime-local"
              required
              value={since}
              onValue={setSince}
            />
            <button type="submit">Replay</button>
          </form>
        </div>
      )}
      <button type="button" onClick={deliveries.reload}>
        Refresh
      </button>
      {notice && <p role="status">{notice}</p>}
      <ErrorNotice error={error ?? deliveries.error} />
      {deliveries.data && (
        <>
          <DataTable
            caption="Delivery attempts, newest first"
            columns={['Attempted', 'Message', 'Attempt', 'Status', 'Answer', 'Next attempt']}
          >
            {deliveries.data.items.map((delivery) => (
              <tr key={delivery.id}>
                <td>{formatTime(delivery.attempted_at)}</td>
                <td class="mono">
                  {delivery.type} {delivery.webhook_id}
                </td>
                <td>{delivery.attempt}</td>
                <td>{delivery.status}</td>
                <td>
                  {delivery.response_status ?? ''} {delivery.error ?? ''} ({delivery.duration_ms}{' '}
                  ms)
                </td>
                <td>{formatTime(delivery.next_attempt_at)}</td>
              </tr>
            ))}
          </DataTable>
          {deliveries.data.items.length === 0 && <p>No delivery attempts yet.</p>}
          <Pager page={page} totalPages={deliveries.data.total_pages} onPage={setPage} />
        </>
      )}
    </section>
  );
}
