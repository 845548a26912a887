// The switch's outbound socket whose connect hangs (esl/sip-face.ts dial), as the esl suites on it set it up
// (test/esl/outbound-connect-limit.test.ts, late-outbound.test.ts): our switch (switch-rig.ts), an
// authenticated inbound client from 127.0.0.1 (the face dials only such a host: its ACL), and fsmrf's
// listener stand-in, a child process stopped (SIGSTOP) with its accept queue full, so the switch's SYN and
// its retransmits are dropped until the child runs again (`resume`: the next retransmit gets through).
import { spawn, type ChildProcess } from 'node:child_process';
import type { EventEmitter } from 'node:events';
import net from 'node:net';
import readline from 'node:readline';
import type { SipFaceOptions } from '../../esl/sip-face';
import { bounded, boundedOnce } from '../bounded';
import { PASSWORD, RawClient } from './client';
import { startSwitchRig, type SwitchRig } from './switch-rig';

const SDP = ['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', 'm=audio 9 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000', 'a=sendrecv', ''].join('\r\n');

/** A listener (backlog 1: two queued connections fill it) that prints its port, then per connection closed: `{remotePort, data}`. */
const LISTENER = `
const net = require('node:net');
const s = net.createServer((c) => {
  let data = '';
  c.on('data', (d) => (data += d));
  c.on('error', () => undefined);
  c.on('close', () => console.log(JSON.stringify({ remotePort: c.remotePort, data })));
});
s.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => console.log(JSON.stringify({ port: s.address().port })));
`;

/** A connection the stopped listener took and closed once it ran again: its far end's port and what it was sent. */
export interface ClosedConnection {
  remotePort: number;
  data: string;
}

/** The channel whose outbound socket dials the stopped listener: its dialog (fsmrf's side), uuid, and when its INVITE was sent. */
export interface StalledChannel {
  dialog: EventEmitter & { destroy(): Promise<unknown> };
  uuid: string;
  /** performance.now() before the INVITE: the face arms its connect timer after it takes the INVITE */
  sent: number;
}

export interface OutboundStall {
  readonly rig: SwitchRig;
  /** The filler connections (closed by the suite's after only). */
  readonly fillers: readonly net.Socket[];
  /** The client, the stopped listener with its queue full, and a channel that dials it (once per suite). */
  dial(): Promise<StalledChannel>;
  /** The listener runs again: it accepts what is queued, the switch's connection at its SYN's retransmit. */
  resume(): void;
  /** The listener's next line: a connection it closed (10 s). */
  nextClosed(): Promise<ClosedConnection>;
}

/** Before the suite: our switch, its SIP face with `face`; after it: the fillers, the listener, the client, the switch. */
export function useOutboundStall(face: SipFaceOptions = {}): OutboundStall {
  let rig: SwitchRig | undefined;
  let client: RawClient | null = null;
  let child: ChildProcess | null = null;
  let lines: AsyncIterator<string> | null = null;
  const fillers: net.Socket[] = [];
  before(async () => {
    rig = await startSwitchRig({}, '127.0.0.1', face);
  });
  after(async () => {
    for (const f of fillers) f.destroy();
    if (child?.pid && child.exitCode === null) {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    }
    client?.send('exit\n\n');
    await rig?.close();
  });
  const started = () => {
    if (!rig) throw new Error('the switch is not started (use it inside a test)');
    return rig;
  };
  // an async iterator keeps the lines that come together (a 'line' listener would miss the second)
  const next = async <T>(what: string): Promise<T> => {
    if (!lines) throw new Error('no listener (dial first)');
    return JSON.parse(String((await bounded(lines.next(), 10_000, what)).value)) as T;
  };
  return {
    get rig() {
      return started();
    },
    fillers,
    async dial() {
      const r = started();
      if (child) throw new Error('dial once per suite');
      client = await RawClient.authed(r.port, PASSWORD);
      child = spawn(process.execPath, ['-e', LISTENER], { stdio: ['ignore', 'pipe', 'inherit'] });
      lines = readline.createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
      const { port } = await next<{ port: number }>('the listener port');
      // stopped, its accept queue filled by two connections the kernel completes for it: a third SYN is dropped
      child.kill('SIGSTOP');
      for (let i = 0; i < 2; i++) {
        const f = net.connect(port, '127.0.0.1');
        f.on('error', () => undefined);
        fillers.push(f);
        await boundedOnce(f, 'connect', 5000, 'a filler connection');
      }
      const sent = performance.now();
      const dialog = (await r.appSrf.createUAC(`sip:drachtio@${r.esl.api.profile.address}`, {
        headers: { 'X-esl-outbound': `127.0.0.1:${port}` },
        localSdp: SDP,
      })) as unknown as StalledChannel['dialog'];
      const [uuid] = [...r.esl.channels.keys()];
      if (!uuid) throw new Error('no channel for the INVITE');
      return { dialog, uuid, sent };
    },
    resume() {
      child?.kill('SIGCONT');
    },
    nextClosed: () => next<ClosedConnection>('a line of the listener'),
  };
}
