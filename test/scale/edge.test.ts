// Two nodes behind the shipped Kamailio edge (deploy/kamailio/kamailio.cfg): calls spread over both
// nodes, the nodes judge trunks by the caller's real address (X-Openvoice-Source from a trusted
// edge only), and a phone registered through the edge (Path) is reached from a flow on either node.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { truncateAll } from '../../testkit/db';
import { freePort } from '../../testkit/ports';
import { createExtension, killAllSipp, RtpSink, sipp, uacWaitsForBye, until } from '../../testkit/media-app/harness';
import { Cluster } from '../../testkit/scale/cluster';
import { numberWithFlow, TALK } from '../../testkit/scale/fixtures';
import { loopbackTrunk } from '../../testkit/trunks';
import { callEdgePhone } from '../../testkit/scale/edge-phone';
import { registerPhone } from '../../testkit/media-app/phones';

describe('scale: two nodes behind the Kamailio edge', function () {
  this.timeout(180_000);
  let c: Cluster;

  before(async () => {
    await truncateAll();
    c = await Cluster.start();
  });
  after(async () => {
    killAllSipp();
    await c?.close();
  });

  it('40 calls from sipp through the edge are spread over both nodes, all answered, every flow runs to its end', async () => {
    const { customerId, number } = await numberWithFlow(c.db, '127.0.0.1/32', TALK);
    // one sink for the 40 calls: the speech of all of them counts
    const sink = await RtpSink.open({ many: true });
    try {
      const r = await sipp(
        uacWaitsForBye(`${number}@127.0.0.1:${c.edge.port}`, 'pbx', sink.port, { byeTimeoutMs: 30_000 }),
        [`127.0.0.1:${c.edge.port}`, '-i', '127.0.0.1', '-m', '40', '-r', '10', '-l', '40', '-timeout', '60s'],
        { killAfterMs: 70_000 },
      ).done;
      expect(r.code, r.errors.slice(-3000) + c.edge.log.slice(-2000)).to.equal(0);
      expect(sink.voiced, 'speech heard').to.be.greaterThan(25);
    } finally {
      sink.close();
    }
    const rows = await until(
      async () => {
        const rs = await c.db('calls').where({ customer_id: customerId }).select('id', 'status', 'node_id', 'tm_progressing');
        return rs.length === 40 && rs.every((x) => x.status === 'hangup') ? rs : null;
      },
      20_000,
      '40 calls ended',
    );
    expect(
      rows.every((x) => x.tm_progressing),
      'all answered',
    ).to.equal(true);
    const perNode = c.nodes.map((n) => rows.filter((x) => x.node_id === n.id).length);
    expect(
      perNode.every((k) => k >= 10),
      `calls per node ${perNode}`,
    ).to.equal(true);
    // the flow's end is written just after the call's hangup
    let statuses: string[] = [];
    await until(
      async () => {
        statuses = (
          (await c
            .db('activeflows')
            .whereIn(
              'reference_id',
              rows.map((x) => x.id),
            )
            .pluck('status')) as string[]
        ).sort();
        return statuses.length === 40 && statuses.every((s) => s === 'ended');
      },
      10_000,
      'every flow ended',
    ).catch(() => undefined);
    expect(statuses, 'activeflow statuses').to.deep.equal(Array(40).fill('ended'));
  });

  it("a trunk is recognised by the caller's real address behind the edge; a claimed address is ignored", async () => {
    // the trunk allows 127.0.0.2 only; the edge itself is 127.0.0.1 (SIP_TRUSTED_PROXIES)
    const { customerId, number } = await numberWithFlow(c.db, '127.0.0.2/32', TALK);
    const sink = await RtpSink.open();
    try {
      const ok = await sipp(uacWaitsForBye(`${number}@127.0.0.1:${c.edge.port}`, 'pbx', sink.port), [`127.0.0.1:${c.edge.port}`, '-i', '127.0.0.2', '-m', '1'], { killAfterMs: 40_000 }).done;
      expect(ok.code, ok.errors + ok.messages.slice(-3000)).to.equal(0);
      const spoof = (s: string) => s.replace('Max-Forwards: 70\n', 'Max-Forwards: 70\nX-Openvoice-Source: udp:127.0.0.2:5070\n');
      // from 127.0.0.3 through the edge, claiming 127.0.0.2: the edge replaces the claim
      const viaEdge = await sipp(spoof(uacWaitsForBye(`${number}@127.0.0.1:${c.edge.port}`, 'pbx', sink.port, { expectStatus: 403 })), [`127.0.0.1:${c.edge.port}`, '-i', '127.0.0.3', '-m', '1']).done;
      expect(viaEdge.code, viaEdge.errors + viaEdge.messages.slice(-3000)).to.equal(0);
      // straight to a node from 127.0.0.3 (not a trusted proxy) with the claim: ignored
      const direct = await sipp(spoof(uacWaitsForBye(`${number}@127.0.0.1:${c.nodes[0]!.sipPort}`, 'pbx', sink.port, { expectStatus: 403 })), [
        `127.0.0.1:${c.nodes[0]!.sipPort}`,
        '-i',
        '127.0.0.3',
        '-m',
        '1',
      ]).done;
      expect(direct.code, direct.errors + direct.messages.slice(-3000)).to.equal(0);
    } finally {
      sink.close();
    }
    expect(await c.db('calls').where({ customer_id: customerId })).to.have.length(1);
  });

  it('a phone registered through the edge (Path) is called from a flow on either node, through the edge', async () => {
    const phone = await createExtension();
    const phonePort = await freePort('127.0.0.4');
    const reg = await registerPhone(`127.0.0.1:${c.edge.port}`, phone, '127.0.0.4', phonePort);
    expect(reg.code, reg.errors + reg.messages.slice(-3000)).to.equal(0);
    expect(reg.messages, 'the 200 carries the Path back').to.match(/SIP\/2\.0 200[\s\S]*Path: <sip:127\.0\.0\.1:\d+;lr;received=/i);
    const [binding] = await until(
      async () => {
        const raw = await c.redis.hgetall(`${c.prefix}reg:${phone.ext.username}@${phone.domain}`.toLowerCase());
        return Object.values(raw).map((v) => JSON.parse(v));
      },
      5000,
      'binding',
    );
    expect(binding.source).to.include({ address: '127.0.0.4', port: phonePort });
    expect(binding.path[0]).to.match(new RegExp(`^sip:127\\.0\\.0\\.1:${c.edge.port};lr;received=`));

    const { number } = await numberWithFlow(c.db, '127.0.0.1/32', [{ type: 'connect', option: { destinations: [{ type: 'extension', target: phone.ext.extension }] } }], phone.customerId).then(
      async (x) => {
        await loopbackTrunk(c.db, phone.customerId, `ph${randomBytes(4).toString('hex')}`);
        return x;
      },
    );
    for (const node of c.nodes) {
      const sink = await RtpSink.open();
      try {
        const { caller, callee } = await callEdgePhone(node.sipPort, number, phone.ext.username, phonePort, sink.port);
        const [rc, re] = await Promise.all([caller.done, callee.done]);
        expect(rc.code, 'caller ' + rc.messages.slice(-1500) + '\nPHONE ' + re.messages.slice(-3000) + '\nEDGE ' + c.edge.log.slice(-3000) + '\nNODE ' + node.out().slice(-3000)).to.equal(0);
        expect(re.code, 'phone ' + re.errors + re.messages.slice(-3000)).to.equal(0);
        // the INVITE reached the phone through the edge (its Record-Route), not straight from the node
        expect(re.messages).to.match(new RegExp(`Record-Route: <sip:127\\.0\\.0\\.1:${c.edge.port};`));
      } finally {
        sink.close();
      }
      const legs = await until(
        async () => {
          const rs = await c.db('calls').where({ customer_id: phone.customerId, node_id: node.id }).select('direction', 'status');
          return rs.length === 2 && rs.every((x) => x.status === 'hangup') ? rs : null;
        },
        10_000,
        `both legs on ${node.id} ended`,
      );
      expect(legs.map((l) => l.direction).sort()).to.deep.equal(['incoming', 'outgoing']);
    }
  });
});
