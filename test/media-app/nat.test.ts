// NAT: a phone that believes it has a private address. NETWORK SAFETY: the "private" address here is
// 127.0.0.99, an unbound loopback address, not 192.168.x: if Contact fixing or symmetric RTP were
// missing, the platform would send to the address the phone wrote, and packets to 127.0.0.99 stay on
// this machine and are simply lost (the test then fails), where 192.168.x would leave it.
import { usePlatform } from '../../testkit/media-app/platform-hooks';
import { expect } from 'chai';
import dgram from 'node:dgram';
import { CallSession } from '../../media-app/call/session';
import { talkingNumber } from './talking-number';
import { ack } from '../../testkit/media-app/sipp-steps';
import { freePort } from '../../testkit/ports';
import { answerBye, createExtension, sipp, until, type Platform } from '../../testkit/media-app/harness';
import { extensionCall } from '../../testkit/media-app/phones';

const PRIVATE = '127.0.0.99'; // what the phone thinks its address is (see above)
const ADVERTISED = '127.0.0.98'; // RTP_ADVERTISED_HOST: the address the platform's SDP names, distinct from the bound one

function registerPrivate(user: string, domain: string): string {
  const req = (cseq: number, auth: boolean) => `<send retrans="500"><![CDATA[
REGISTER sip:${domain} SIP/2.0
Via: SIP/2.0/[transport] ${PRIVATE}:5999;branch=[branch];rport
From: <sip:${user}@${domain}>;tag=r[call_number]
To: <sip:${user}@${domain}>
Call-ID: [call_id]
CSeq: ${cseq} REGISTER
Contact: <sip:${user}@${PRIVATE}:5999>
Expires: 3600
Max-Forwards: 70
${auth ? '[authentication]\n' : ''}Content-Length: 0

]]></send>`;
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="register-behind-nat">
${req(1, false)}
<recv response="401" auth="true"/>
${req(2, true)}
<recv response="200"/>
</scenario>`;
}

describe('media-app behind NAT', function () {
  this.timeout(90_000);
  let p: Platform;

  usePlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', RTP_BIND_HOST: '127.0.0.1', RTP_ADVERTISED_HOST: ADVERTISED }, (x) => (p = x));

  it('rport/received: the 401 and 200 reach the phone at its real port though its Via names a private address', async () => {
    const { ext, domain, password } = await createExtension();
    const r = await sipp(registerPrivate(ext.username, domain), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', ext.username, '-ap', password]).done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(r.messages).to.match(/received=127\.0\.0\.1;?.*rport=\d+|rport=\d+;?.*received=127\.0\.0\.1/);
  });

  it('Contact fixing: the binding keeps the private Contact, the call goes to the address:port the REGISTER came from', async () => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const sipServer = `127.0.0.1:${p.sipPort}`;
    const phonePort = await freePort();
    const reg = await sipp(registerPrivate(b.ext.username, b.domain), [sipServer, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', b.ext.username, '-ap', b.password]).done;
    expect(reg.code, reg.errors + reg.messages).to.equal(0);
    const [binding] = await p.app.registrar.bindings.get(`${b.ext.username}@${b.domain}`);
    expect(binding!.contact).to.equal(`sip:${b.ext.username}@${PRIVATE}:5999`);
    expect(binding!.source).to.deep.include({ address: '127.0.0.1', port: phonePort });
    const [rc, re] = await extensionCall(a, b, sipServer, p.sipPort, phonePort);
    expect(re.code, 'callee ' + re.errors + re.messages).to.equal(0);
    expect(rc.code, 'caller ' + rc.errors + rc.messages).to.equal(0);
    // the INVITE kept the phone's own Contact as its Request-URI
    expect(re.messages).to.contain(`INVITE sip:${b.ext.username}@${PRIVATE}:5999`);
  });

  it("symmetric RTP and the advertised media address: speech goes where the caller's RTP comes from, not to its private c=", async () => {
    await talkingNumber('+899100000888', 'Hello. Thank you for calling. This is a test of the platform, long enough to be heard.');

    // the phone's real RTP socket; its SDP names PRIVATE:40000 instead
    const phone = dgram.createSocket('udp4');
    await new Promise<void>((r) => phone.bind(0, '127.0.0.1', r));
    let heard = 0;
    phone.on('message', (m) => (heard += m.length >= 12 && (m[1]! & 0x7f) === 0 ? 1 : 0));
    const scenario = `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="nat-caller">
<send retrans="500"><![CDATA[
INVITE sip:+899100000888@127.0.0.1:${p.sipPort} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch];rport
From: <sip:+15551239999@[local_ip]:[local_port]>;tag=[call_number]
To: <sip:+899100000888@127.0.0.1:${p.sipPort}>
Call-ID: [call_id]
CSeq: 1 INVITE
Contact: <sip:+15551239999@[local_ip]:[local_port]>
Max-Forwards: 70
Content-Type: application/sdp
Content-Length: [len]

v=0
o=- 1 1 IN IP4 ${PRIVATE}
s=-
c=IN IP4 ${PRIVATE}
t=0 0
m=audio 40000 RTP/AVP 0
a=rtpmap:0 PCMU/8000
a=sendrecv
]]></send>
<recv response="100" optional="true"/>
<recv response="180" optional="true"/>
<recv response="183" optional="true"/>
<recv response="200" rrs="true">
  <action><ereg regexp="c=IN IP4 ${ADVERTISED.replace(/\./g, '\\.')}" search_in="body" check_it="true" assign_to="adv"/></action>
</recv>
${ack(1)}
${answerBye(20000)}
<Reference variables="adv"/>
</scenario>`;
    const earlier = new Set(p.app.calls.all().map((c) => c.id)); // the previous test's calls may still be closing
    const run = sipp(scenario, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 40_000 }).done;
    try {
      // the platform's RTP port (bound on 127.0.0.1, advertised as ADVERTISED): the phone's packets go there
      const port = await until(
        () => {
          const s = p.app.calls.all().find((c): c is CallSession => !earlier.has(c.id) && c instanceof CallSession && c.endpoint !== null && c.status === 'progressing');
          return s?.endpoint?.local.port;
        },
        10_000,
        'answered call',
      );
      let seq = 0;
      const packet = () => {
        const b = Buffer.alloc(172, 0xff);
        b[0] = 0x80;
        b[1] = 0;
        b.writeUInt16BE(seq++ & 0xffff, 2);
        b.writeUInt32BE(seq * 160, 4);
        b.writeUInt32BE(0x12345678, 8);
        return b;
      };
      const sender = setInterval(() => phone.send(packet(), port, '127.0.0.1'), 20);
      const r = await run;
      clearInterval(sender);
      expect(r.code, r.errors + r.messages).to.equal(0);
      expect(heard, `RTP packets back at the real source (${seq} sent to ${port})`).to.be.greaterThan(50);
    } finally {
      phone.close();
    }
  });
});
