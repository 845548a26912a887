/**
 * A call's SIP ladder from GET /timelines/calls/{id}/sip-analysis: one column per party (address
 * and port), one row per message with an arrow from sender to receiver; each row opens to the
 * message as it went on the wire.
 */

export interface SipMessage {
  timestamp: string;
  method: string;
  src_ip: string;
  src_port: number;
  dst_ip: string;
  dst_port: number;
  direction: 'incoming' | 'outgoing';
  transport: string;
  sip_call_id: string;
  raw: string;
}

export interface SipAnalysis {
  sip_messages: SipMessage[];
}

const host = (ip: string, port: number) => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);

export function SipLadder({ analysis }: { analysis: SipAnalysis }) {
  const msgs = analysis.sip_messages ?? [];
  if (msgs.length === 0) return <p class="empty">No SIP messages were captured for this call (capture off, or past its retention).</p>;
  const parties: string[] = [];
  for (const m of msgs) for (const p of [host(m.src_ip, m.src_port), host(m.dst_ip, m.dst_port)]) if (!parties.includes(p)) parties.push(p);
  const cols = `6.5em repeat(${parties.length}, minmax(5em, 1fr))`;
  return (
    <div class="ladder" aria-label="SIP ladder">
      <div class="ladder-row head" style={{ gridTemplateColumns: cols }}>
        <span>Time</span>
        {parties.map((p) => (
          <span class="party">{p}</span>
        ))}
      </div>
      {msgs.map((m) => {
        const a = parties.indexOf(host(m.src_ip, m.src_port));
        const b = parties.indexOf(host(m.dst_ip, m.dst_port));
        const n = parties.length;
        // from the middle of the sender's column to the middle of the receiver's
        const left = `${((Math.min(a, b) + 0.5) / n) * 100}%`;
        const width = `${(Math.max(1, Math.abs(b - a)) / n) * 100}%`;
        const response = /^\d{3}\b/.test(m.method);
        return (
          <details class="ladder-msg" data-method={m.method}>
            <summary class="ladder-row" style={{ gridTemplateColumns: cols }}>
              <span class="t">{m.timestamp.slice(11, 23)}</span>
              <span class="lane" style={{ gridColumn: `2 / span ${n}` }}>
                <span class={`arrow ${b >= a ? 'right' : 'left'} ${response ? 'response' : 'request'}`} style={{ left, width }}>
                  {m.method}
                </span>
              </span>
            </summary>
            <pre class="raw">{m.raw}</pre>
          </details>
        );
      })}
    </div>
  );
}
