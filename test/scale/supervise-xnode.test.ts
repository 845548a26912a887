// Supervisor across the nodes of a cluster (issue 37; docs/pbx.md "Supervisor", "PBX legs between
// nodes"), with sipp phones whose audio is a tone of their own: the customer A (400 Hz) calls the
// agent B (1600 Hz) through node 0; the supervisor S (2800 Hz, louder), registered and dialling
// through node 1, dials *1 + B: node 1 asks node 0 through a signed PBX leg. listen: S hears A and
// B, neither hears S; whisper (PUT, sent to node 0): B hears S, A does not (60 dB); S's key 4 back to
// listen; S hanging up leaves A and B talking. The refusals are those of one node: not a supervisor
// 403, nothing to supervise 404, supervised already 486.
import { expect } from 'chai';
import request from 'supertest';
import { RtpParty } from '../../testkit/conference/party';
import type { Fixture } from '../../testkit/api';
import { eventsFor, sleep, until } from '../../testkit/media-app/harness';
import { Cluster, type ClusterNode } from '../../testkit/scale/cluster';
import { DEFAULT_FEATURE_CODES } from '../../core/pbx/feature-codes';
import { pbxSettingsRepo } from '../../core/pbx/settings';
import { party } from '../xfer/support';
import { answerOn, caller, hears, refusedCaller, shareOf, type Phone } from '../pbx/support';
import { dbAbove, powerAt } from '../pbx/supervise-support';
import { callVia, clusterCall, nodePhone } from './pbx-support';
import { usePbxCluster } from './pbx-support';
import { expectOnSwitches, onBackend, XNODE_BACKENDS } from './backends';

const [F_A, F_B, F_S, F_S2] = [400, 1600, 2800, 2200];

// on fsmrf (issue 55): supervision is the embedded engine's mix (its whisper leaves the supervisor out of
// the customer's mix): the node holding the call refuses the supervisor's leg by name, 501, before anyone
// is answered, and the supervised call goes on
for (const backend of XNODE_BACKENDS)
  describe(onBackend('scale: supervisor across nodes', backend), function () {
    this.timeout(240_000);
    let c: Cluster;
    let f: Fixture;
    let cid: string;
    const phones = usePbxCluster((s) => ({ c, f, cid } = s), backend);

    const api = (i = 0) => ({
      get: (url: string) => request(c.apis[i]!.app).get(`/v1.0${url}`).query({ accesskey: f.accesskey }),
      put: (url: string, body: object) => request(c.apis[i]!.app).put(`/v1.0${url}`).query({ accesskey: f.accesskey }).send(body),
      post: (url: string, body?: object) => request(c.apis[i]!.app).post(`/v1.0${url}`).query({ accesskey: f.accesskey }).send(body),
    });
    const newPhone = async (node: ClusterNode, freq: number, amplitude?: number) => {
      const p = await nodePhone(c, node, cid, freq);
      if (amplitude) {
        p.audio.close();
        p.audio = await RtpParty.open(freq, amplitude);
      }
      phones.push(p);
      return p;
    };
    const supervisors = (...exts: string[]) => pbxSettingsRepo(c.db).put(cid, { ...DEFAULT_FEATURE_CODES, supervisor_extensions: exts });

    /** A calls B through node 0; resolves once they hear each other, with B's leg (the supervised call). */
    async function talking(a: Phone, b: Phone) {
      const [n0] = c.nodes as [ClusterNode];
      const bPhone = await answerOn(b, party({ rtpPort: b.audio.port, byeTimeoutMs: 120_000 }));
      const aPhone = await callVia(n0, a, caller({ user: a.user, domain: a.domain, target: b.extension, rtpPort: a.audio.port, byeTimeoutMs: 120_000 }));
      await hears(a.audio, F_B, 'A hears B');
      await hears(b.audio, F_A, 'B hears A');
      const bRow = await clusterCall(c, cid, (r) => r.direction === 'outgoing' && r.destination.target === b.extension, 'progressing', "B's leg up");
      const aRow = await clusterCall(c, cid, (r) => r.direction === 'incoming' && r.source.target === a.extension, 'progressing', "A's call up");
      expect([aRow.node_id, bRow.node_id]).to.deep.equal([n0.id, n0.id]);
      return { aPhone, bPhone, aRow, bRow };
    }

    if (backend === 'fsmrf')
      it('*1 + B on node 1 for a call on node 0 is refused 501 by name, nobody answered; A and B talk on', async () => {
        const [n0, n1] = c.nodes as [ClusterNode, ClusterNode];
        const [a, b, sup] = [await newPhone(n0, F_A), await newPhone(n0, F_B), await newPhone(n1, F_S)];
        await supervisors(sup.extension);
        const { aPhone, bPhone, aRow, bRow } = await talking(a, b);
        const refused = await (
          await callVia(n1, sup, refusedCaller({ user: sup.user, domain: sup.domain, target: `*1${b.extension}`, status: 501, phrase: 'Supervision Not On This Media Backend', rings: true }))
        ).done;
        expect(refused.code, refused.errors + refused.messages.slice(-2000)).to.equal(0);
        expect((await api().get(`/calls/${bRow.id}/supervise`)).status, 'no supervision record').to.equal(404);
        await hears(a.audio, F_B, 'A still hears B');
        await hears(b.audio, F_A, 'B still hears A');
        // the supervised call is node 0's; the supervisor, refused, holds none
        expectOnSwitches(c, backend, [0]);
        expect(c.switchChannels()[1], "channels on the supervisor's switch (node 1)").to.equal(0);
        expect((await api().post(`/calls/${aRow.id}/hangup`)).status).to.equal(200);
        const [ra, rb] = await Promise.all([aPhone.done, bPhone.done]);
        expect(ra.code, ra.errors).to.equal(0);
        expect(rb.code, rb.errors).to.equal(0);
      });

    if (backend === 'embedded')
      it('*1 + B on node 1 listens to a call on node 0; whisper reaches B only (60 dB); key 4 listens again; S leaving leaves A and B talking', async () => {
        const [n0, n1] = c.nodes as [ClusterNode, ClusterNode];
        const [a, b, sup] = [await newPhone(n0, F_A), await newPhone(n0, F_B), await newPhone(n1, F_S, 12000)];
        await supervisors(sup.extension);
        const { aPhone, bPhone, aRow, bRow } = await talking(a, b);
        const sPhone = await callVia(n1, sup, caller({ user: sup.user, domain: sup.domain, target: `*1${b.extension}`, rtpPort: sup.audio.port, byeTimeoutMs: 120_000 }));
        const rec = await until(
          async () => ((await api(1).get(`/calls/${bRow.id}/supervise`)).status === 200 ? (await api(1).get(`/calls/${bRow.id}/supervise`)).body : null),
          20_000,
          'supervision up',
        );
        const sRow = await clusterCall(c, cid, (r) => r.direction === 'incoming' && r.source.target === sup.extension, 'progressing', "S's call");
        expect(sRow.node_id, "the supervisor's call lives on node 1").to.equal(n1.id);
        expect(rec).to.include({ call_id: bRow.id, mode: 'listen', status: 'active', node_id: n0.id, supervisor_call_id: sRow.id });
        // listen: S hears both sides, nobody hears S, A and B still hear each other
        await hears(sup.audio, F_A, 'S hears A across nodes');
        await hears(sup.audio, F_B, 'S hears B across nodes');
        await hears(a.audio, F_B, 'A still hears B');
        await hears(b.audio, F_A, 'B still hears A');
        await sleep(1500);
        expect(shareOf(a.audio, F_S, 1500), 'A does not hear S').to.equal(0);
        expect(shareOf(b.audio, F_S, 1500), 'B does not hear S').to.equal(0);
        // whisper (the PUT goes to node 0, which carries the supervision): B hears S, A does not
        expect((await api(1).put(`/calls/${bRow.id}/supervise`, { mode: 'whisper' })).status).to.equal(200);
        await hears(b.audio, F_S, 'B hears the whisper across nodes');
        await sleep(2500);
        const gap = dbAbove(powerAt(b.audio, F_S, 2000), powerAt(a.audio, F_S, 2000));
        expect(gap, `the customer's energy at ${F_S} Hz is ${gap.toFixed(1)} dB below the agent's`).to.be.at.least(60);
        // S's key 4 (RFC 4733 in its RTP, through the leg): listen again
        sup.audio.pressKey('4');
        await until(async () => (await api().get(`/calls/${bRow.id}/supervise`)).body.mode === 'listen', 10_000, 'key 4: listen');
        await sleep(1500);
        expect(shareOf(b.audio, F_S, 1000), 'B no longer hears S').to.equal(0);
        // S hangs up (the API on its own node): A and B talk on, nothing of S
        expect((await api(1).post(`/calls/${sRow.id}/hangup`)).status).to.equal(200);
        expect((await sPhone.done).code).to.equal(0);
        await until(async () => (await api().get(`/calls/${bRow.id}/supervise`)).status === 404, 10_000, 'supervision gone');
        await sleep(1500);
        await hears(a.audio, F_B, 'A hears B after S left');
        await hears(b.audio, F_A, 'B hears A after S left');
        expect(shareOf(a.audio, F_S, 1000)).to.equal(0);
        const types = (await eventsFor(c.redis, rec.id)).map((e) => [e.event_type, e.data.mode, e.data.reason ?? '']);
        expect(types).to.deep.equal([
          ['supervise_started', 'listen', ''],
          ['supervise_updated', 'whisper', ''],
          ['supervise_updated', 'listen', ''],
          ['supervise_ended', 'listen', 'supervisor_left'],
        ]);
        expect((await api().post(`/calls/${aRow.id}/hangup`)).status).to.equal(200);
        const [ra, rb] = await Promise.all([aPhone.done, bPhone.done]);
        expect(ra.code, ra.errors).to.equal(0);
        expect(rb.code, rb.errors).to.equal(0);
      });

    if (backend === 'embedded')
      it('the refusals across nodes: not a supervisor 403, nothing to supervise 404, supervised already 486; the call ending releases S', async () => {
        const [n0, n1] = c.nodes as [ClusterNode, ClusterNode];
        const [a, b, sup, sup2, other] = [await newPhone(n0, F_A), await newPhone(n0, F_B), await newPhone(n1, F_S), await newPhone(n1, F_S2), await newPhone(n1, F_S2)];
        await supervisors(sup.extension, sup2.extension);
        const idle = await (await callVia(n1, sup, refusedCaller({ user: sup.user, domain: sup.domain, target: `*1${b.extension}`, status: 404, phrase: 'Nothing To Supervise' }))).done;
        expect(idle.code, idle.errors + idle.messages.slice(-2000)).to.equal(0);
        const { aPhone, bPhone, aRow, bRow } = await talking(a, b);
        const notSup = await (await callVia(n1, other, refusedCaller({ user: other.user, domain: other.domain, target: `*1${b.extension}`, status: 403, phrase: 'Not A Supervisor' }))).done;
        expect(notSup.code, notSup.errors + notSup.messages.slice(-2000)).to.equal(0);
        const sPhone = await callVia(n1, sup, caller({ user: sup.user, domain: sup.domain, target: `*3${b.extension}`, rtpPort: sup.audio.port, byeTimeoutMs: 60_000 }));
        await until(async () => (await api().get(`/calls/${bRow.id}/supervise`)).body.mode === 'barge', 20_000, 'barge up');
        await hears(a.audio, F_S, 'A hears S in barge across nodes');
        await hears(sup.audio, F_B, 'S hears B in barge across nodes');
        const twice = await (await callVia(n1, sup2, refusedCaller({ user: sup2.user, domain: sup2.domain, target: `*2${b.extension}`, status: 486, phrase: 'Already Supervised', rings: true }))).done;
        expect(twice.code, twice.errors + twice.messages.slice(-2000)).to.equal(0);
        // the supervised call ends: S, on the other node, gets its BYE
        expect((await api().post(`/calls/${aRow.id}/hangup`)).status).to.equal(200);
        const [ra, rb, rs] = await Promise.all([aPhone.done, bPhone.done, sPhone.done]);
        expect(ra.code, ra.errors).to.equal(0);
        expect(rb.code, rb.errors).to.equal(0);
        expect(rs.code, rs.errors + rs.messages.slice(-2000)).to.equal(0);
        await until(async () => (await c.db('calls').where({ customer_id: cid }).whereNot({ status: 'hangup' })).length === 0, 10_000, 'every call ended');
      });
  });
