// A phone registered over TCP stays reachable past SIP_TCP_IDLE_TIMEOUT_MS (issue 52). sipp with
// `-t t1` (one TCP connection, no UDP socket) registers with digest, its Contact naming a port nothing
// listens on (a phone behind NAT): the platform can reach it only over the connection it registered
// from. With the idle timeout at 1.5 s, the phone stays silent 3x that long, then another extension
// (sipp over UDP) calls it; the call stays silent 3x the timeout, the caller hangs up, and the
// platform's BYE must reach the phone over that same connection. The connection never drops meanwhile.
import { expect } from 'chai';
import { truncateAll } from '../../testkit/db';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { SIPP_SDP, answerBye, createExtension, killAllSipp, register, sipp, sleep, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { callerPhone } from '../../testkit/media-app/phones';

const IDLE_MS = 1500;

/** The request lines sipp logged it received over TCP. */
function receivedOverTcp(messages: string): string[] {
  const out: string[] = [];
  const re = /TCP message received \[\d+\] bytes :\s*\n\s*([^\r\n]+)/g;
  for (let m = re.exec(messages); m; m = re.exec(messages)) out.push(m[1]!);
  return out;
}

describe('edge: a TCP phone idle longer than SIP_TCP_IDLE_TIMEOUT_MS is still reached over its connection', function () {
  this.timeout(90_000);
  let p: Platform;

  before(async () => {
    await truncateAll();
    p = await startPlatform({ SIP_DIGEST_ALGORITHMS: 'MD5' }, { sip: { limits: { tcpIdleTimeoutMs: IDLE_MS } } });
  });
  after(async () => {
    killAllSipp();
    await p?.close();
  });

  it('idle 3x the timeout, it gets the call; silent 3x the timeout, it gets the BYE, all on its registration connection', async () => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const contact = `<sip:${b.ext.username}@[local_ip]:${await freePort()}>`;
    const main = `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="tcp-phone">
${register(b.ext.username, b.domain).replace(/Contact: <sip:[^>]*>/g, `Contact: ${contact}`)}
<pause milliseconds="25000"/>
</scenario>`;
    const ooc = `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="tcp-phone-answers">
<recv request="INVITE" rrs="true"/>
<send retrans="500"><![CDATA[
SIP/2.0 200 OK
[last_Via:]
[last_From:]
[last_To:];tag=[pid]tcpidle
[last_Call-ID:]
[last_CSeq:]
Contact: ${contact}
Content-Type: application/sdp
Content-Length: [len]

${SIPP_SDP}
]]></send>
<recv request="ACK" timeout="10000"/>
${answerBye(20_000)}
</scenario>`;
    const phone = sipp(
      main,
      [`127.0.0.1:${p.sipPort}`, '-t', 't1', '-i', '127.0.0.1', '-m', '1', '-oocsf', 'ooc.xml', '-au', b.ext.username, '-ap', b.password, '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
      { files: { 'ooc.xml': ooc }, killAfterMs: 45_000 },
    );
    await until(async () => (await p.app.registrar.bindings.get(`${b.ext.username}@${b.domain}`)).length > 0, 20_000, 'the TCP phone registered').catch(async (err: Error) => {
      killAllSipp();
      const r = await phone.done;
      throw new Error(`${err.message}\n${r.stderr}\n${r.errors}`);
    });
    // the phone's connection, sampled until its call is over (not after: killing the phone closes it)
    let fewest = p.stack.connectionCount;
    const sampler = setInterval(() => (fewest = Math.min(fewest, p.stack.connectionCount)), 50);
    try {
      await sleep(3 * IDLE_MS);
      const caller = callerPhone(a.ext.username, a.domain, b.ext.extension, p.sipPort, { holdMs: 3 * IDLE_MS });
      const rc = await sipp(caller, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', a.ext.username, '-ap', a.password], { killAfterMs: 40_000 }).done;
      expect(rc.code, `caller ${rc.errors}\n${rc.messages}`).to.equal(0);
      // the platform's BYE to the phone answered: no dialog left
      await until(() => p.drachtio.engine.stats().dialogs === 0, 10_000, "the phone's dialog ended").catch(() => undefined);
    } finally {
      clearInterval(sampler);
    }
    const open = p.stack.connectionCount;
    killAllSipp();
    const rp = await phone.done;
    const got = receivedOverTcp(rp.messages)
      .filter((l) => /^(INVITE|ACK|BYE) /.test(l))
      .map((l) => l.split(' ')[0]);
    expect(got, `phone got over TCP:\n${rp.messages}\n${rp.errors}`).to.deep.equal(['INVITE', 'ACK', 'BYE']);
    expect(rp.messages, 'the phone answered the BYE').to.match(/TCP message sent[^\n]*\n\s*SIP\/2\.0 200 OK[\s\S]*CSeq: \d+ BYE/);
    expect([fewest, open], "the phone's connection stayed open throughout (fewest while sampled, then at the end)").to.deep.equal([1, 1]);
  });
});
