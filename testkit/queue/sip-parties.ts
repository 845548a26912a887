// SIP parties for the queue tests: a caller UAS whose SDP sends our audio to an RtpSink, and a
// UDP socket that only counts the INVITEs it receives (an agent who must not be rung).
import dgram from 'node:dgram';
import { answerBye } from '../media-app/harness';
import { answerInvite } from '../media-app/sipp-steps';

/** sipp UAS: answers at once with audio to 127.0.0.1:rtpPort, then waits for the platform's BYE. */
export function callerUas(rtpPort: number): string {
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="queue-caller">
${answerInvite(rtpPort, { tag: 'Q' })}
<recv request="ACK"/>
${answerBye(40000)}
</scenario>`;
}

/** A 486 for an INVITE: its Via, From, Call-ID and CSeq, a To tag of ours. */
function busyReply(invite: string): string {
  const head = invite.split('\r\n\r\n')[0]!.split('\r\n');
  const pick = (name: string) => head.filter((l) => new RegExp(`^${name}\\s*:`, 'i').test(l));
  const to = pick('To')[0] ?? 'To: <sip:x@x>';
  return ['SIP/2.0 486 Busy Here', ...pick('Via'), ...pick('From'), /;tag=/.test(to) ? to : `${to};tag=busy${Date.now()}`, ...pick('Call-ID'), ...pick('CSeq'), 'Content-Length: 0', '', ''].join(
    '\r\n',
  );
}

/** Counts INVITEs (by Call-ID) and the arrival time of each; never answers, or answers 486 (`busy`). */
export class InviteCounter {
  private sock = dgram.createSocket('udp4');
  port = 0;
  readonly invites = new Map<string, number>();
  /** Request-URI user parts of the INVITEs, in order. */
  readonly users: string[] = [];
  onInvite: ((at: number, user: string) => void) | null = null;

  static async open(opts: { busy?: boolean } = {}): Promise<InviteCounter> {
    const c = new InviteCounter();
    await new Promise<void>((r) => c.sock.bind(0, '127.0.0.1', r));
    c.port = c.sock.address().port;
    c.sock.on('message', (buf, rinfo) => {
      const at = performance.timeOrigin + performance.now();
      const s = buf.toString();
      const m = /^INVITE sip:([^@\s]+)@/.exec(s);
      if (!m) return;
      if (opts.busy) c.sock.send(busyReply(s), rinfo.port, rinfo.address);
      const callId = /\r\nCall-ID:\s*(\S+)/i.exec(s)?.[1] ?? '';
      if (c.invites.has(callId)) return; // retransmission
      c.invites.set(callId, at);
      c.users.push(m[1]!);
      c.onInvite?.(at, m[1]!);
    });
    return c;
  }

  get count(): number {
    return this.invites.size;
  }

  close(): void {
    this.sock.close();
  }
}
