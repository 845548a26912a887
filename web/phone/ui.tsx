/**
 * The phone's screens: sign-in (agent or extension), then the dialler with the call controls.
 * Every control is a labelled native element (keyboard reachable, in tab order); the registration
 * and call state are announced through aria-live regions. `data-state` / `data-phase` attributes
 * carry the machine states for embedders and tests.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Account } from './account';
import type { Phone } from './phone';
import type { CallState } from './state';
import type { RegState } from './state';

const KEYS = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '*', '0', '#'];

const PHASE_TEXT: Record<CallState['phase'], string> = {
  idle: 'No call',
  dialing: 'Calling…',
  incoming: 'Incoming call',
  ringing: 'Ringing…',
  connected: 'In call',
  held: 'On hold',
  ended: 'Call ended',
};

function usePhone(phone: Phone) {
  const [reg, setReg] = useState<{ state: RegState; cause: string }>({ state: phone.reg, cause: phone.regCause });
  const [call, setCall] = useState<CallState>(phone.call);
  useEffect(() => {
    const offs = [phone.on('registration', setReg), phone.on('call', setCall)];
    return () => offs.forEach((f) => f());
  }, [phone]);
  return { reg, call };
}

function SignIn(props: { account: Account; needWsUrl: boolean; onError: (m: string) => void }) {
  const [mode, setMode] = useState<'agent' | 'extension'>('agent');
  const [busy, setBusy] = useState(false);
  const submit = async (ev: Event) => {
    ev.preventDefault();
    const f = new FormData(ev.currentTarget as HTMLFormElement);
    const v = (k: string) => String(f.get(k) ?? '');
    setBusy(true);
    props.onError('');
    try {
      if (mode === 'agent') await props.account.signInAgent(v('username'), v('password'), v('ws_url'));
      else props.account.signInExtension(v('ws_url'), v('sip_uri'), v('password'));
    } catch (err) {
      props.onError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form id="sign-in" onSubmit={submit} aria-label="Sign in">
      <fieldset>
        <legend>Sign in as</legend>
        <label>
          <input type="radio" name="mode" value="agent" checked={mode === 'agent'} onChange={() => setMode('agent')} /> Agent
        </label>
        <label>
          <input type="radio" name="mode" value="extension" checked={mode === 'extension'} onChange={() => setMode('extension')} /> Extension
        </label>
      </fieldset>
      {mode === 'agent' ? (
        <label>
          Username <input id="username" name="username" autoComplete="username" required />
        </label>
      ) : (
        <label>
          SIP address <input id="sip_uri" name="sip_uri" placeholder="1001@abcd.reg.example.com" autoComplete="username" required />
        </label>
      )}
      <label>
        Password <input id="password" name="password" type="password" autoComplete="current-password" required />
      </label>
      {props.needWsUrl && (
        <label>
          SIP WebSocket URL <input id="ws_url" name="ws_url" type="url" placeholder="wss://sip.example.com:7443" required />
        </label>
      )}
      <button id="sign-in-button" type="submit" disabled={busy}>
        Sign in
      </button>
    </form>
  );
}

function InCall(props: { phone: Phone; call: CallState }) {
  const { phone, call } = props;
  const active = call.phase === 'connected' || call.phase === 'held';
  return (
    <div class="controls">
      {call.phase === 'incoming' && (
        <button id="answer" type="button" onClick={() => phone.answer()}>
          Answer
        </button>
      )}
      <button id="hangup" type="button" class="danger" onClick={() => phone.hangup()}>
        {call.phase === 'incoming' ? 'Decline' : 'Hang up'}
      </button>
      <button id="mute" type="button" aria-pressed={call.muted} disabled={!active} onClick={() => phone.setMuted(!call.muted)}>
        {call.muted ? 'Unmute' : 'Mute'}
      </button>
      <button id="hold" type="button" aria-pressed={call.phase === 'held'} disabled={!active} onClick={() => phone.setHeld(call.phase !== 'held')}>
        {call.phase === 'held' ? 'Resume' : 'Hold'}
      </button>
      <div role="group" aria-label="Keypad" class="keypad">
        {KEYS.map((k) => (
          <button type="button" key={k} data-key={k} aria-label={`Send DTMF ${k}`} disabled={call.phase !== 'connected'} onClick={() => phone.sendDtmf(k)}>
            {k}
          </button>
        ))}
      </div>
    </div>
  );
}

function Dialler(props: { phone: Phone; onError: (m: string) => void }) {
  const [target, setTarget] = useState('');
  const dial = (ev: Event) => {
    ev.preventDefault();
    props.onError('');
    try {
      props.phone.dial(target);
    } catch (err) {
      props.onError(err instanceof Error ? err.message : String(err));
    }
  };
  return (
    <form id="dialler" onSubmit={dial} aria-label="Dial">
      <label>
        Number, extension or SIP URI <input id="target" name="target" value={target} onInput={(e) => setTarget((e.currentTarget as HTMLInputElement).value)} autoComplete="off" required />
      </label>
      <button id="call" type="submit">
        Call
      </button>
    </form>
  );
}

export function App(props: { phone: Phone; account: Account; needWsUrl: boolean }) {
  const { phone, account } = props;
  const { reg, call } = usePhone(phone);
  const [error, setError] = useState('');
  const signedIn = reg.state !== 'signed-out';
  const live = call.phase !== 'idle' && call.phase !== 'ended';
  return (
    <main>
      <header>
        <h1>Phone</h1>
        <p id="registration" role="status" aria-live="polite" data-state={reg.state}>
          {signedIn ? `${account.who}: ${reg.state}${reg.cause ? ` (${reg.cause})` : ''}` : 'Signed out'}
        </p>
      </header>
      {!signedIn && <SignIn account={account} needWsUrl={props.needWsUrl} onError={setError} />}
      {signedIn && (
        <section aria-label="Call">
          <p id="call-state" role="status" aria-live="assertive" data-phase={call.phase} data-direction={call.direction ?? ''}>
            {PHASE_TEXT[call.phase]}
            {call.peer ? `: ${call.peer}` : ''}
            {call.phase === 'ended' && call.reason ? ` (${call.reason})` : ''}
          </p>
          {live ? <InCall phone={phone} call={call} /> : <Dialler phone={phone} onError={setError} />}
          <button id="sign-out" type="button" onClick={() => void account.signOut()}>
            Sign out
          </button>
        </section>
      )}
      <p id="error" role="alert">
        {error}
      </p>
    </main>
  );
}
