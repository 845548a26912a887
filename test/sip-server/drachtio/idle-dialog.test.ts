// A call over TCP that stays silent longer than SIP_TCP_IDLE_TIMEOUT_MS (issue 52): the connection
// carries a live dialog, so the idle sweep must spare it; the application's BYE then goes over it.
// sipp calls over one TCP connection (-t t1) with a Contact naming a port nothing listens on (a
// phone behind NAT): a BYE on a new connection could not reach it. Once the call is over, the
// connection carries nothing and is closed as any idle one. Idle timeout 1.5 s, sweep every 1.5 s.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { makeSipConfig } from '../../../sip-config';
import { SipStack, type SipMessage, SipRequest, type SipResponse, type SourceInfo } from '../../../sip-server/stack';
import { startDrachtio, type RunningDrachtio } from '../../../sip-server/drachtio';
import { freePort } from '../../../testkit/ports';
import { connectSrf, disconnectSrf, killAllSipp, SDP, SECRET, sipp, until } from './harness';
import { ok200 } from '../../../testkit/media-app/sipp-steps';

const IDLE_MS = 1500;

/** The phone's scenario: INVITE, ACK, then the platform's BYE (answered 200), then it stays connected. */
function phoneScenario(deadPort: number): string {
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="tcp caller waits for the BYE">
<send retrans="500"><![CDATA[
INVITE sip:[service]@[remote_ip]:[remote_port] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: sipp <sip:sipp@[local_ip]:${deadPort}>;tag=[pid]SIPpTag00[call_number]
To: <sip:[service]@[remote_ip]:[remote_port]>
Call-ID: [call_id]
CSeq: 1 INVITE
Contact: <sip:sipp@[local_ip]:${deadPort};transport=tcp>
Max-Forwards: 70
Content-Type: application/sdp
Content-Length: [len]

v=0
o=user1 53655765 2353687637 IN IP[local_ip_type] [local_ip]
s=-
c=IN IP[media_ip_type] [media_ip]
t=0 0
m=audio [media_port] RTP/AVP 0
a=rtpmap:0 PCMU/8000
]]></send>
<recv response="100" optional="true"/>
<recv response="200" rrs="true"/>
<send><![CDATA[
ACK sip:[service]@[remote_ip]:[remote_port] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: sipp <sip:sipp@[local_ip]:${deadPort}>;tag=[pid]SIPpTag00[call_number]
[last_To:]
Call-ID: [call_id]
CSeq: 1 ACK
Contact: <sip:sipp@[local_ip]:${deadPort};transport=tcp>
Max-Forwards: 70
Content-Length: 0

]]></send>
<recv request="BYE" timeout="20000"/>
${ok200}
<pause milliseconds="10000"/>
</scenario>`;
}

describe('sip-server: a silent call over TCP keeps its connection (issue 52)', function () {
  this.timeout(60_000);
  let stack: SipStack;
  let drachtio: RunningDrachtio;
  let srf: any;
  let dir: string;
  /** what arrived, with the connection it came on and when */
  const received: { line: string; connectionId?: string; at: number }[] = [];

  before(async () => {
    const sipPort = await freePort();
    const drachtioPort = await freePort();
    const capture = {
      received: (msg: SipMessage, _data: Buffer, src: SourceInfo) =>
        received.push({
          line: msg instanceof SipRequest ? msg.method : `${(msg as SipResponse).status} ${(msg.headers.get('CSeq') ?? '').split(/\s+/)[1]}`,
          connectionId: src.connectionId,
          at: Date.now(),
        }),
      sent: () => undefined,
    };
    stack = new SipStack(
      makeSipConfig({
        listen: { host: '127.0.0.1', port: sipPort, transports: ['udp', 'tcp'] },
        timers: { t1: 500, t2: 4000, t4: 5000 },
        limits: { tcpIdleTimeoutMs: IDLE_MS },
        drachtio: { host: '127.0.0.1', port: drachtioPort, secret: SECRET },
      }),
      { logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }), capture },
    );
    await stack.start();
    drachtio = await startDrachtio(stack, { host: '127.0.0.1', port: drachtioPort, secret: SECRET });
    srf = await connectSrf(drachtioPort);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idle-dialog-'));
  });
  after(async () => {
    killAllSipp();
    disconnectSrf(srf);
    await drachtio?.close();
    await stack?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('held 3x the idle timeout with no SIP traffic, the BYE goes over the call connection; once over, the connection is closed', async () => {
    let byeAnswered: boolean | undefined;
    srf.invite(async (req: any, res: any) => {
      const d = await srf.createUAS(req, res, { localSdp: SDP });
      d.once('ack', () => {
        // the call stays up, silent, for 3x the idle timeout; then the platform hangs up
        setTimeout(() => {
          d.destroy().then(
            () => (byeAnswered = true),
            () => (byeAnswered = false),
          );
        }, 3 * IDLE_MS);
      });
    });
    const file = path.join(dir, 'phone.xml');
    fs.writeFileSync(file, phoneScenario(await freePort()));
    const phone = sipp(['-sf', file, `127.0.0.1:${stack.listening[0].port}`, '-i', '127.0.0.1', '-p', String(await freePort()), '-t', 't1', '-m', '1', '-timeout', '40s'], {
      killAfterMs: 45_000,
    });
    await until(() => received.some((r) => r.line === '200 BYE'), 15_000, "the phone's 200 to the BYE").catch(async (err: Error) => {
      killAllSipp();
      const r = await phone.done;
      throw new Error(`${err.message}; received ${JSON.stringify(received)}\n${r.errors}`);
    });
    const invite = received.find((r) => r.line === 'INVITE')!;
    const ack = received.find((r) => r.line === 'ACK')!;
    const byeOk = received.find((r) => r.line === '200 BYE')!;
    expect(byeOk.at - ack.at, 'the call was silent for 3x the idle timeout').to.be.greaterThan(3 * IDLE_MS - 100);
    expect(
      received.map((r) => r.line).filter((l) => !l.startsWith('1')),
      'nothing else came in the meantime',
    ).to.deep.equal(['INVITE', 'ACK', '200 BYE']);
    expect(byeOk.connectionId, "the 200 to the BYE came on the INVITE's connection").to.equal(invite.connectionId);
    await until(() => byeAnswered !== undefined, 5000, "the application's BYE answered");
    expect(byeAnswered).to.equal(true);
    expect(drachtio.engine.stats().dialogs).to.equal(0);
    // the call is over: nothing holds the connection, the sweep closes it once idle (the phone is still up)
    expect(stack.connectionCount).to.equal(1);
    await until(() => stack.connectionCount === 0, IDLE_MS + IDLE_MS + 1000, 'the connection closed after the call');
    const closedAfter = Date.now() - byeOk.at;
    expect(closedAfter, 'closed once idle for the timeout').to.be.greaterThan(IDLE_MS - 100);
  });
});
