// The switch's outbound socket that never connects (esl/sip-face.ts dial): the switch gives up at its
// connect limit, OUTBOUND_CONNECT_MS by default, as long as fsmrf waits for that socket (its createEndpoint:
// 4 s, then its BYE), never later: the channel is hung up (DESTINATION_OUT_OF_ORDER, a BYE to the dialog)
// and no Listener is left. The connect hangs for real: fsmrf's listener stand-in is a child process stopped
// (SIGSTOP) with its accept queue full, so the switch's SYN and its retransmits are dropped. The switch's
// connect timer is node's socket timeout (real time): the face here has a short limit (LIMIT_MS), and the
// BYE is asserted to come no sooner than that limit after the INVITE went out, and within a few times it
// (a loaded machine may run a timer late, never early); the default and fsmrf's 4 s are compared as numbers.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import readline from 'node:readline';
import fs from 'node:fs';
import path from 'node:path';
import { OUTBOUND_CONNECT_MS, SipFace } from '../../esl/sip-face';
import { startSwitchRig, type SwitchRig } from '../../testkit/esl/switch-rig';
import { PASSWORD, RawClient } from '../../testkit/esl/client';
import { bounded, boundedOnce } from '../../testkit/bounded';

/** the face's connect limit in this test: a quarter of the default, so a face that ignored it would miss the wait below */
const LIMIT_MS = 1000;

/** fsmrf's waits for the outbound socket after its INVITE's 200 (createEndpoint's connTimeout), read from its source. */
function fsmrfConnectWaits(): number[] {
  const file = path.join(path.dirname(require.resolve('drachtio-fsmrf/package.json')), 'lib', 'mediaserver.js');
  return [...fs.readFileSync(file, 'utf8').matchAll(/connTimeout = setTimeout\(timeoutFn\.bind\(this, dlg, uuid\), (\d+)\)/g)].map((m) => Number(m[1]));
}

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
    rig = await startSwitchRig({}, '127.0.0.1', { outboundConnectMs: LIMIT_MS });
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

  it("is as long as fsmrf waits by default: OUTBOUND_CONNECT_MS is fsmrf's 4 s, and a face made without options uses it", () => {
    const waits = fsmrfConnectWaits();
    expect(waits, "fsmrf's createEndpoint waits (lib/mediaserver.js, its connTimeout)").to.have.length.at.least(1);
    expect(new Set(waits)).to.deep.equal(new Set([OUTBOUND_CONNECT_MS]));
    expect(OUTBOUND_CONNECT_MS).to.equal(4000);
    // a face never started (its srf unused): the limit it would dial with
    expect(new SipFace(rig.appSrf, rig.engine, rig.esl).outboundConnectMs).to.equal(OUTBOUND_CONNECT_MS);
    expect(() => new SipFace(rig.appSrf, rig.engine, rig.esl, { outboundConnectMs: 0 })).to.throw(/outboundConnectMs: want a whole number of ms >= 1, got 0/);
  });

  it('a connect that never completes hangs the channel up at the limit, not sooner, with a BYE; no Listener left', async () => {
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

    // before the INVITE: the face arms its connect timer after it takes the INVITE, so the BYE comes no sooner than the limit after this
    const sent = performance.now();
    const dialog = (await rig.appSrf.createUAC(`sip:drachtio@${rig.esl.api.profile.address}`, { headers: { 'X-esl-outbound': `127.0.0.1:${port}` }, localSdp: SDP })) as unknown as net.Socket & {
      on(e: 'destroy', fn: (msg: { get(h: string): string | undefined }) => void): unknown;
    };
    const [uuid] = [...rig.esl.channels.keys()];
    expect(uuid, 'the channel').to.be.a('string');
    // within three times the limit of the INVITE (a ratio: a loaded machine's late timers and SIP hops), well before
    // the default 4 s: a face dialling with the default instead of its option would fail here
    await boundedOnce(dialog, 'destroy', Math.max(0, 3 * LIMIT_MS - (performance.now() - sent)), "the switch's BYE");
    const took = performance.now() - sent;
    // node's timers never fire early; its timer clock counts whole ms (the arming may be read up to 1 ms low)
    expect(took, 'the BYE no sooner than the connect limit after the INVITE').to.be.at.least(LIMIT_MS - 1);
    expect(rig.esl.channels.has(uuid!), 'the channel ended').to.equal(false);
    expect(
      [...rig.esl.connections].some((l) => l.session?.channel.uuid === uuid),
      'no Listener of the channel',
    ).to.equal(false);
  });
});
