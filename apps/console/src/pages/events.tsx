// The events list with its search pairs, time window and pages, and a live tail: the stream's
// events as they are committed, newest on top. The SDK's stream reconnects by itself after a
// dropped connection and resumes right after the last event it handed out, so nothing is missed
// or shown twice across a server restart.
import { useEffect, useState } from 'preact/hooks';
import type { Event as ApiEvent } from '@agentline/sdk';
import { ErrorNotice } from '../components/api-error.js';
import { DataTable } from '../components/data-table.js';
import { formatTime } from '../components/format.js';
import { PageTitle } from '../components/page-title.js';
import { Pager } from '../components/pager.js';
import { TextField } from '../components/text-field.js';
import { useApi } from '../components/use-api.js';
import { useSession } from '../session.js';

const FIELDS = [
  'type',
  'category',
  'source',
  'session_id',
  'conversation_id',
  'source_id',
  'user_id',
  'description',
  'attributes',
] as const;

/** Events the live tail keeps on screen, newest first. */
const TAIL_LENGTH = 200;

interface Filters {
  pairs: Array<{ field: (typeof FIELDS)[number]; value: string }>;
  start: string;
  end: string;
}

function query(filters: Filters) {
  const pairs = filters.pairs.filter((pair) => pair.value !== '');
  return {
    ...(pairs.length > 0 && {
      search_fields: pairs.map((pair) => pair.field),
      search_field_values: pairs.map((pair) => pair.value),
    }),
    ...(filters.start && { start_datetime: new Date(filters.start).toISOString() }),
    ...(filters.end && { end_datetime: new Date(filters.end).toISOString() }),
  };
}

export function EventsPage() {
  const { client } = useSession();
  const [draft, setDraft] = useState<Filters>({
    pairs: [{ field: 'type', value: '' }],
    start: '',
    end: '',
  });
  const [filters, setFilters] = useState<Filters>(draft);
  const [page, setPage] = useState(0);
  const [live, setLive] = useState(false);
  const list = useApi(
    () => client.events.list({ ...query(filters), page, limit: 25 }),
    [filters, page],
  );

  const setPair = (index: number, change: Partial<Filters['pairs'][number]>) =>
    setDraft({
      ...draft,
      pairs: draft.pairs.map((pair, at) => (at === index ? { ...pair, ...change } : pair)),
    });

  return (
    <section>
      <PageTitle title="Events" />
      <form
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          setFilters(draft);
          setPage(0);
        }}
      >
        {draft.pairs.map((pair, index) => (
          <fieldset key={index}>
            <legend class="visually-hidden">Search {index + 1}</legend>
            <label for={`field-${index}`}>Field</label>
            <select
              id={`field-${index}`}
              value={pair.field}
              onChange={(event) =>
                setPair(index, {
                  field: event.currentTarget.value as Filters['pairs'][number]['field'],
                })
              }
            >
              {FIELDS.map((field) => (
                <option key={field}>{field}</option>
              ))}
            </select>
            <TextField
              id={`value-${index}`}
              label="Value"
              value={pair.value}
              onValue={(value) => setPair(index, { value })}
            />
          </fieldset>
        ))}
        <button
          type="button"
          onClick={() =>
            setDraft({ ...draft, pairs: [...draft.pairs, { field: 'type', value: '' }] })
          }
        >
          Add a search
        </button>
        <TextField
          id="from"
          label="From"
          type="datetime-local"
          value={draft.start}
          onValue={(start) => setDraft({ ...draft, start })}
        />
        <TextField
          id="to"
          label="Until"
          type="datetime-local"
          value={draft.end}
          onValue={(end) => setDraft({ ...draft, end })}
        />
        <button type="submit">Search</button>
        <label class="toggle">
          <input
            type="checkbox"
            checked={live}
            onChange={(event) => setLive(event.currentTarget.checked)}
          />
          Live tail
        </label>
      </form>
      {live && <LiveTail filters={filters} />}
      <h2>List</h2>
      <ErrorNotice error={list.error} />
      {list.data && (
        <>
          <p>{list.data.total_count} events</p>
          <EventTable events={list.data.items} label="Events, a page of the list" />
          <Pager page={page} totalPages={list.data.total_pages} onPage={setPage} />
        </>
      )}
    </section>
  );
}

function LiveTail({ filters }: { filters: Filters }) {
  const { client } = useSession();
  const [events, setEvents] = useState<ApiEvent[]>([]);
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    const stop = new AbortController();
    setEvents([]);
    setError(undefined);
    const { start_datetime: _start, end_datetime: _end, ...search } = query(filters);
    void (async () => {
      try {
        for await (const event of client.events.stream(search, { signal: stop.signal })) {
          setEvents((shown) => [event, ...shown].slice(0, TAIL_LENGTH));
        }
      } catch (failure) {
        setError(failure);
      }
    })();
    return () => stop.abort();
  }, [filters]);
  return (
    <section aria-labelledby="tail-heading">
      <h2 id="tail-heading">Live tail</h2>
      <p class="hint">New events as they happen, newest first (the last {TAIL_LENGTH}).</p>
      <ErrorNotice error={error} />
      <div aria-live="polite">
        <EventTable events={events} label="Events as they happen" testId="live-tail" />
      </div>
    </section>
  );
}

function EventTable({
  events,
  label,
  testId,
}: {
  events: ApiEvent[];
  label: string;
  testId?: string;
}) {
  return (
    <DataTable
      caption={label}
      columns={['Time', 'Type', 'Category', 'Session', 'User', 'Description']}
      testId={testId}
    >
      {events.map((event, index) => (
        <tr key={`${event.timestamp}-${index}`}>
          <td>{formatTime(event.timestamp)}</td>
          <td>{event.type}</td>
          <td>{event.category}</td>
          <td class="mono">{event.session_id}</td>
          <td>{event.user_id}</td>
          <td>{event.description}</td>
        </tr>
      ))}
    </DataTable>
  );
}
