/**
 * The landing of a mailed password link (`/console/password-reset?token=…`: the "set your password"
 * mail after verification, and password resets): the new password goes to POST /auth/password-reset,
 * then POST /auth/login signs in with it (the HttpOnly cookie) and the console opens.
 */
import { useState } from 'preact/hooks';
import { auth, ApiError, errorText } from '../api';

const MIN_LENGTH = 8;

export function SetPassword(props: { token: string; onSignedIn: () => void }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  const submit = async (ev: Event) => {
    ev.preventDefault();
    setError('');
    if (password.length < MIN_LENGTH) return setError(`The password needs at least ${MIN_LENGTH} characters.`);
    if (password !== again) return setError('The two passwords differ.');
    setBusy(true);
    try {
      try {
        await auth.passwordReset(props.token, password);
      } catch (e) {
        throw e instanceof ApiError && e.httpStatus === 400 ? new Error('This link is expired or was already used: ask for a new one with “Forgot password”.') : e;
      }
      await auth.login(username.trim(), password);
      props.onSignedIn();
    } catch (e) {
      setError(e instanceof ApiError && e.httpStatus === 400 ? 'The password is set, but that username does not match it: sign in with your email.' : errorText(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="auth-page" id="main">
      <form class="card auth-card" onSubmit={submit} aria-label="Set your password">
        <h1>Set your password</h1>
        <label>
          Username (your email)
          <input name="username" type="email" autocomplete="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
        </label>
        <label>
          New password
          <input name="password" type="password" autocomplete="new-password" minLength={MIN_LENGTH} required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </label>
        <label>
          Again
          <input name="password_again" type="password" autocomplete="new-password" minLength={MIN_LENGTH} required value={again} onInput={(e) => setAgain(e.currentTarget.value)} />
        </label>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy}>
          Set password and sign in
        </button>
      </form>
    </main>
  );
}
