/**
 * The browser phone (web/phone/, docs/webphone.md) embedded for the signed-in agent: an iframe of
 * /phone/?embed=1 driven by postMessage. Once the phone says `ready` the console has it sign in as
 * this agent (`sign-in-agent` without a token: the phone's own request for
 * POST /v1.0/service_agents/me/sip_credentials carries the console's login cookie, so the token never
 * reaches page script) and shows its registration and call; Answer / Hang up / Mute are commands to
 * it. The agent's availability is PUT /v1.0/service_agents/me/status. Only the own origin is trusted
 * both ways. `ice` and `audio_processing` of the console's own query string are handed to the phone.
 */
import { type RefObject } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Agent } from '../api';
import { useConsole } from '../context';
import { ErrorLine, useAction } from './common';

export type PhonePhase = 'idle' | 'dialing' | 'incoming' | 'ringing' | 'connected' | 'held' | 'ended';
interface PhoneCall {
  phase: PhonePhase;
  direction: 'in' | 'out' | null;
  peer: string;
  muted: boolean;
  reason: string;
}
type PhoneMessage = { type: 'ready' } | { type: 'registration'; state: string; cause?: string } | { type: 'call'; call: PhoneCall } | { type: 'error'; message: string };

const PASSED_OPTIONS = ['ice', 'audio_processing'];

/** /phone/?embed=1 plus the options of the console's own query string the phone knows. */
export function phoneSrc(search: string): string {
  const q = new URLSearchParams(search);
  const out = new URLSearchParams({ embed: '1' });
  for (const k of PASSED_OPTIONS) {
    const v = q.get(k);
    if (v && /^[a-z]+$/.test(v)) out.set(k, v);
  }
  return `/phone/?${out.toString()}`;
}

function isPhoneMessage(d: unknown): d is PhoneMessage & { source: 'openvoice-phone' } {
  return typeof d === 'object' && d !== null && (d as { source?: unknown }).source === 'openvoice-phone' && typeof (d as { type?: unknown }).type === 'string';
}

/** A phase in which the call needs the agent (the phone is shown whatever page is open). */
export const phaseLive = (p: PhonePhase) => p === 'incoming' || p === 'dialing' || p === 'ringing' || p === 'connected' || p === 'held';

export function AgentPhone(props: { onPhase?: (p: PhonePhase) => void }) {
  const { me } = useConsole();
  const frame = useRef<HTMLIFrameElement>(null);
  const { reg, cause, call, error, send } = usePhoneFrame(frame, props.onPhase);
  const [status, setStatus] = useState(me.status || 'offline');
  const act = useAction();

  const setAvailability = (s: 'available' | 'away') => act.run(async () => setStatus((await api.put<Agent>('/service_agents/me/status', { status: s })).status || s));

  const phase = call?.phase ?? 'idle';
  return (
    <div class="agent-phone" data-registration={reg} data-phase={phase}>
      <div class="phone-bar">
        <span class={`badge reg-${reg}`} data-field="registration" title={cause}>
          {regLabel(reg)}
        </span>
        <span class={`badge ag-${status}`} data-field="agent-status">
          {status}
        </span>
        <button onClick={() => setAvailability('available')} disabled={act.busy || status === 'available'} data-action="available">
          Available
        </button>
        <button onClick={() => setAvailability('away')} disabled={act.busy || status === 'away'} data-action="away">
          Away
        </button>
      </div>
      <p class="phone-call" data-field="phone-call" aria-live="polite">
        {callLabel(call)}
      </p>
      <div class="buttons">
        {phase === 'incoming' && (
          <button class="primary" onClick={() => send('answer')} data-action="answer">
            Answer
          </button>
        )}
        {(phase === 'connected' || phase === 'held') && (
          <button onClick={() => send('mute', { muted: !call?.muted })} data-action="phone-mute">
            {call?.muted ? 'Unmute' : 'Mute'}
          </button>
        )}
        {phaseLive(phase) && (
          <button class="danger" onClick={() => send('hangup')} data-action="phone-hangup">
            {phase === 'incoming' ? 'Decline' : 'Hang up'}
          </button>
        )}
      </div>
      <ErrorLine error={error || act.error} />
      <iframe ref={frame} class="phone-frame" title="Browser phone" src={phoneSrc(location.search)} allow="microphone; autoplay" />
    </div>
  );
}

/**
 * The phone's side of the postMessage channel: it signs the phone in as this agent once it is ready
 * (and out when the console closes it), keeps what the phone reports, and sends it commands.
 */
function usePhoneFrame(frame: RefObject<HTMLIFrameElement>, onPhase: ((p: PhonePhase) => void) | undefined) {
  const [reg, setReg] = useState('signed-out');
  const [cause, setCause] = useState('');
  const [call, setCall] = useState<PhoneCall | null>(null);
  const [error, setError] = useState('');

  const send = (command: string, extra: Record<string, unknown> = {}) => frame.current?.contentWindow?.postMessage({ channel: 'openvoice-phone', command, ...extra }, location.origin);

  useEffect(() => {
    const on = (ev: MessageEvent) => {
      if (ev.origin !== location.origin || !frame.current || ev.source !== frame.current.contentWindow || !isPhoneMessage(ev.data)) return;
      const m = ev.data;
      switch (m.type) {
        case 'ready':
          setError('');
          send('sign-in-agent');
          return;
        case 'registration':
          setReg(m.state);
          setCause(m.cause ?? '');
          return;
        case 'call':
          setCall(m.call);
          onPhase?.(m.call.phase);
          return;
        case 'error':
          setError(m.message);
          return;
      }
    };
    window.addEventListener('message', on);
    return () => {
      window.removeEventListener('message', on);
      send('sign-out');
    };
  }, []);

  return { reg, cause, call, error, send };
}

function regLabel(state: string): string {
  switch (state) {
    case 'registered':
      return 'phone ready';
    case 'connecting':
      return 'phone connecting';
    case 'failed':
      return 'phone failed';
    default:
      return 'phone off';
  }
}

function callLabel(c: PhoneCall | null): string {
  if (!c || c.phase === 'idle') return 'No call.';
  switch (c.phase) {
    case 'incoming':
      return `Incoming call from ${c.peer}`;
    case 'dialing':
    case 'ringing':
      return `Calling ${c.peer}…`;
    case 'connected':
      return `On a call with ${c.peer}${c.muted ? ' (muted)' : ''}`;
    case 'held':
      return `On hold with ${c.peer}`;
    case 'ended':
      return `Call ended${c.reason ? `: ${c.reason}` : ''}`;
  }
}
