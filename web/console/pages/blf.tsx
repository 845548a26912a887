/**
 * Busy lamps (`#/blf`): every extension of the customer with its lamp (idle, dialling, ringing, in a
 * call) and whether a phone is registered, and every park slot free or occupied, as desk phones' BLF
 * keys show them. GET /extension_states gives the whole field; `extension_state_updated` frames
 * (one extension's new state) and `parkslot_state_updated` frames (one slot's) keep it current.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type ExtensionState, type LampState, type SlotState } from '../api';
import { ErrorLine, Section, seconds, useLoad } from '../components/common';
import { useConsole } from '../context';
import { useNow } from './calls';

const WORDS: Record<LampState, string> = { idle: 'Idle', dialing: 'Dialling', ringing: 'Ringing', in_call: 'In a call' };

interface Field {
  extensions: ExtensionState[];
  park_slots: SlotState[];
}

const remoteOf = (uri: string, name: string) => {
  const who = uri.replace(/^(sip|tel):/, '').replace(/@.*$/, '');
  return name ? `${name} (${who})` : who;
};

/** `cur` with extension `s` in its place (or added, by number). */
const withExt = (cur: ExtensionState[], s: ExtensionState) =>
  cur.some((x) => x.id === s.id) ? cur.map((x) => (x.id === s.id ? s : x)) : [...cur, s].sort((a, b) => a.extension.localeCompare(b.extension));

/** The frames heard since the field's last read started: laid over that read's answer, which may be older. */
interface Heard {
  exts: Map<string, ExtensionState>;
  slots: Map<number, SlotState>;
}
const nothingHeard = (): Heard => ({ exts: new Map(), slots: new Map() });

/**
 * The lamp field: GET /extension_states, kept current by the extension and slot frames (laid over a read's
 * answer when they came while it was made), read again after the socket reconnects.
 */
function useLampField() {
  const { events, topic } = useConsole();
  const heard = useRef<Heard>(nothingHeard());
  const field = useLoad(() => ((heard.current = nothingHeard()), api.get<Field>('/extension_states')));
  const [exts, setExts] = useState<ExtensionState[]>([]);
  const [slots, setSlots] = useState<SlotState[]>([]);
  useEffect(() => {
    const d = field.data;
    if (!d) return;
    setExts([...heard.current.exts.values()].reduce(withExt, d.extensions));
    setSlots(d.park_slots.map((s) => heard.current.slots.get(s.slot) ?? s));
  }, [field.data]);
  useEffect(() => {
    const offExt = events.subscribe(topic('extension'), (e) => {
      if (e.event_type !== 'extension_state_updated') return;
      const s = e.data as unknown as ExtensionState;
      heard.current.exts.set(s.id, s);
      setExts((cur) => withExt(cur, s));
    });
    // the slot's lamp itself (its state is published apart from call_parked and may land after it)
    const offPark = events.subscribe(topic('parkslot'), (e) => {
      if (e.event_type !== 'parkslot_state_updated') return;
      const s = e.data as unknown as SlotState;
      heard.current.slots.set(s.slot, s);
      setSlots((cur) => cur.map((x) => (x.slot === s.slot ? s : x)));
    });
    // frames are not replayed after a reconnect: what changed meanwhile is read again
    const offReopen = events.onReopen(() => field.reload());
    return () => (offExt(), offPark(), offReopen());
  }, [events]);
  return { field, exts, slots };
}

export function BlfPage() {
  const { field, exts, slots } = useLampField();
  const now = useNow();
  return (
    <>
      <Section
        title="Busy lamps"
        actions={
          <button class="link" onClick={() => field.reload()}>
            Refresh
          </button>
        }
      >
        <ErrorLine error={field.error} />
        {field.loading && !field.data && <p>Loading…</p>}
        {field.data && exts.length === 0 && <p class="empty">No extensions yet.</p>}
        <ul class="lamps" aria-label="Extensions">
          {exts.map((x) => {
            const d = x.dialogs[0];
            return (
              <li class={`lamp lamp-${x.state}`} data-extension={x.extension} data-state={x.state} data-registered={String(x.registered)}>
                <span class="lamp-dot" aria-hidden="true" />
                <strong>{x.extension}</strong>
                {x.name && <span class="muted">{x.name}</span>}
                <span data-field="state">{WORDS[x.state]}</span>
                {d && d.remote && (
                  <span data-field="remote">
                    {d.direction === 'initiator' ? 'to' : 'from'} {remoteOf(d.remote, d.remote_name)}
                    {x.state === 'in_call' && d.tm_start ? ` · ${seconds(now - Date.parse(d.tm_start))}` : ''}
                  </span>
                )}
                <span data-field="presence" class={x.registered ? 'online' : 'offline'}>
                  {x.registered ? 'Registered' : 'Not registered'}
                </span>
              </li>
            );
          })}
        </ul>
      </Section>
      <Section title="Park slots">
        <ul class="lamps slots" aria-label="Park slots">
          {slots.map((s) => (
            <li class={`lamp lamp-${s.state === 'occupied' ? 'in_call' : 'idle'}`} data-slot={s.slot} data-state={s.state}>
              <span class="lamp-dot" aria-hidden="true" />
              <strong>{s.slot}</strong>
              <span data-field="state">{s.state === 'occupied' ? 'Occupied' : 'Free'}</span>
              {s.dialogs[0]?.remote && <span data-field="remote">{remoteOf(s.dialogs[0].remote, s.dialogs[0].remote_name)}</span>}
            </li>
          ))}
        </ul>
      </Section>
    </>
  );
}
