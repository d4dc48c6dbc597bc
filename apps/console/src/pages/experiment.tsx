// One experiment: its split (configured weight beside observed share, sessions over time), its
// change history, the actions the key may take, and which agent a user would get now.
import { useEffect, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import type { Experiment } from '@agentline/sdk';
import { ErrorNotice } from '../components/api-error.js';
import { DataTable } from '../components/data-table.js';
import { formatPercent, formatTime, TIME_ZONE } from '../components/format.js';
import { PageTitle } from '../components/page-title.js';
import { colourOf, seriesOf, TimelineChart } from '../components/timeline-chart.js';
import { useApi } from '../components/use-api.js';
import { ExperimentActions } from './experiment-actions.js';
import { AssignmentPreview, ExperimentHistory } from './experiment-history.js';
import { useSession } from '../session.js';

/** How often a running experiment's numbers are read again. */
const REFRESH_MS = 5_000;

export function ExperimentPage({ id }: { id: number }) {
  const { client } = useSession();
  const [bucket, setBucket] = useState<'hour' | 'day'>('hour');
  const [tick, setTick] = useState(0);
  const experiment = useApi(() => client.experiments.get(id), [id, tick]);
  const running = experiment.data?.status === 'running';
  const results = useApi(() => client.experiments.results(id), [id, tick]);
  const timeline = useApi(
    () => client.experiments.timeline(id, { interval: bucket, time_zone: TIME_ZONE }),
    [id, bucket, tick],
  );
  useEffect(() => {
    if (!running) return;
    const timer = window.setInterval(() => setTick((value) => value + 1), REFRESH_MS);
    return () => window.clearInterval(timer);
  }, [running]);

  const changed = (_updated: Experiment) => setTick((value) => value + 1);
  if (!experiment.data) {
    return (
      <section>
        <Link href="/experiments">All experiments</Link>
        <ErrorNotice error={experiment.error} />
        {experiment.loading && <p class="loading">Loading…</p>}
      </section>
    );
  }
  const current = experiment.data;
  const chartTotals = timeline.data ? seriesOf(timeline.data, current.variants) : null;
  return (
    <section>
      <Link href="/experiments">All experiments</Link>
      <PageTitle title={current.name}>
        {current.name} <span class={`status status-${current.status}`}>{current.status}</span>
      </PageTitle>
      {current.description && <p>{current.description}</p>}
      <dl class="facts">
        <dt>Target</dt>
        <dd>
          {current.target.channel_name} · {current.target.target}
        </dd>
        <dt>Started</dt>
        <dd>{formatTime(current.started_at)}</dd>
        <dt>Stopped</dt>
        <dd>{formatTime(current.stopped_at)}</dd>
        <dt>Planned end</dt>
        <dd>
          {current.end_at ? formatTime(current.end_at) : 'none'}
          {current.max_sessions !== null && ` · after ${current.max_sessions} sessions`}
          {current.ended_reason && ` · ended: ${current.ended_reason}`}
        </dd>
      </dl>
      <ExperimentActions experiment={current} onChanged={changed} />

      <h2>Split</h2>
      <ErrorNotice error={results.error} />
      <DataTable
        caption="Variants: weight, observed share and sessions"
        columns={[
          'Variant',
          'Agent',
          'Weight',
          'Observed share',
          'Sessions',
          'Sessions in the chart',
        ]}
        testId="split"
      >
        {current.variants.map((variant, index) => {
          const result = results.data?.variants.find((v) => v.variant_id === variant.id);
          const inChart = chartTotals?.[index]?.reduce((sum, count) => sum + count, 0);
          return (
            <tr key={variant.id}>
              <th scope="row">
                <span class="swatch" style={{ background: colourOf(index) }} aria-hidden />
                {variant.name}
                {variant.is_control && ' (control)'}
              </th>
              <td>{variant.agent_name}</td>
              <td>{variant.weight}%</td>
              <td>{result ? formatPercent(result.share) : '—'}</td>
              <td data-testid={`results-${variant.id}`}>{result?.session_count ?? '—'}</td>
              <td data-testid={`chart-total-${variant.id}`}>{inChart ?? '—'}</td>
            </tr>
          );
        })}
      </DataTable>

      <h2>Sessions over time</h2>
      <div class="tabs" role="group" aria-label="Bucket length">
        {(['hour', 'day'] as const).map((value) => (
          <button
            key={value}
            type="button"
            aria-pressed={bucket === value}
            onClick={() => setBucket(value)}
          >
            by {value}
          </button>
        ))}
        <span class="hint">in {TIME_ZONE}</span>
      </div>
      <ErrorNotice error={timeline.error} />
      {timeline.data && <TimelineChart timeline={timeline.data} variants={current.variants} />}

      <AssignmentPreview targetId={current.target_id} />
      <ExperimentHistory experimentId={id} version={current.updated_at} />
    </section>
  );
}
