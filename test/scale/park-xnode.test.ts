// Call park across the nodes of a cluster (issue 37; docs/pbx.md "Park", "Across nodes"), with sipp
// phones whose audio is a tone of their own: A dials the lot through node 0 and is parked there; C
// dials the slot through node 1, whose node reaches node 0 with a signed PBX leg: A and C hear each
// other's tones, the slot's lamp goes dark and the API lists nothing. The failures: a leg for an
// empty slot is refused 404 and an unsigned or forged one 403; the parked call's node frozen (its
// heartbeat lapses, no BYE) hangs up the retriever already talking to it within 5 s and refuses a
// retriever dialling meanwhile with `480 Parked Call Node Lost`.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { parkSlots } from '../../core/pbx/park-slots';
import { PresenceStore } from '../../core/presence/store';
import type { Fixture } from '../../testkit/api';
import { eventsFor, until } from '../../testkit/media-app/harness';
import { Cluster, type ClusterNode } from '../../testkit/scale/cluster';
import { sharedSecret } from '../../media-app/registrar';
import { LEG_SECRET_NAME } from '../../media-app/xnode/token';
import { pbxLegUser, signPbxLeg } from '../../media-app/xnode/pbx-token';
import { caller, hears, refusedCaller, type Phone } from '../pbx/support';
import { callVia, clusterCall, legRefused, nodePhone } from './pbx-support';
import { usePbxCluster } from './pbx-support';
import { expectOnSwitches, onBackend, XNODE_BACKENDS } from './backends';

// none near the notes of the music on hold (523-1175 Hz)
const [TONE_A, TONE_A2, TONE_C, TONE_C2] = [400, 1400, 2000, 2600];

// on fsmrf (issue 55): the retrieval's media, A and C on two nodes' switches, bridged by the PBX leg
for (const backend of XNODE_BACKENDS)
  describe(onBackend('scale: park retrieved across nodes', backend), function () {
    this.timeout(240_000);
    let c: Cluster;
    let f: Fixture;
    let cid: string;
    const phones = usePbxCluster((s) => ({ c, f, cid } = s), backend);

    const slots = () => parkSlots(c.redis, c.prefix);
    const lamp = (slot: number) => new PresenceStore(c.redis, c.prefix).dialogs(cid, String(slot));
    const listed = async (i: number) => (await request(c.apis[i]!.app).get('/v1.0/parkedcalls').query({ accesskey: f.accesskey })).body.result as { slot: number; node_id: string }[];
    const newPhone = async (node: ClusterNode, freq: number) => {
      const p = await nodePhone(c, node, cid, freq);
      phones.push(p);
      return p;
    };

    /** `a` dials the lot through `node`: parked there; resolves with its slot record. */
    async function parkOn(node: ClusterNode, a: Phone) {
      const aPhone = await callVia(node, a, caller({ user: a.user, domain: a.domain, target: '700', rtpPort: a.audio.port, byeTimeoutMs: 90_000 }));
      const row = await clusterCall(c, cid, (r) => r.source.target === a.extension, 'progressing', 'A answered');
      const parked = await until(async () => (await slots().list(cid)).find((p) => p.call_id === row.id) ?? null, 20_000, 'parked');
      expect(parked.node_id).to.equal(node.id);
      return { aPhone, parked };
    }

    it('A parked on node 0, C dials its slot on node 1: they hear each other; the lamp and the list follow; C hangs up, A goes', async () => {
      const [n0, n1] = c.nodes as [ClusterNode, ClusterNode];
      const [a, cc] = [await newPhone(n0, TONE_A), await newPhone(n1, TONE_C)];
      const { aPhone, parked } = await parkOn(n0, a);
      expect(parked.slot).to.equal(701);
      await until(async () => (await lamp(701)).length === 1, 5000, 'the lamp of 701 on');
      expect((await listed(1)).map((p) => [p.slot, p.node_id])).to.deep.equal([[701, n0.id]]);

      const cPhone = await callVia(n1, cc, caller({ user: cc.user, domain: cc.domain, target: '701', rtpPort: cc.audio.port, hangupAfterMs: 7000 }));
      await hears(a.audio, TONE_C, 'A hears C across nodes');
      await hears(cc.audio, TONE_A, 'C hears A across nodes');
      expectOnSwitches(c, backend);
      expect(await slots().list(cid)).to.deep.equal([]);
      expect(await listed(0)).to.deep.equal([]);
      await until(async () => (await lamp(701)).length === 0, 5000, 'the lamp of 701 off');

      const cRow = await clusterCall(c, cid, (r) => r.source.target === cc.extension, 'progressing', 'C up');
      expect(cRow.node_id, "the retriever's call lives on node 1").to.equal(n1.id);
      expect((await c.db('calls').where({ id: parked.call_id }).first())!.node_id, 'the parked call stays on node 0').to.equal(n0.id);
      // C hangs up: its leg goes, and A's call with it (a dial to the lot: nobody's flow waits on it)
      const [rc, ra] = await Promise.all([cPhone.done, aPhone.done]);
      expect(rc.code, rc.errors + rc.messages.slice(-2000)).to.equal(0);
      expect(ra.code, ra.errors + ra.messages.slice(-2000)).to.equal(0);
      const unparked = (await eventsFor(c.redis, parked.call_id)).find((e) => e.event_type === 'call_unparked');
      expect(unparked?.data, 'call_unparked').to.include({ reason: 'retrieved', retrieved_by: cRow.id, slot: 701 });
      await until(async () => (await c.db('calls').where({ customer_id: cid }).whereNot({ status: 'hangup' })).length === 0, 10_000, 'every call ended');
    });

    if (backend === 'embedded')
      it('a leg for an empty slot is refused 404; unsigned, forged, expired or for another call 403', async () => {
        const [n0] = c.nodes as [ClusterNode];
        const secret = await sharedSecret(c.redis, c.prefix, LEG_SECRET_NAME);
        const subjectId = randomUUID();
        const claims = { kind: 'park' as const, customerId: cid, subjectId, callId: randomUUID(), detail: '703' };
        const user = pbxLegUser(claims);
        const cases: [string, string, string | null, number][] = [
          ['signed, the slot empty', user, signPbxLeg(secret, claims), 404],
          ['no header', user, null, 403],
          ['forged', user, signPbxLeg('x'.repeat(43), claims), 403],
          ['expired', user, signPbxLeg(secret, claims, Date.now() - 120_000), 403],
          ['signed for another call', pbxLegUser({ kind: 'park', subjectId: randomUUID() }), signPbxLeg(secret, claims), 403],
          ['signed as a pickup', user, signPbxLeg(secret, { ...claims, kind: 'pickup', detail: '' }), 403],
        ];
        for (const [what, u, header, status] of cases) {
          const r = await legRefused(n0.sipPort, u, header, status);
          expect(r.code, `${what}: ${r.errors}${r.messages.slice(-2000)}`).to.equal(0);
        }
        // and a slot nobody holds, dialled on node 1: 404 before any call exists, as on one node
        const cc = await newPhone(c.nodes[1]!, TONE_C);
        const before = (await c.db('calls').where({ customer_id: cid })).length;
        const r = await (await callVia(c.nodes[1]!, cc, refusedCaller({ user: cc.user, domain: cc.domain, target: '705', status: 404, phrase: 'Parking Slot Empty' }))).done;
        expect(r.code, r.errors + r.messages.slice(-2000)).to.equal(0);
        expect((await c.db('calls').where({ customer_id: cid })).length).to.equal(before);
      });

    if (backend === 'embedded')
      it("the parked call's node lost (frozen, then killed): the retriever talking to it is hung up within 5 s, one dialling meanwhile gets 480", async () => {
        const [n0, n1] = c.nodes as [ClusterNode, ClusterNode];
        const [a, a2, cc, cc2] = [await newPhone(n0, TONE_A), await newPhone(n0, TONE_A2), await newPhone(n1, TONE_C), await newPhone(n1, TONE_C2)];
        const first = await parkOn(n0, a);
        const second = await parkOn(n0, a2);
        expect([first.parked.slot, second.parked.slot]).to.deep.equal([701, 702]);
        const cPhone = await callVia(n1, cc, caller({ user: cc.user, domain: cc.domain, target: '701', rtpPort: cc.audio.port, byeTimeoutMs: 60_000 }));
        await hears(cc.audio, TONE_A, 'C hears A across nodes');
        await hears(a.audio, TONE_C, 'A hears C across nodes');

        const lostAt = Date.now();
        n0.signal('SIGSTOP');
        // dialled at once, while node 0 still looks alive: the leg's INVITE is not answered, the
        // heartbeat lapses, and the phone is refused
        const refused = await callVia(n1, cc2, refusedCaller({ user: cc2.user, domain: cc2.domain, target: '702', status: 480, phrase: 'Parked Call Node Lost', rings: true }));
        const rc = await cPhone.done; // node 1's BYE
        const byeAfter = Date.now() - lostAt;
        console.log(`      (retriever hung up ${byeAfter} ms after its parked call's node was lost)`);
        expect(rc.code, rc.errors + rc.messages.slice(-2000)).to.equal(0);
        expect(byeAfter, 'hung up within 5 s of the loss').to.be.at.most(5000);
        const r2 = await refused.done;
        expect(r2.code, r2.errors + r2.messages.slice(-2000)).to.equal(0);
        const cRow = await clusterCall(c, cid, (r) => r.source.target === cc.extension, 'hangup', 'C ended');
        expect(cRow.hangup_by).to.equal('local');
        n0.signal('SIGKILL');
        await n0.exited;
        // the sweep ends node 0's calls; the slot they held frees, and its lamp goes dark
        await until(async () => (await listed(1)).length === 0, 15_000, 'the lost node’s slot freed');
        await until(async () => (await lamp(702)).length === 0, 5000, 'the lamp of 702 off');
      });
  });
