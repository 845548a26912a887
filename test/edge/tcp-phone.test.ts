// A phone registered over TCP (issue #32 item 3): sipp with `-t t1` (one TCP connection, no UDP
// socket) registers with digest over TCP, its Contact naming no `;transport=` and a port nothing
// listens on, as phones behind NAT or without a TCP listener do. Another extension (sipp over UDP)
// calls it; the platform's INVITE, the ACK for its 200 and the BYE must all come on the connection the
// phone registered from: over UDP or a new connection to the Contact they are lost (no UDP socket, the
// port refuses), and the phone, like real ones, sends media only once the ACK is in. Then the phone
// hangs up on that connection and the caller gets the platform's BYE.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { encodeG711 } from '../../core/audio/g711';
import { writeRtpPcap } from '../../testkit/ai/audio';
import { truncateAll } from '../../testkit/db';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { RtpSink, SIPP_SDP, answerBye, createExtension, killAllSipp, register, sipp, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { callerPhone } from '../../testkit/media-app/phones';

/** What sipp logged it received over one transport, e.g. the request lines seen over TCP. */
function received(messages: string, transport: 'TCP' | 'UDP'): string[] {
  const out: string[] = [];
  const re = new RegExp(`${transport} message received \\[\\d+\\] bytes :\\s*\\n\\s*([^\\r\\n]+)`, 'g');
  for (let m = re.exec(messages); m; m = re.exec(messages)) out.push(m[1]!);
  return out;
}

describe('edge: a phone registered over TCP (sipp -t t1), Contact without ;transport=', function () {
  this.timeout(90_000);
  let p: Platform;
  let dir: string;
  let pcap: string;

  before(async () => {
    await truncateAll();
    p = await startPlatform({ SIP_DIGEST_ALGORITHMS: 'MD5' });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tcp-phone-'));
    // three seconds of a 600 Hz tone, µ-law RTP: what the phone says once the ACK is in
    const pcm = new Int16Array(8000 * 3);
    for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 600 * i) / 8000));
    pcap = path.join(dir, 'tone.pcap');
    writeRtpPcap(pcap, Buffer.from(encodeG711('PCMU', pcm)));
  });
  after(async () => {
    killAllSipp();
    await p?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /**
   * The TCP phone: its main scenario registers (Contact port `deadPort`, no transport parameter) and
   * stays up `upMs`; the platform's INVITE is an out-of-call request for sipp (-oocsf), answered 200;
   * after the ACK it plays the tone, then waits for the platform's BYE or (`hangsUp`) sends its own.
   */
  const tcpPhone = (user: string, domain: string, deadPort: number, upMs: number, hangsUp: boolean) => {
    const contact = `<sip:${user}@[local_ip]:${deadPort}>`;
    const main = `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="tcp-phone">
${register(user, domain).replace(/Contact: <sip:[^>]*>/g, `Contact: ${contact}`)}
<pause milliseconds="${upMs}"/>
</scenario>`;
    const end = hangsUp
      ? `<pause milliseconds="2500"/>
<send retrans="500"><![CDATA[
BYE [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: [$me]
To: [$peer]
Call-ID: [call_id]
CSeq: 1 BYE
Max-Forwards: 70
Content-Length: 0

]]></send>
<recv response="200"/>`
      : answerBye(20_000);
    const ooc = `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="tcp-phone-answers">
<recv request="INVITE" rrs="true"/>
<send><![CDATA[
SIP/2.0 180 Ringing
[last_Via:]
[last_From:]
[last_To:];tag=[pid]tcpphone
[last_Call-ID:]
[last_CSeq:]
Contact: ${contact}
Content-Length: 0

]]></send>
<send retrans="500"><![CDATA[
SIP/2.0 200 OK
[last_Via:]
[last_From:]
[last_To:];tag=[pid]tcpphone
[last_Call-ID:]
[last_CSeq:]
Contact: ${contact}
Content-Type: application/sdp
Content-Length: [len]

${SIPP_SDP}
]]></send>
${
  hangsUp
    ? `<recv request="ACK" timeout="10000">
  <action>
    <ereg regexp=".*" search_in="hdr" header="From:" assign_to="peer"/>
    <ereg regexp=".*" search_in="hdr" header="To:" assign_to="me"/>
  </action>
</recv>`
    : '<recv request="ACK" timeout="10000"/>'
}
<nop><action><exec play_pcap_audio="${pcap}"/></action></nop>
${end}
</scenario>`;
    return { main, ooc };
  };

  const setUp = async (hangsUp: boolean) => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const { main, ooc } = tcpPhone(b.ext.username, b.domain, await freePort(), 14_000, hangsUp);
    const phone = sipp(
      main,
      [`127.0.0.1:${p.sipPort}`, '-t', 't1', '-i', '127.0.0.1', '-m', '1', '-oocsf', 'ooc.xml', '-au', b.ext.username, '-ap', b.password, '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
      { files: { 'ooc.xml': ooc }, killAfterMs: 40_000 },
    );
    const [binding] = await until(
      async () => {
        const bs = await p.app.registrar.bindings.get(`${b.ext.username}@${b.domain}`);
        return bs.length ? bs : null;
      },
      20_000,
      'the TCP phone registered',
    ).catch(async (err: Error) => {
      killAllSipp();
      const r = await phone.done;
      throw new Error(`${err.message}\n${r.stderr}\n${r.stdout.slice(-2000)}\n${r.errors}\n${r.messages}`);
    });
    expect(binding!.source.protocol).to.equal('tcp');
    const sink = await RtpSink.open();
    let caller = callerPhone(a.ext.username, a.domain, b.ext.extension, p.sipPort, { holdMs: hangsUp ? 0 : 4000 }).replaceAll('m=audio [media_port]', `m=audio ${sink.port}`);
    // when the phone hangs up, the caller waits for the platform's BYE instead of sending one
    if (hangsUp) caller = caller.replace(/<send retrans="500"><!\[CDATA\[\nBYE[\s\S]*<recv response="200"\/>\n<\/scenario>$/, `${answerBye(20_000)}\n</scenario>`);
    const call = sipp(caller, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', a.ext.username, '-ap', a.password], { killAfterMs: 40_000 });
    const [rc, rp] = await Promise.all([call.done, phone.done]);
    sink.close();
    return { rc, rp, sink };
  };

  /** The requests (INVITE, ACK, BYE) the phone got over its TCP connection, in order. */
  const requestsOverTcp = (rp: { messages: string }) =>
    received(rp.messages, 'TCP')
      .filter((l) => /^(INVITE|ACK|BYE) /.test(l))
      .map((l) => l.split(' ')[0]);

  it("the platform's INVITE, the ACK for the 200 and its BYE come over the registration connection; media flows", async () => {
    const { rc, rp, sink } = await setUp(false);
    expect(rc.code, `caller ${rc.errors}\n${rc.messages}`).to.equal(0);
    expect(requestsOverTcp(rp), `phone got over TCP:\n${rp.messages}`).to.deep.equal(['INVITE', 'ACK', 'BYE']);
    expect(received(rp.messages, 'UDP')).to.deep.equal([]);
    expect(rp.errors, rp.errors).to.not.match(/Aborting call|timeout/i);
    // the phone's tone reached the caller through the bridge: the call really came up
    expect(sink.voiced, `voiced packets at the caller (of ${sink.packets})`).to.be.greaterThan(50);
  });

  it('the phone hangs up over its TCP connection: 200 comes back on it and the caller gets BYE', async () => {
    const { rc, rp, sink } = await setUp(true);
    expect(rc.code, `caller ${rc.errors}\n${rc.messages}`).to.equal(0);
    expect(requestsOverTcp(rp), `phone got over TCP:\n${rp.messages}`).to.deep.equal(['INVITE', 'ACK']);
    expect(rp.messages, 'the BYE got its 200').to.match(/TCP message received[^\n]*\n\s*SIP\/2\.0 200 OK[\s\S]*CSeq: 1 BYE/);
    expect(received(rp.messages, 'UDP')).to.deep.equal([]);
    expect(sink.voiced, `voiced packets at the caller (of ${sink.packets})`).to.be.greaterThan(50);
  });
});
