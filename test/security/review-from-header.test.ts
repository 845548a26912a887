/**
 * Review finding: an outgoing call's From header was built as `"<name with " removed>" <sip:<caller id>>`,
 * so a caller id (customer input: POST /calls source, a flow's call/connect source) holding `>`, `;` or `@`
 * could end the URI and add header parameters, and a display name ending in `\` escaped the closing quote.
 * Now the user part is escaped (RFC 3261 user characters only), a host that is not a plain host[:port] is
 * replaced by the platform's, and the display name is a proper quoted-string. A real callee on loopback
 * (a UDP socket) records the INVITE the platform sends.
 */
import dgram from 'node:dgram';
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { callsRepo } from '../../core/repos/calls';
import { flowsRepo } from '../../core/repos/flows';
import { repos } from '../../core/repos';
import { testDb } from '../../testkit/db';
import { freePort } from '../../testkit/ports';
import { startPlatform, until, type Platform } from '../../testkit/media-app/harness';

/** A callee that answers every INVITE 486 and keeps what it received. */
async function busyCallee(): Promise<{ port: number; invites: string[]; close(): void }> {
  const port = await freePort();
  const sock = dgram.createSocket('udp4');
  const invites: string[] = [];
  sock.on('message', (m, rinfo) => {
    const text = m.toString();
    if (!text.startsWith('INVITE ')) return;
    invites.push(text);
    const keep = ['Via', 'From', 'To', 'Call-ID', 'CSeq'].flatMap((h) => text.split('\r\n').filter((l) => l.toLowerCase().startsWith(`${h.toLowerCase()}:`)));
    const to = keep.map((l) => (/^To:/i.test(l) && !/;tag=/.test(l) ? `${l};tag=busy1` : l));
    sock.send(['SIP/2.0 486 Busy Here', ...to, 'Content-Length: 0', '', ''].join('\r\n'), rinfo.port, rinfo.address);
  });
  await new Promise<void>((r) => sock.bind(port, '127.0.0.1', () => r()));
  return { port, invites, close: () => sock.close() };
}

describe('security review: a caller id cannot add header parameters to the From header', function () {
  this.timeout(60_000);
  let p: Platform;

  before(async () => {
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }); // the callee listens on loopback: opted in
  });
  after(async () => p?.close());

  it('escapes the user part, drops a host that is not a host, and quotes the display name', async () => {
    const db = await testDb();
    const callee = await busyCallee();
    try {
      const cid = (await repos(db).customers.create({ email: `from${process.pid}@example.test`, status: 'active', name: 'f' })).id;
      const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'hangup' }]) } as never);
      const row = await callsRepo(db).create({
        customer_id: cid,
        flow_id: flow.id,
        source: { type: 'sip', target: '1>;role=admin@evil.example>;x=y', target_name: 'Mallory\\' },
        destination: { type: 'sip', target: `callee@127.0.0.1:${callee.port}` },
        direction: 'outgoing',
        status: 'dialing',
      });
      await p.app.factory.originate([row.id]);
      await until(() => (callee.invites.length ? true : null), 10_000, 'the INVITE');
      const from = callee.invites[0]!.split('\r\n').find((l) => /^From:/i.test(l))!;
      // one name-addr, one tag parameter and nothing else after the URI
      expect(from).to.match(/^From: "Mallory\\\\" <sip:1%3E;role=admin@sip\.test>;tag=[^;>]+$/);
    } finally {
      callee.close();
    }
  });
});
