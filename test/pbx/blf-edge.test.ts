// The busy lamp across nodes behind the shipped Kamailio edge (testkit/scale/cluster.ts: two
// sip-server + media-app nodes, media-app as child processes, one Redis prefix): a watcher subscribes
// through the edge (its subscription lives on whichever node the edge picked), a phone registered
// through the edge is called once on each node, and the watcher's lamp follows both calls.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { trunksRepo } from '../../core/repos/trunks';
import { truncateAll } from '../../testkit/db';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { answerBye, createExtension, killAllSipp, registerOnly, RtpSink, sipp, uacWaitsForBye, until, SIPP_SDP } from '../../testkit/media-app/harness';
import { Cluster } from '../../testkit/scale/cluster';
import { numberWithFlow } from '../../testkit/scale/fixtures';
import { Subscriber, type SipMessage } from '../../testkit/pbx/subscriber';

/** A phone answering one call at once on its registration port, in dialog through the edge. */
function phoneUas(user: string): string {
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="phone">
<recv request="INVITE" timeout="20000" rrs="true"/>
<send><![CDATA[
SIP/2.0 200 OK
[last_Via:]
[last_From:]
[last_To:];tag=[pid]ph[call_number]
[last_Call-ID:]
[last_CSeq:]
[last_Record-Route:]
Contact: <sip:${user}@[local_ip]:[local_port]>
Content-Type: application/sdp
Content-Length: [len]

${SIPP_SDP}
]]></send>
<recv request="ACK"/>
${answerBye(20_000)}
</scenario>`;
}

/** The dialogs of a dialog-info NOTIFY: id → state. */
const dialogs = (n: SipMessage): Map<string, string> => new Map([...n.body.matchAll(/<dialog id="([^"]+)"[\s\S]*?<state>([a-z]+)<\/state>/g)].map((m) => [m[1]!, m[2]!]));

describe('BLF across two nodes behind the Kamailio edge', function () {
  this.timeout(180_000);
  let c: Cluster;
  let sub: Subscriber | null = null;

  before(async () => {
    await truncateAll();
    c = await Cluster.start({ nodes: 2 });
  });
  after(async () => {
    killAllSipp();
    sub?.close();
    await c?.close();
  });

  it("a subscription held on one node lights for the phone's calls on both nodes", async () => {
    const phone = await createExtension();
    const watcher = await createExtension(phone.customerId);
    const phonePort = await freePort('127.0.0.4');
    const reg = await sipp(registerOnly(phone.ext.username, phone.domain), [
      `127.0.0.1:${c.edge.port}`,
      '-i',
      '127.0.0.4',
      '-p',
      String(phonePort),
      '-m',
      '1',
      '-au',
      phone.ext.username,
      '-ap',
      phone.password,
    ]).done;
    expect(reg.code, reg.errors + reg.messages.slice(-3000)).to.equal(0);

    sub = await Subscriber.open(c.edge.port);
    const s = await sub.subscribe({ user: watcher.ext.username, domain: watcher.domain, password: watcher.password, resource: phone.ext.extension, event: 'dialog', expires: 600 });
    expect(s.response.status, s.response.raw).to.be.oneOf([200, 202]);
    expect(s.response.get('record-route')).to.match(new RegExp(`<sip:127\\.0\\.0\\.1:${c.edge.port};`));
    const first = await s.waitFor();
    expect(dialogs(first).size).to.equal(0);

    const { number } = await numberWithFlow(c.db, '127.0.0.1/32', [{ type: 'connect', option: { destinations: [{ type: 'extension', target: phone.ext.extension }] } }], phone.customerId);
    await trunksRepo(c.db).create(phone.customerId, `bl${randomBytes(4).toString('hex')}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    for (const node of c.nodes) {
      const callee = sipp(phoneUas(phone.ext.username), ['-i', '127.0.0.4', '-p', String(phonePort), '-m', '1', '-mi', '127.0.0.4', '-mp', String(await sippMediaPort('127.0.0.4'))], {
        killAfterMs: 40_000,
      });
      await new Promise((r) => setTimeout(r, 300));
      const sink = await RtpSink.open();
      try {
        const caller = sipp(uacWaitsForBye(`${number}@127.0.0.1:${node.sipPort}`, 'pbx', sink.port, { hangUpAfterMs: 1500 }), [`127.0.0.1:${node.sipPort}`, '-i', '127.0.0.1', '-m', '1'], {
          killAfterMs: 40_000,
        });
        // the phone's leg on this node: confirmed while up, then terminated
        const leg = await until(
          async () => (await c.db('calls').where({ customer_id: phone.customerId, node_id: node.id, direction: 'outgoing' }).first('id'))?.id as string | undefined,
          15_000,
          `the phone's leg on ${node.id}`,
        );
        const seen = () => `${node.id} leg ${leg}: ${JSON.stringify(s.notifies.map((n) => n.body))}\nNODES ${c.nodes.map((x) => x.out().slice(-1500)).join('\n----\n')}`;
        await s.waitFor((n) => dialogs(n).get(leg) === 'confirmed', 15_000).catch((e: Error) => Promise.reject(new Error(`${e.message}: ${seen()}`)));
        await s.waitFor((n) => dialogs(n).get(leg) === 'terminated', 15_000).catch((e: Error) => Promise.reject(new Error(`${e.message}: ${seen()}`)));
        const [rc, re] = await Promise.all([caller.done, callee.done]);
        expect(rc.code, 'caller ' + rc.messages.slice(-1500)).to.equal(0);
        expect(re.code, 'phone ' + re.errors).to.equal(0);
      } finally {
        sink.close();
      }
    }
    // NOTIFYs reached the watcher through the edge, their versions counting up without a gap
    const versions = s.notifies.map((n) => Number(/version="(\d+)"/.exec(n.body)?.[1]));
    expect(versions).to.deep.equal(versions.map((_, i) => i));
  });
});
