/**
 * Review finding: a trunk authenticated by address was chosen by the INVITE's source address alone
 * (most specific range wins, then the oldest trunk), and any customer may put any address in
 * allowed_ips. Customer B could therefore claim customer A's PBX address with a narrower range (A uses
 * 127.0.0.0/24, B adds 127.0.0.7/32), and every INVITE from A's PBX became B's call: B's extensions
 * answered A's calls, B's routes and balance carried them.
 *
 * Now (media-app/inbound/source.ts): a request to `{domain}.trunk.{SIP_DOMAIN}` belongs to that trunk
 * only; a request naming no trunk domain is taken by address only when every claimant is one
 * customer, or the dialled number is one claimant's; otherwise 403. These tests send real INVITEs from
 * A's PBX address (127.0.0.7) to a real platform.
 */
import dgram from 'node:dgram';
import { expect } from 'chai';
import { trunksRepo } from '../../core/repos/trunks';
import { repos } from '../../core/repos';
import { testDb } from '../../testkit/db';
import { freePort } from '../../testkit/ports';
import { createExtension, killAllSipp, SIP_DOMAIN, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { numberWithFlow } from './calls';

const PBX = '127.0.0.7';

/** Sends one INVITE from PBX to the platform and resolves the first final status (no SDP: a refusal comes before any media). */
async function invite(p: Platform, ruri: string): Promise<number> {
  const port = await freePort(PBX);
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((r) => sock.bind(port, PBX, () => r()));
  const callId = `trunk-ips-${Date.now()}-${Math.random().toString(16).slice(2)}`;
  const msg = [
    `INVITE ${ruri} SIP/2.0`,
    `Via: SIP/2.0/UDP ${PBX}:${port};branch=z9hG4bK${callId};rport`,
    'Max-Forwards: 70',
    `From: <sip:+15550001111@${PBX}>;tag=a1`,
    `To: <${ruri}>`,
    `Call-ID: ${callId}`,
    'CSeq: 1 INVITE',
    `Contact: <sip:pbx@${PBX}:${port}>`,
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
  try {
    return await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no final answer to ${ruri}`)), 10_000);
      sock.on('message', (m) => {
        const status = Number(/^SIP\/2\.0 (\d{3})/.exec(m.toString())?.[1]);
        if (status >= 200) {
          clearTimeout(timer);
          // a final answer to an INVITE is acknowledged (non-2xx: ACK in the same transaction)
          if (status >= 300) {
            const ack = msg
              .replace(/^INVITE/, 'ACK')
              .replace('CSeq: 1 INVITE', 'CSeq: 1 ACK')
              .replace(/To: <[^>]*>/, (/^To: .*$/m.exec(m.toString())?.[0] ?? '').replace(/^To: /, 'To: '));
            sock.send(ack, p.sipPort, '127.0.0.1');
          }
          resolve(status);
        }
      });
      sock.send(msg, p.sipPort, '127.0.0.1');
    });
  } finally {
    sock.close();
  }
}

describe("security review: a trunk cannot take another customer's PBX address", function () {
  this.timeout(60_000);
  let p: Platform;
  let a: string;
  let b: string;

  before(async () => {
    p = await startPlatform();
    const db = await testDb();
    a = (await repos(db).customers.create({ email: `tra${process.pid}@example.test`, status: 'active', name: 'a' })).id;
    b = (await repos(db).customers.create({ email: `trb${process.pid}@example.test`, status: 'active', name: 'b' })).id;
    await trunksRepo(db).create(a, `pbxa${process.pid}`, { name: 'a', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.0/24'] });
    // B claims A's PBX address with a narrower range, after A
    await trunksRepo(db).create(b, `pbxb${process.pid}`, { name: 'b', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: [`${PBX}/32`] });
    await createExtension(b, { extension: '100' });
    await numberWithFlow(a, '+899100000771', [{ type: 'answer' }, { type: 'hangup' }]);
  });
  after(async () => {
    killAllSipp();
    await p?.close();
  });

  it("a call from A's PBX to A's own number is A's call, whatever B claims", async () => {
    const db = await testDb();
    const status = await invite(p, `sip:+899100000771@127.0.0.1:${p.sipPort}`);
    expect(status).to.not.equal(403);
    const row = await until(async () => db('calls').whereRaw("destination->>'target' = ?", ['+899100000771']).first(), 5000, 'the call row');
    expect(row.customer_id).to.equal(a);
    expect(await db('calls').where({ customer_id: b })).to.have.length(0);
  });

  it('a call naming no trunk domain from an address two customers claim is refused (403), never carried as B', async () => {
    const db = await testDb();
    expect(await invite(p, `sip:100@127.0.0.1:${p.sipPort}`)).to.equal(403);
    expect(await invite(p, `sip:+15557770000@127.0.0.1:${p.sipPort}`)).to.equal(403);
    expect(await db('calls').where({ customer_id: b })).to.have.length(0);
  });

  it("a call to A's trunk domain is A's: B's extension 100 is never reached", async () => {
    const db = await testDb();
    const status = await invite(p, `sip:100@pbxa${process.pid}.trunk.${SIP_DOMAIN}`);
    expect(status).to.not.equal(403);
    expect(await db('calls').where({ customer_id: b })).to.have.length(0);
  });
});
