/**
 * A SIP ladder drawn from GET /timelines/calls/{id}/sip-analysis: one column per party, one row per
 * message, an arrow from sender to receiver. It reads the fields loosely (the analysis route is
 * new): each message's sender and receiver (`src`/`dst` or `source`/`destination`), its method or
 * status line, and its time.
 */

export interface SipMessage {
  timestamp?: string;
  time?: string;
  src?: string;
  dst?: string;
  source?: string;
  destination?: string;
  method?: string;
  status_code?: number;
  reason?: string;
  first_line?: string;
  summary?: string;
}

export interface SipAnalysis {
  messages?: SipMessage[];
  result?: SipMessage[];
}

const from = (m: SipMessage) => m.src ?? m.source ?? '?';
const to = (m: SipMessage) => m.dst ?? m.destination ?? '?';
const label = (m: SipMessage) => m.first_line ?? m.summary ?? (m.status_code ? `${m.status_code} ${m.reason ?? ''}` : m.method ?? '');

export function SipLadder({ analysis }: { analysis: SipAnalysis }) {
  const msgs = analysis.messages ?? analysis.result ?? [];
  if (msgs.length === 0) return <p class="empty">No SIP messages were captured for this call.</p>;
  const parties: string[] = [];
  for (const m of msgs) for (const p of [from(m), to(m)]) if (!parties.includes(p)) parties.push(p);
  const cols = `7em repeat(${parties.length}, minmax(6em, 1fr))`;
  return (
    <div class="ladder" role="table" aria-label="SIP ladder">
      <div class="ladder-row head" role="row" style={{ gridTemplateColumns: cols }}>
        <span role="columnheader">Time</span>
        {parties.map((p) => <span role="columnheader" class="party">{p}</span>)}
      </div>
      {msgs.map((m) => {
        const a = parties.indexOf(from(m));
        const b = parties.indexOf(to(m));
        const left = Math.min(a, b);
        const span = Math.max(1, Math.abs(b - a));
        return (
          <div class="ladder-row" role="row" style={{ gridTemplateColumns: cols }}>
            <span role="cell" class="t">{(m.timestamp ?? m.time ?? '').slice(11, 23)}</span>
            <span role="cell" class={`arrow ${b >= a ? 'right' : 'left'}`} style={{ gridColumn: `${left + 2} / span ${span + (a === b ? 0 : 1)}` }}>
              {label(m)}
            </span>
          </div>
        );
      })}
    </div>
  );
}
