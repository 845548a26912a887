// The switch's outbound socket that never connects (esl/sip-face.ts dial): the switch gives up at
// OUTBOUND_CONNECT_MS, as long as fsmrf waits for that socket (its createEndpoint: 4 s, then its BYE), never
// later: the channel is hung up (DESTINATION_OUT_OF_ORDER, a BYE to the dialog) and no Listener is left.
// The connect hangs for real: fsmrf's listener stand-in is a child process stopped (SIGSTOP) with its
// accept queue full, so the switch's SYN and its retransmits are dropped. The switch's connect timer is
// node's socket timeout (real time): this test waits it out, about 4 s.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import readline from 'node:readline';
import { OUTBOUND_CONNECT_MS } from '../../esl/sip-face';
import { startSwitchRig, type SwitchRig } from '../../testkit/esl/switch-rig';
import { PASSWORD, RawClient } from '../../testkit/esl/client';
import { bounded, boundedOnce } from '../../testkit/bounded';

const SDP = ['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', 'm=audio 9 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000', 'a=sendrecv', ''].join('\r\n');

/** A listener (backlog 1: two queued connections fill it) that prints its port. */
const LISTENER = `
const net = require('node:net');
const s = net.createServer((c) => c.on('error', () => undefined));
s.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => console.log(JSON.stringify({ port: s.address().port })));
`;

describe("esl: the outbound socket's connect limit", function () {
  this.timeout(30_000);
  let rig: SwitchRig;
  let client: RawClient | null = null;
  let child: ChildProcess | null = null;
  const fillers: net.Socket[] = [];

  before(async () => {
    rig = await startSwitchRig();
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

  it('is as long as fsmrf waits (4 s): a connect that never completes hangs the channel up then, with a BYE; no Listener left', async () => {
    expect(OUTBOUND_CONNECT_MS, "fsmrf's wait for the outbound socket (lib/mediaserver.js)").to.equal(4000);
    // an authenticated inbound connection from 127.0.0.1: the face dials only such a host (its ACL)
    client = await RawClient.authed(rig.port, PASSWORD);
    child = spawn(process.execPath, ['-e', LISTENER], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = readline.createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const { port } = JSON.parse(String((await bounded(lines.next(), 10_000, 'the listener port')).value)) as { port: number };
    // stopped, its accept queue filled by two connections the kernel completes for it: the switch's SYN is dropped
    child.kill('SIGSTOP');
    for (let i = 0; i < 2; i++) {
      const f = net.connect(port, '127.0.0.1');
      f.on('error', () => undefined);
      fillers.push(f);
      await boundedOnce(f, 'connect', 5000, 'a filler connection');
    }

    const dialog = (await rig.appSrf.createUAC(`sip:drachtio@${rig.esl.api.profile.address}`, { headers: { 'X-esl-outbound': `127.0.0.1:${port}` }, localSdp: SDP })) as unknown as net.Socket & {
      on(e: 'destroy', fn: (msg: { get(h: string): string | undefined }) => void): unknown;
    };
    const answered = Date.now();
    const [uuid] = [...rig.esl.channels.keys()];
    expect(uuid, 'the channel').to.be.a('string');
    const bye = boundedOnce(dialog, 'destroy', OUTBOUND_CONNECT_MS + 3000, "the switch's BYE");
    await bye;
    const took = Date.now() - answered;
    // the dial starts before the 200 reaches us: at most the limit after it, and not much sooner
    expect(took, 'the BYE at the connect limit').to.be.within(OUTBOUND_CONNECT_MS - 500, OUTBOUND_CONNECT_MS + 500);
    expect(rig.esl.channels.has(uuid!), 'the channel ended').to.equal(false);
    expect(
      [...rig.esl.connections].some((l) => l.session?.channel.uuid === uuid),
      'no Listener of the channel',
    ).to.equal(false);
  });
});
