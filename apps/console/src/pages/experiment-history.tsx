import { useState } from 'preact/hooks';
import type { Assignment } from '@agentline/sdk';
import { ErrorNotice } from '../components/api-error.js';
import { formatTime } from '../components/format.js';
import { TextField } from '../components/text-field.js';
import { useApi } from '../components/use-api.js';
import { useSession } from '../session.js';

interface WrittenVariant {
  name: string;
  weight: number;
  is_control?: boolean;
}

function isVariantSet(value: unknown): value is WrittenVariant[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'object' && item !== null);
}

/** A field's value as people read it: a variant set as its names and weights. */
function shown(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (isVariantSet(value)) {
    return value
      .map(
        (variant) => `${variant.name} ${variant.weight}%${variant.is_control ? ' (control)' : ''}`,
      )
      .join(', ');
  }
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Every change, newest first, with who made it and each field's before and after. */
export function ExperimentHistory({
  experimentId,
  version,
}: {
  experimentId: number;
  /** Changes when the experiment does: the history is read again. */
  version: string;
}) {
  const { client } = useSession();
  const history = useApi(
    () => client.experiments.history(experimentId, { limit: 100 }),
    [experimentId, version],
  );
  return (
    <>
      <h2>History</h2>
      <ErrorNotice error={history.error} />
      <ol class="history" data-testid="history">
        {history.data?.items.map((change) => (
          <li key={change.id}>
            <strong>{change.action}</strong> {formatTime(change.occurred_at)} by{' '}
            {change.actor.type === 'api_key'
              ? `key “${change.actor.key_name}” (${change.actor.key_id})`
              : change.actor.type}
            {Object.keys(change.changes).length > 0 && (
              <dl class="changes">
                {Object.entries(change.changes).map(([field, { from, to }]) => (
                  <div key={field}>
                    <dt>{field}</dt>
                    <dd>
                      {shown(from)} → {shown(to)}
                    </dd>
                  </div>
                ))}
              </dl>
            )}
          </li>
        ))}
      </ol>
    </>
  );
}

/** Which agent (and variant) routing would give this user's next session on the target now. */
export function AssignmentPreview({ targetId }: { targetId: number }) {
  const { client } = useSession();
  const [userId, setUserId] = useState('');
  const [answer, setAnswer] = useState<Assignment>();
  const [error, setError] = useState<unknown>();
  const submit = (event: Event) => {
    event.preventDefault();
    setError(undefined);
    client.channelTargets.assignment(targetId, userId).then(setAnswer, (failure: unknown) => {
      setAnswer(undefined);
      setError(failure);
    });
  };
  return (
    <>
      <h2>Assignment preview</h2>
      <form class="inline" onSubmit={submit}>
        <TextField id="preview-user" label="User id" required value={userId} onValue={setUserId} />
        <button type="submit">Preview</button>
      </form>
      <ErrorNotice error={error} />
      {answer && (
        <p role="status">
          Agent {answer.agent_id}
          {answer.variant_id === null
            ? ' (no experiment is running on this target)'
            : `, variant ${answer.variant_id} of experiment ${answer.experiment_id}`}
        </p>
      )}
    </>
  );
}
