// Call pickup across the nodes of a cluster (issue 37; docs/pbx.md "Pickup", "PBX legs between
// nodes"), with sipp phones whose audio is a tone of their own: A calls B through node 0, B's phone
// rings; C, registered and dialling through node 1, picks it up with *8 (same group) or **B: node 1
// asks node 0 through a signed PBX leg, node 0 answers A's call toward it and cancels B's phone; A
// and C hear each other. Two pickers at once: the first wins, the other is refused 404. Nothing
// ringing anywhere: 404 before any call exists.
import { expect } from 'chai';
import { sleep } from '../../testkit/media-app/harness';
import { Cluster, type ClusterNode } from '../../testkit/scale/cluster';
import { ringingIndex } from '../../core/pbx/ringing';
import { cancelledUas } from '../xfer/support';
import { answerOn, caller, hears, refusedCaller, shareOf, type Phone } from '../pbx/support';
import { callVia, clusterCall, nodePhone } from './pbx-support';
import { usePbxCluster } from './pbx-support';
import { expectOnSwitches, onBackend, XNODE_BACKENDS } from './backends';

const [TONE_A, TONE_B, TONE_C, TONE_D] = [400, 1600, 2000, 2600];

// on fsmrf (issue 55): a pickup's media, A's call on node 0's switch bridged to C's on node 1's
for (const backend of XNODE_BACKENDS)
  describe(onBackend('scale: pickup across nodes', backend), function () {
    this.timeout(240_000);
    let c: Cluster;
    let cid: string;
    const phones = usePbxCluster((s) => ({ c, cid } = s), backend);

    const newPhone = async (node: ClusterNode, freq: number, groups: string[] = []) => {
      const p = await nodePhone(c, node, cid, freq, groups);
      phones.push(p);
      return p;
    };

    /** A calls B through node 0; resolves once B's phone rings. */
    async function ringB(a: Phone, b: Phone) {
      const [n0] = c.nodes as [ClusterNode];
      const bPhone = await answerOn(b, cancelledUas());
      const aPhone = await callVia(n0, a, caller({ user: a.user, domain: a.domain, target: b.extension, rtpPort: a.audio.port, byeTimeoutMs: 60_000 }));
      const bLeg = await clusterCall(c, cid, (r) => r.direction === 'outgoing' && r.destination.target === b.extension, 'ringing', 'B rings');
      expect(bLeg.node_id).to.equal(n0.id);
      return { aPhone, bPhone, bLeg };
    }

    async function pickedAcross(code: (b: Phone) => string, groups: { b: string[]; c: string[] }) {
      const [n0, n1] = c.nodes as [ClusterNode, ClusterNode];
      const [a, b, cc] = [await newPhone(n0, TONE_A), await newPhone(n0, TONE_B, groups.b), await newPhone(n1, TONE_C, groups.c)];
      const { aPhone, bPhone, bLeg } = await ringB(a, b);
      const cPhone = await callVia(n1, cc, caller({ user: cc.user, domain: cc.domain, target: code(b), rtpPort: cc.audio.port, hangupAfterMs: 6000 }));
      await hears(a.audio, TONE_C, 'A hears C across nodes');
      await hears(cc.audio, TONE_A, 'C hears A across nodes');
      expectOnSwitches(c, backend);
      // B's phone got CANCEL (its scenario answers it: 200, 487, ACK); its leg ended by us
      const rb = await bPhone.done;
      expect(rb.code, rb.errors + rb.messages.slice(-2000)).to.equal(0);
      expect(rb.messages).to.match(/CANCEL sip:/);
      const ended = await clusterCall(c, cid, (r) => r.id === bLeg.id, 'hangup', 'B leg ended');
      expect(ended.hangup_by).to.equal('local');
      const cRow = await clusterCall(c, cid, (r) => r.direction === 'incoming' && r.source.target === cc.extension && r.node_id === n1.id, 'progressing', "C's call");
      expect(cRow.destination.target).to.equal(code(b));
      // C hangs up: A's call goes with it; nothing stays listed as ringing
      const [rc, ra] = await Promise.all([cPhone.done, aPhone.done]);
      expect(rc.code, rc.errors + rc.messages.slice(-2000)).to.equal(0);
      expect(ra.code, ra.errors + ra.messages.slice(-2000)).to.equal(0);
      expect(await ringingIndex(c.redis, c.prefix).list(cid)).to.deep.equal([]);
    }

    it('group pickup *8 on node 1 answers A’s call ringing B on node 0', async () => {
      await pickedAcross(() => '*8', { b: ['sales'], c: ['sales', 'support'] });
    });

    if (backend === 'embedded')
      it('directed pickup **B on node 1 answers the call ringing B on node 0', async () => {
        await pickedAcross((b) => `**${b.extension}`, { b: [], c: [] });
      });

    if (backend === 'embedded')
      it('two pickers on node 1 at once: the first wins, the other is refused 404; B rings no more', async () => {
        const [n0, n1] = c.nodes as [ClusterNode, ClusterNode];
        const [a, b, cc, d] = [await newPhone(n0, TONE_A), await newPhone(n0, TONE_B, ['desk']), await newPhone(n1, TONE_C, ['desk']), await newPhone(n1, TONE_D, ['desk'])];
        const { aPhone, bPhone } = await ringB(a, b);
        const [pc, pd] = await Promise.all([
          callVia(n1, cc, caller({ user: cc.user, domain: cc.domain, target: '*8', rtpPort: cc.audio.port, hangupAfterMs: 6000 })),
          callVia(n1, d, caller({ user: d.user, domain: d.domain, target: '*8', rtpPort: d.audio.port, hangupAfterMs: 6000 })),
        ]);
        const [rc, rd] = await Promise.all([pc.done, pd.done]);
        const won = [rc, rd].filter((r) => r.code === 0);
        expect(won, `one picker wins: ${rc.errors} | ${rd.errors}`).to.have.length(1);
        const lost = rc.code === 0 ? rd : rc;
        expect(lost.messages, 'the other is refused').to.match(/SIP\/2\.0 404 Nothing To Pick Up/);
        const winner = rc.code === 0 ? cc : d;
        // the winner talked to A (its tone heard by A while it was up), the loser never did
        const loserTone = winner === cc ? TONE_D : TONE_C;
        expect(a.audio.presence(winner.audio.freq, Date.now() - 8000), 'A heard the winner').to.be.greaterThan(0.3);
        expect(a.audio.presence(loserTone, Date.now() - 8000), 'A never heard the loser').to.be.lessThan(0.05);
        expect((await bPhone.done).code).to.equal(0);
        expect((await aPhone.done).code).to.equal(0);
      });

    if (backend === 'embedded')
      it('nothing ringing on any node: *8 on node 1 is refused 404 before any call exists', async () => {
        const [, n1] = c.nodes as [ClusterNode, ClusterNode];
        const cc = await newPhone(n1, TONE_C, ['sales']);
        await sleep(200);
        const before = (await c.db('calls').where({ customer_id: cid })).length;
        const r = await (await callVia(n1, cc, refusedCaller({ user: cc.user, domain: cc.domain, target: '*8', status: 404, phrase: 'Nothing To Pick Up' }))).done;
        expect(r.code, r.errors + r.messages.slice(-2000)).to.equal(0);
        expect((await c.db('calls').where({ customer_id: cid })).length).to.equal(before);
        expect(shareOf(cc.audio, TONE_A)).to.equal(0);
      });
  });
