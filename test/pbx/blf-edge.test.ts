// The busy lamp across nodes behind the shipped Kamailio edge (testkit/scale/cluster.ts: two
// sip-server + media-app nodes, media-app as child processes, one Redis prefix): a watcher subscribes
// through the edge (its subscription lives on whichever node the edge picked), a phone registered
// through the edge is called once on each node, and the watcher's lamp follows both calls.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { truncateAll } from '../../testkit/db';
import { freePort } from '../../testkit/ports';
import { createExtension, killAllSipp, RtpSink, until } from '../../testkit/media-app/harness';
import { Cluster } from '../../testkit/scale/cluster';
import { numberWithFlow } from '../../testkit/scale/fixtures';
import { Subscriber, type SipMessage } from '../../testkit/pbx/subscriber';
import { callEdgePhone } from '../../testkit/scale/edge-phone';
import { loopbackTrunk } from '../../testkit/trunks';
import { registerPhone } from '../../testkit/media-app/phones';

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
    const reg = await registerPhone(`127.0.0.1:${c.edge.port}`, phone, '127.0.0.4', phonePort);
    expect(reg.code, reg.errors + reg.messages.slice(-3000)).to.equal(0);

    sub = await Subscriber.open(c.edge.port);
    const s = await sub.subscribe({ user: watcher.ext.username, domain: watcher.domain, password: watcher.password, resource: phone.ext.extension, event: 'dialog', expires: 600 });
    expect(s.response.status, s.response.raw).to.be.oneOf([200, 202]);
    expect(s.response.get('record-route')).to.match(new RegExp(`<sip:127\\.0\\.0\\.1:${c.edge.port};`));
    const first = await s.waitFor();
    expect(dialogs(first).size).to.equal(0);

    const { number } = await numberWithFlow(c.db, '127.0.0.1/32', [{ type: 'connect', option: { destinations: [{ type: 'extension', target: phone.ext.extension }] } }], phone.customerId);
    await loopbackTrunk(c.db, phone.customerId, `bl${randomBytes(4).toString('hex')}`);
    for (const node of c.nodes) {
      const sink = await RtpSink.open();
      try {
        const { caller, callee } = await callEdgePhone(node.sipPort, number, phone.ext.username, phonePort, sink.port);
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
