import { useState } from 'preact/hooks';
import { ErrorNotice } from '../components/api-error.js';
import { TextField } from '../components/text-field.js';
import { signIn, type Session } from '../session.js';

export function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    signIn(key.trim())
      .then(onSignedIn, setError)
      .finally(() => setBusy(false));
  };
  return (
    <main class="sign-in">
      <h1>Agentline console</h1>
      <form onSubmit={submit}>
        <TextField
          id="api-key"
          label="API key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          placeholder="agl_..."
          required
          value={key}
          onValue={setKey}
        />
        <p class="hint">
          Kept for this tab only and sent to this server's API; forgotten when you sign out or close
          the tab.
        </p>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <ErrorNotice error={error} />
    </main>
  );
}
