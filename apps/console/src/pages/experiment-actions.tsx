// Start, stop and the planned end: shown only to a key whose role has CHANNELS_WRITE, each asked
// twice (the second time saying what it will do), and any refusal shown as the API's sentence.
import { useState } from 'preact/hooks';
import type { Experiment } from '@agentline/sdk';
import { ErrorNotice } from '../components/api-error.js';
import { TextField } from '../components/text-field.js';
import { useSession } from '../session.js';

type Pending = 'start' | 'stop' | 'end' | null;

const CONFIRMATIONS = {
  start: 'Start routing this target’s live traffic between the variants now?',
  stop: 'Stop the experiment? Its target goes back to its own agent; a stopped experiment cannot start again.',
  end: 'Set this planned end? The experiment stops by itself when it comes.',
};

/** A datetime-local input's value (local wall time) as an ISO instant. */
function localToIso(value: string): string {
  return new Date(value).toISOString();
}

export function ExperimentActions({
  experiment,
  onChanged,
}: {
  experiment: Experiment;
  onChanged: (experiment: Experiment) => void;
}) {
  const { client, can } = useSession();
  const [pending, setPending] = useState<Pending>(null);
  const [endAt, setEndAt] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  if (!can('CHANNELS_WRITE')) return null;

  const run = (action: Exclude<Pending, null>) => {
    setBusy(true);
    setError(undefined);
    const call =
      action === 'start'
        ? client.experiments.start(experiment.id).then((answer) => answer.experiment)
        : action === 'stop'
          ? client.experiments.stop(experiment.id)
          : client.experiments.update(experiment.id, {
              name: experiment.name,
              description: experiment.description,
              end_at: localToIso(endAt),
              max_sessions: experiment.max_sessions,
              variants: experiment.variants.map(({ name, weight, is_control, agent_id }) => ({
                name,
                weight,
                is_control,
                agent_id,
              })),
            });
    call
      .then((updated) => {
        setPending(null);
        onChanged(updated);
      }, setError)
      .finally(() => setBusy(false));
  };

  return (
    <div class="actions">
      {pending === null ? (
        <>
          {experiment.status === 'draft' && (
            <button type="button" onClick={() => setPending('start')}>
              Start
            </button>
          )}
          {experiment.status === 'running' && (
            <button type="button" class="danger" onClick={() => setPending('stop')}>
              Stop
            </button>
          )}
          {experiment.status === 'draft' && (
            <form
              class="inline"
              onSubmit={(event) => {
                event.preventDefault();
                setPending('end');
              }}
            >
              <TextField
                id="end-at"
                label="Planned end"
                type="datetime-local"
                required
                value={endAt}
                onValue={setEndAt}
              />
              <button type="submit">Set planned end</button>
            </form>
          )}
        </>
      ) : (
        <div class="confirm" role="group" aria-label="Confirm">
          <p>{CONFIRMATIONS[pending]}</p>
          <button type="button" disabled={busy} onClick={() => run(pending)} autoFocus>
            Yes, {pending === 'end' ? 'set the planned end' : pending}
          </button>
          <button type="button" disabled={busy} onClick={() => setPending(null)}>
            Cancel
          </button>
        </div>
      )}
      <ErrorNotice error={error} />
    </div>
  );
}
