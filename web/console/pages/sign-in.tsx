/** Sign in (POST /auth/login sets the HttpOnly cookie), sign up, password reset request. */
import { useState } from 'preact/hooks';
import { auth, errorText, ApiError } from '../api';
import { href } from '../router';

export function SignIn(props: { notice?: string; onSignedIn: () => void; onGate: (e: ApiError, email: string) => void }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [info, setInfo] = useState('');

  const submit = async (ev: Event) => {
    ev.preventDefault();
    setBusy(true);
    setError('');
    try {
      await auth.login(username.trim(), password);
      props.onSignedIn();
    } catch (e) {
      if (e instanceof ApiError && e.httpStatus === 403) props.onGate(e, username.trim());
      else if (e instanceof ApiError && e.httpStatus === 400) setError('Wrong username or password.');
      else setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  const forgot = async () => {
    if (!username.trim()) return setError('Type your username (email) first.');
    await auth.passwordForgot(username.trim()).catch(() => undefined);
    setInfo('If that account exists, a password link is on its way.');
  };

  return (
    <main class="auth-page" id="main">
      <form class="card auth-card" onSubmit={submit} aria-label="Sign in">
        <h1>Sign in</h1>
        {props.notice && <p class="notice">{props.notice}</p>}
        <label>
          Username
          <input name="username" autocomplete="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </label>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        {info && <p class="notice">{info}</p>}
        <button type="submit" class="primary" disabled={busy}>
          Sign in
        </button>
        <p class="links">
          <a href={href('signup')}>Create an account</a> ·{' '}
          <button type="button" class="link" onClick={forgot}>
            Forgot password
          </button>
        </p>
      </form>
    </main>
  );
}

export function SignUp() {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [done, setDone] = useState(false);
  const [error, setError] = useState('');
  const submit = async (ev: Event) => {
    ev.preventDefault();
    try {
      await auth.signup(email.trim(), name.trim());
      setDone(true);
    } catch (e) {
      setError(e instanceof ApiError && e.httpStatus === 400 ? 'Check the email address.' : errorText(e));
    }
  };
  return (
    <main class="auth-page" id="main">
      <form class="card auth-card" onSubmit={submit} aria-label="Sign up">
        <h1>Create an account</h1>
        {done ? (
          <p class="notice" role="status">
            Check your mailbox: open the verification link, then the link that sets your password, and sign in.
          </p>
        ) : (
          <>
            <label>
              Email
              <input name="email" type="email" autocomplete="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
            </label>
            <label>
              Company name
              <input name="name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
            </label>
            <p class="hint">By creating an account you accept the terms of service.</p>
            {error && (
              <p class="error" role="alert">
                {error}
              </p>
            )}
            <button type="submit" class="primary">
              Sign up
            </button>
          </>
        )}
        <p class="links">
          <a href={href('')}>Back to sign in</a>
        </p>
      </form>
    </main>
  );
}

/** The landing of a verification link: `#/verify?token=…` posts the token to /auth/email-verify. */
export function Verify(props: { token: string }) {
  const [state, setState] = useState<'idle' | 'ok' | 'bad'>('idle');
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const verify = async () => {
    try {
      await auth.verify(props.token);
      setState('ok');
    } catch {
      setState('bad');
    }
  };
  return (
    <main class="auth-page" id="main">
      <section class="card auth-card" aria-label="Verify your email">
        <h1>Verify your email</h1>
        {state === 'idle' && (
          <button class="primary" onClick={verify}>
            Verify my email address
          </button>
        )}
        {state === 'ok' && (
          <p class="notice" role="status">
            Your email is verified. A mail with a link to set your password is on its way; then <a href={href('')}>sign in</a>.
          </p>
        )}
        {state === 'bad' && (
          <>
            <p class="error" role="alert">
              This link is expired or was already used.
            </p>
            {sent ? (
              <p class="notice">If the account exists, a new link is on its way.</p>
            ) : (
              <form onSubmit={(e) => (e.preventDefault(), void auth.resendVerification(email).finally(() => setSent(true)))}>
                <label>
                  Email
                  <input type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
                </label>
                <button type="submit">Send a new link</button>
              </form>
            )}
          </>
        )}
      </section>
    </main>
  );
}
