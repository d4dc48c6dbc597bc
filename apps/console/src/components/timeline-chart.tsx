// Sessions per variant over time, drawn by uPlot on a canvas (times on the axis in the browser's
// time zone, as the buckets are). A canvas says nothing to a screen reader, so the figure carries
// a label and the same numbers follow it as a table.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { ExperimentTimeline, Variant } from '@agentline/sdk';
import { DataTable } from './data-table.js';
import { formatTime } from './format.js';

const BUCKET_SECONDS = { hour: 3600, day: 86_400 };

/** Colours that stay apart for the common colour-vision deficiencies (Okabe and Ito). */
const COLOURS = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442'];

export function colourOf(index: number): string {
  return COLOURS[index % COLOURS.length]!;
}

/** Per variant, in the timeline's variant order, the sessions of every bucket. */
export function seriesOf(timeline: ExperimentTimeline, variants: Variant[]): number[][] {
  return variants.map((variant) =>
    timeline.buckets.map(
      (bucket) =>
        bucket.variants.find((entry) => entry.variant_id === variant.id)?.session_count ?? 0,
    ),
  );
}

export function TimelineChart({
  timeline,
  variants,
}: {
  timeline: ExperimentTimeline;
  variants: Variant[];
}) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = container.current;
    if (!element || timeline.buckets.length === 0) return;
    // Each count holds until the next bucket starts (a stepped line); one more point, a bucket
    // after the last, draws the last bucket's step too, so a single bucket is a line, not a dot.
    const times = timeline.buckets.map((bucket) => Date.parse(bucket.start) / 1000);
    times.push(times.at(-1)! + BUCKET_SECONDS[timeline.interval]);
    const series = seriesOf(timeline, variants).map((counts) => [...counts, counts.at(-1)!]);
    const plot = new uPlot(
      {
        width: element.clientWidth,
        height: 260,
        scales: { y: { range: (_u, _min, max) => [0, Math.max(max, 1)] } },
        series: [
          {},
          ...variants.map((variant, index) => ({
            label: variant.name,
            stroke: colourOf(index),
            width: 2,
            paths: uPlot.paths.stepped!({ align: 1 }),
          })),
        ],
        axes: [{}, { label: 'sessions' }],
      },
      [times, ...series],
      element,
    );
    const resize = new ResizeObserver(() =>
      plot.setSize({ width: element.clientWidth, height: 260 }),
    );
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [timeline, variants]);

  const series = seriesOf(timeline, variants);
  return (
    <figure>
      <div
        ref={container}
        class="chart"
        role="img"
        aria-label={`Sessions per variant per ${timeline.interval} in ${timeline.time_zone}; the numbers follow as a table`}
      />
      {timeline.buckets.length === 0 && <p>No sessions yet: the experiment has not run.</p>}
      <details>
        <summary>Sessions per {timeline.interval} as a table</summary>
        <DataTable
          caption={`Sessions per variant per ${timeline.interval}`}
          columns={[
            `${timeline.interval === 'hour' ? 'Hour' : 'Day'} starting`,
            ...variants.map((variant) => variant.name),
          ]}
        >
          {timeline.buckets.map((bucket, row) => (
            <tr key={bucket.start}>
              <td>{formatTime(bucket.start)}</td>
              {series.map((counts, column) => (
                <td key={variants[column]!.id}>{counts[row]}</td>
              ))}
            </tr>
          ))}
        </DataTable>
      </details>
    </figure>
  );
}
