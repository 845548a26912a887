/**
 * Busy lamps (`#/blf`): every extension of the customer with its lamp (idle, dialling, ringing, in a
 * call) and whether a phone is registered, and every park slot free or occupied, as desk phones' BLF
 * keys show them. GET /extension_states gives the whole field; `extension_state_updated` frames
 * (one extension's new state) and `parkedcall_slot_updated` frames (one slot's) keep it current.
 */
import { useEffect, useState } from 'preact/hooks';
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

export function BlfPage() {
  const { events, topic } = useConsole();
  const field = useLoad(() => api.get<Field>('/extension_states'));
  const [exts, setExts] = useState<ExtensionState[]>([]);
  const [slots, setSlots] = useState<SlotState[]>([]);
  const now = useNow();
  useEffect(() => (setExts(field.data?.extensions ?? []), setSlots(field.data?.park_slots ?? [])), [field.data]);
  useEffect(() => {
    const offExt = events.subscribe(topic('extension'), (e) => {
      if (e.event_type !== 'extension_state_updated') return;
      const s = e.data as unknown as ExtensionState;
      setExts((cur) => (cur.some((x) => x.id === s.id) ? cur.map((x) => (x.id === s.id ? s : x)) : [...cur, s].sort((a, b) => a.extension.localeCompare(b.extension))));
    });
    // the slot's lamp itself (its state is published apart from call_parked and may land after it)
    const offPark = events.subscribe(topic('parkedcall'), (e) => {
      if (e.event_type !== 'parkedcall_slot_updated') return;
      const s = e.data as unknown as SlotState;
      setSlots((cur) => cur.map((x) => (x.slot === s.slot ? s : x)));
    });
    return () => (offExt(), offPark());
  }, [events]);
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
