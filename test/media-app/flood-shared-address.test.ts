// Flood protection with a real flooder behind a shared address (issue #22): a sipp on one port of
// 127.0.0.x floods OPTIONS while, on other ports of that same address, a registered phone keeps
// registering and receiving calls, and a trunk keeps getting its calls answered. The flooder's port
// is banned; the address is not. Bounded: each flood is a few thousand datagrams over a few seconds.
import { expect } from 'chai';
import dgram from 'node:dgram';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { testDb } from '../../testkit/db';
import { freePort } from '../../testkit/ports';
import { createExtension, killAllSipp, registerOnly, sipp, sleep, startPlatform, uacWaitsForBye, type Platform } from '../../testkit/media-app/harness';
import { extensionCall } from '../../testkit/media-app/phones';

const PHONES = '127.0.0.3';
const TRUNK = '127.0.0.4';

/** sipp sending `count` OPTIONS at `rate`/s from address:port, nothing awaited (a flood). */
function flood(address: string, port: number, target: number, rate: number, count: number) {
  const scenario = `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="flood">
<send><![CDATA[
OPTIONS sip:probe@127.0.0.1:${target} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:flood@[local_ip]>;tag=[call_number]
To: <sip:probe@127.0.0.1>
Call-ID: [call_id]
CSeq: 1 OPTIONS
Max-Forwards: 70
Content-Length: 0

]]></send>
</scenario>`;
  return sipp(scenario, [`127.0.0.1:${target}`, '-i', address, '-p', String(port), '-r', String(rate), '-m', String(count), '-timeout', '30s'], { killAfterMs: 30_000 });
}

/** One OPTIONS from address:port; true when anything came back within `ms`. */
async function answered(address: string, port: number, target: number, ms = 1000): Promise<boolean> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(port, address, r));
  try {
    const got = new Promise<boolean>((resolve) => {
      s.once('message', () => resolve(true));
      setTimeout(() => resolve(false), ms);
    });
    s.send(
      [
        `OPTIONS sip:probe@127.0.0.1:${target} SIP/2.0`,
        `Via: SIP/2.0/UDP ${address}:${port};branch=z9hG4bK${Date.now()};rport`,
        `From: <sip:p@${address}>;tag=1`,
        'To: <sip:probe@127.0.0.1>',
        `Call-ID: probe-${port}-${Date.now()}`,
        'CSeq: 1 OPTIONS',
        'Max-Forwards: 70',
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n'),
      target,
      '127.0.0.1',
    );
    return await got;
  } finally {
    s.close();
  }
}

describe('flood protection behind a shared address: phones and trunks stay online', function () {
  this.timeout(120_000);
  let p: Platform;

  before(async () => {
    p = await startPlatform(
      { EGRESS_ALLOW_CIDRS: '127.0.0.0/8', SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256' },
      {
        // 127.0.0.1 (the test's own callers) stays allow-listed; 127.0.0.3 and .4 are limited
        sip: { security: { rateLimit: { requestsPerSecond: 20, burst: 40, banThreshold: 40, banSeconds: 60, addressBanPorts: 4, addressRateFactor: 2 } } },
      },
    );
  });
  after(async () => {
    killAllSipp();
    await p?.close();
  });

  it("a registered phone on another port of the flooder's address re-registers and takes a call while the flooder is banned", async () => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const phonePort = await freePort();
    const server = `127.0.0.1:${p.sipPort}`;
    const reg = () => sipp(registerOnly(b.ext.username, b.domain), [server, '-i', PHONES, '-p', String(phonePort), '-m', '1', '-au', b.ext.username, '-ap', b.password]).done;
    expect((await reg()).code).to.equal(0);
    const flooderPort = await freePort();
    const flooding = flood(PHONES, flooderPort, p.sipPort, 500, 2500);
    await sleep(1500);
    // mid-flood: the phone refreshes its registration and answers a call from an allow-listed caller
    const again = await reg();
    expect(again.code, again.errors).to.equal(0);
    const [rc, re] = await extensionCall(a, b, server, p.sipPort, phonePort, { phoneIp: PHONES, killAfterMs: 30_000 });
    expect(rc.code, 'caller ' + rc.errors).to.equal(0);
    expect(re.code, 'callee ' + re.errors).to.equal(0);
    await flooding.done;
    // the flooder's port is banned; a quiet new port of the same address is served
    expect(await answered(PHONES, flooderPort, p.sipPort)).to.equal(false);
    expect(await answered(PHONES, await freePort(), p.sipPort)).to.equal(true);
  });

  it('a trunk keeps getting calls answered while another device at its address floods', async () => {
    const { customerId } = await createExtension();
    const db = await testDb();
    await trunksRepo(db).create(customerId, `fl${Date.now()}`, {
      name: 't',
      detail: '',
      auth_types: ['ip'],
      username: '',
      password: '',
      allowed_ips: [`${TRUNK}/32`],
    });
    const flow = await flowsRepo(db).create({
      customer_id: customerId,
      actions: parseActions([{ type: 'answer' }, { type: 'hangup' }]),
    } as never);
    const number = `+8991000${String(Date.now()).slice(-5)}`;
    await numbersRepo(db).create({ customer_id: customerId, number, type: 'virtual', call_flow_id: flow.id });
    const trunkPort = await freePort();
    const call = () =>
      sipp(uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, 'pbx', 40_000), [`127.0.0.1:${p.sipPort}`, '-i', TRUNK, '-p', String(trunkPort), '-m', '1'], { killAfterMs: 20_000 }).done;
    const first = await call();
    expect(first.code, first.errors + first.messages).to.equal(0);
    const flooderPort = await freePort();
    const flooding = flood(TRUNK, flooderPort, p.sipPort, 500, 3000);
    await sleep(1500);
    const started = Date.now();
    const second = await call();
    const took = Date.now() - started;
    expect(second.code, second.errors + second.messages).to.equal(0);
    // answered at once, while the flood still ran (not after it, by retransmission luck)
    expect(took).to.be.lessThan(3000);
    await flooding.done;
    expect(await answered(TRUNK, flooderPort, p.sipPort)).to.equal(false);
  });
});
