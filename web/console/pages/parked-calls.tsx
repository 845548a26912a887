/**
 * Parked calls (`#/parked`): every slot of the customer's lot (GET /pbx_settings: park_slot_first..
 * park_slot_last), free or holding a call (GET /parkedcalls): its caller (the call's row), who parked
 * it, since when and the time left before the parker is rung back. Kept current by the `parkedcall`
 * events; Retrieve rings an extension and gives it the call (POST /parkedcalls/{slot}/retrieve).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, type Call, type ParkedCall, type PbxSettings } from '../api';
import { ErrorLine, Section, Table, seconds, shortTime, useAction, useLoad } from '../components/common';
import { useConsole } from '../context';
import { href } from '../router';
import { addr, useNow } from './calls';

interface Slot {
  slot: number;
  parked: ParkedCall | null;
  call: Call | null;
}

async function loadLot(): Promise<{ settings: PbxSettings; slots: Slot[] }> {
  const [settings, parked] = await Promise.all([api.get<PbxSettings>('/pbx_settings'), api.get<{ result: ParkedCall[] }>('/parkedcalls')]);
  // the parked party: the caller of an incoming call, the callee of an outgoing one
  const calls = await Promise.all(parked.result.map((p) => api.get<Call>(`/calls/${p.call_id}`).catch(() => null)));
  const bySlot = new Map(parked.result.map((p, i) => [p.slot, { parked: p, call: calls[i] ?? null }]));
  const slots: Slot[] = [];
  for (let s = settings.park_slot_first; s <= settings.park_slot_last; s++) slots.push({ slot: s, parked: null, call: null, ...bySlot.get(s) });
  return { settings, slots };
}

const party = (c: Call | null) => (!c ? '' : c.direction === 'outgoing' ? addr(c.destination) : addr(c.source));

export function ParkedCallsPage() {
  const { events, topic } = useConsole();
  const lot = useLoad(loadLot);
  const now = useNow();
  useEffect(() => events.subscribe(topic('parkedcall'), () => lot.reload()), [events]);
  const taken = (lot.data?.slots ?? []).filter((s) => s.parked).length;
  return (
    <Section
      title="Parked calls"
      actions={
        <button class="link" onClick={() => lot.reload()}>
          Refresh
        </button>
      }
    >
      <ErrorLine error={lot.error} />
      {lot.data && (
        <p class="muted">
          Lot {lot.data.settings.park_lot}, slots {lot.data.settings.park_slot_first}–{lot.data.settings.park_slot_last}: {taken} taken. A parked call rings its parker back after{' '}
          {lot.data.settings.park_timeout_sec} s.
        </p>
      )}
      <Table
        label="Park slots"
        rows={lot.data?.slots ?? []}
        rowKey={(s) => String(s.slot)}
        rowClass={(s) => (s.parked ? 'slot-occupied' : 'slot-free')}
        empty={lot.loading ? 'Loading…' : 'No slots.'}
        columns={[
          { title: 'Slot', cell: (s) => <span data-field="slot">{s.slot}</span> },
          { title: 'State', cell: (s) => <span data-field="state">{s.parked ? 'occupied' : 'free'}</span> },
          {
            title: 'Caller',
            cell: (s) =>
              s.parked && (
                <a href={href('calls', s.parked.call_id)} data-field="caller">
                  {party(s.call) || s.parked.call_id.slice(0, 8)}
                </a>
              ),
          },
          { title: 'Parked by', cell: (s) => s.parked && <span data-field="parker">{s.parked.parker ? addr(s.parked.parker) : 'itself'}</span> },
          { title: 'Since', cell: (s) => s.parked && <span data-field="since">{shortTime(s.parked.tm_parked)}</span> },
          {
            title: 'Ring-back in',
            cls: 'num',
            cell: (s) => s.parked && <span data-field="left">{Date.parse(s.parked.tm_timeout) > now ? seconds(Date.parse(s.parked.tm_timeout) - now) : 'ringing back'}</span>,
          },
          { title: '', cell: (s) => s.parked && <Retrieve slot={s.slot} onDone={lot.reload} /> },
        ]}
      />
    </Section>
  );
}

function Retrieve({ slot, onDone }: { slot: number; onDone: () => void }) {
  const act = useAction();
  const [target, setTarget] = useState('');
  const submit = (ev: Event) => {
    ev.preventDefault();
    void act.run(async () => {
      await api.post(`/parkedcalls/${slot}/retrieve`, { destination: { type: 'extension', target: target.trim() } });
      setTarget('');
      onDone();
    });
  };
  return (
    <form class="inline-form" aria-label={`Retrieve slot ${slot}`} onSubmit={submit}>
      <input name="extension" required placeholder="extension" aria-label="To extension" value={target} onInput={(e) => setTarget(e.currentTarget.value)} />
      <button type="submit" disabled={act.busy}>
        Retrieve
      </button>
      <ErrorLine error={act.error} />
    </form>
  );
}
