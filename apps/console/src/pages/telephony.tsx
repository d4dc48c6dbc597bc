// Every incoming number of a telephony channel with its A2P messaging path: approved or not, and
// the four checks behind it, each saying what it found and what to fix.
import { useEffect, useState } from 'preact/hooks';
import { ErrorNotice } from '../components/api-error.js';
import { PageTitle } from '../components/page-title.js';
import { Pager } from '../components/pager.js';
import { useApi } from '../components/use-api.js';
import { useSession } from '../session.js';

export function TelephonyPage() {
  const { client } = useSession();
  // Channels are known through their targets; the first hundred cover a console's choices.
  const targets = useApi(() => client.channelTargets.list({ limit: 100 }), []);
  const channels = [
    ...new Map((targets.data?.items ?? []).map((t) => [t.channel_id, t.channel_name])),
  ];
  const [channelId, setChannelId] = useState<number | null>(null);
  const [page, setPage] = useState(0);
  useEffect(() => {
    if (channelId === null && channels.length > 0) setChannelId(channels[0]![0]!);
  }, [channels.length]);
  const numbers = useApi(
    () =>
      channelId === null
        ? Promise.resolve(null)
        : client.telephony.a2pStatus(channelId, { page, limit: 25 }),
    [channelId, page],
  );
  return (
    <section>
      <PageTitle title="Telephony: A2P messaging" />
      <ErrorNotice error={targets.error} />
      <label for="channel">Channel</label>
      <select
        id="channel"
        value={channelId ?? ''}
        onChange={(event) => {
          setChannelId(Number(event.currentTarget.value));
          setPage(0);
        }}
      >
        {channels.map(([id, name]) => (
          <option key={id} value={id}>
            {name}
          </option>
        ))}
      </select>
      <ErrorNotice error={numbers.error} />
      {numbers.data && (
        <>
          <ul class="numbers">
            {numbers.data.items.map((number) => (
              <li key={number.phone} data-testid={`number-${number.phone}`}>
                <h2>
                  {number.phone}{' '}
                  <span class={number.a2p_approved ? 'status status-ok' : 'status status-bad'}>
                    {number.a2p_approved ? 'approved' : 'not approved'}
                  </span>
                </h2>
                <ul class="checks">
                  {number.checks.map((check) => (
                    <li key={check.name}>
                      <span
                        class={
                          check.passed === true
                            ? 'mark ok'
                            : check.passed === false
                              ? 'mark bad'
                              : 'mark unknown'
                        }
                      >
                        {check.passed === true
                          ? 'passed'
                          : check.passed === false
                            ? 'failed'
                            : 'not checked'}
                      </span>{' '}
                      <strong>{check.name}</strong>: {check.detail}
                    </li>
                  ))}
                </ul>
              </li>
            ))}
          </ul>
          {numbers.data.items.length === 0 && <p>This channel has no incoming numbers.</p>}
          <Pager page={page} totalPages={numbers.data.total_pages} onPage={setPage} />
        </>
      )}
    </section>
  );
}
