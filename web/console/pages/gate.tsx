/**
 * The account status gate: a frozen, expired or deleted account sees this banner and its recovery
 * action, and nothing else of the console.
 */
import { useState } from 'preact/hooks';
import { auth, errorText } from '../api';
import type { Session } from '../session';
import { shortTime } from '../components/common';

type Gated = Extract<Session, { kind: 'gated' }>;

const TEXT: Record<string, { title: string; body: string }> = {
  ACCOUNT_FROZEN: {
    title: 'This account is frozen',
    body: 'The account was closed and is scheduled for deletion. Until then you can cancel the deletion and use it again.',
  },
  ACCOUNT_EXPIRED: {
    title: 'This account has expired',
    body: 'The email address was never verified. Ask for a new verification link; verifying it makes the account active again.',
  },
  ACCOUNT_DELETED: { title: 'This account was deleted', body: 'Its data is gone. Sign up again to start over.' },
};

export function GateBanner(props: { gate: Gated; onRecovered: () => void; onSignOut: () => void }) {
  const g = props.gate;
  const t = TEXT[g.reason] ?? { title: 'This account is not usable', body: g.reason };
  const [email, setEmail] = useState(g.email);
  const [msg, setMsg] = useState('');
  const [error, setError] = useState('');

  const cancelDeletion = async () => {
    try {
      await auth.cancelUnregister();
      props.onRecovered();
    } catch (e) {
      setError(errorText(e));
    }
  };
  const resend = async (ev: Event) => {
    ev.preventDefault();
    await auth.resendVerification(email.trim()).catch(() => undefined);
    setMsg('If the account exists, a new verification link is on its way.');
  };

  return (
    <main class="auth-page" id="main">
      <section class="gate card" role="alert" aria-labelledby="gate-title" data-reason={g.reason}>
        <h1 id="gate-title">{t.title}</h1>
        <p>{t.body}</p>
        {g.deletionAt && (
          <p>
            Deletion takes effect on <strong>{shortTime(g.deletionAt) || g.deletionAt} UTC</strong>.
          </p>
        )}
        {g.reason === 'ACCOUNT_FROZEN' && (
          <button class="primary" onClick={cancelDeletion}>
            Cancel the deletion and reactivate
          </button>
        )}
        {g.reason === 'ACCOUNT_EXPIRED' && (
          <form onSubmit={resend}>
            <label>
              Email
              <input type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
            </label>
            <button type="submit" class="primary">
              Send a new verification link
            </button>
          </form>
        )}
        {msg && (
          <p class="notice" role="status">
            {msg}
          </p>
        )}
        {error && <p class="error">{error}</p>}
        {g.recovery && (
          <p class="hint">
            Recovery endpoint: <code>{g.recovery}</code>
          </p>
        )}
        <button class="link" onClick={props.onSignOut}>
          Sign out
        </button>
      </section>
    </main>
  );
}
