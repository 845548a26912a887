// Music on hold of a conference member (POST|DELETE /calls/{id}/moh) on both media backends: 'embedded'
// (the engine's mix: the leg's own play in place of the mix it hears) and 'fsmrf' (the switch's room:
// `conference <room> play <file> <member> nomux` in a loop, media-server/fsmrf/member-hold.ts). The
// member hears the music (the customer's moh_url) and not the room, and the room still hears it (music on
// hold is no hold); a hold meanwhile takes it out of the room with the same music, the unhold brings it
// back with the music still on; the music's end: both ways again, on fsmrf the file gone from the
// directory shared with the switch. Only the hold re-INVITEs the party.
// Real loopback SIP and RTP: control-api, media-app, sipp parties, our switch, real Postgres and Redis.
import { expect } from 'chai';
import request from 'supertest';
import { until } from '../../testkit/media-app/harness';
import { RtpParty } from '../../testkit/conference/party';
import { type Stack } from '../xfer/support';
import { conferencesRepo } from '../../core/repos/conferences';
import { useRoomMembers } from './room-members';
import { offeredDirections } from './held-party';

const A = 500;
const B = 1100;
const MUSIC = 1400;
/** Share of 20 ms frames that must carry a tone for "hears it" (test/conference/backends.test.ts). */
const HEARS = 0.5;

for (const backend of ['embedded', 'fsmrf'] as const) {
  describe(`music on hold of a conference member on the ${backend} media backend`, function () {
    this.timeout(120_000);
    const rooms = useRoomMembers(backend, { prefix: 'member-moh', tones: { music: MUSIC } });
    let s: Stack;
    let musicUrl = '';
    before(() => ((s = rooms.s), (musicUrl = rooms.url('music'))));
    const { member, sharedFiles } = rooms;

    const del = (p: string) => request(s.t.app).delete(`/v1.0${p}`).set('Authorization', `Bearer ${s.f.token}`);
    const setMetadata = (body: object) => request(s.t.app).put('/v1.0/customer/metadata').set('Authorization', `Bearer ${s.f.token}`).send(body);

    /** Over the next 100 frames: the share of each tone A and B hear of the other and of the music. */
    async function listen(a: RtpParty, b: RtpParty) {
      const t0 = Date.now();
      await Promise.all([a.framesHeard(t0, 100), b.framesHeard(t0, 100)]);
      const t1 = Date.now();
      return { aMusic: a.presence(MUSIC, t0, t1), aHearsB: a.presence(B, t0, t1), bHearsA: b.presence(A, t0, t1) };
    }

    it('the member hears the music in place of the room and is still heard; held meanwhile: out of the room; unheld: heard again, the music on; off: both ways', async () => {
      expect((await setMetadata({ moh_url: musicUrl })).status).to.equal(200);
      const conf = await conferencesRepo(s.t.ctx.db).create({ customer_id: s.f.customer.id, type: 'conference', name: `member moh ${Date.now()}` });
      const a = await member(conf.id, A, ['sendonly', 'sendrecv']);
      const b = await member(conf.id, B, []);
      await Promise.all([a.party.toneTurns(B, true, 15_000), b.party.toneTurns(A, true, 15_000)]);

      expect((await s.api.post(`/calls/${a.id}/moh`, undefined)).status).to.equal(200);
      await Promise.all([a.party.toneTurns(MUSIC, true, 10_000), a.party.toneTurns(B, false, 10_000)]);
      // two plays of the one-second file: the loop; the room still hears A (music on hold is no hold)
      let h = await listen(a.party, b.party);
      expect(h.aMusic, 'A hears the music').to.be.greaterThan(HEARS);
      expect(h.aHearsB, 'A does not hear B over the music').to.be.lessThan(0.1);
      expect(h.bHearsA, 'B still hears A').to.be.greaterThan(HEARS);
      if (backend === 'fsmrf') expect(sharedFiles(), "the music's file on the shared directory").to.have.length(1);

      // held while on music on hold: the same music, A out of the room
      expect((await s.api.post(`/calls/${a.id}/hold`, {})).status).to.equal(200);
      await b.party.toneTurns(A, false, 10_000);
      h = await listen(a.party, b.party);
      expect(h.aMusic, 'held: A hears the music').to.be.greaterThan(HEARS);
      expect(h.bHearsA, 'held: B does not hear A').to.be.lessThan(0.1);

      // unheld with music on hold still on: heard again, the music on
      expect((await del(`/calls/${a.id}/hold`)).status).to.equal(200);
      await b.party.toneTurns(A, true, 10_000);
      h = await listen(a.party, b.party);
      expect(h.aMusic, 'unheld: A still hears the music').to.be.greaterThan(HEARS);
      expect(h.bHearsA, 'unheld: B hears A').to.be.greaterThan(HEARS);

      expect((await del(`/calls/${a.id}/moh`)).status).to.equal(200);
      await Promise.all([a.party.toneTurns(MUSIC, false, 10_000), a.party.toneTurns(B, true, 10_000)]);
      h = await listen(a.party, b.party);
      expect(h.aHearsB, 'A hears B again').to.be.greaterThan(HEARS);
      expect(h.bHearsA, 'B hears A').to.be.greaterThan(HEARS);
      if (backend === 'fsmrf') await until(() => (sharedFiles().length === 0 ? true : null), 5_000, "the music's file removed once the music ended");
      expect((await setMetadata({ moh_url: '' })).status).to.equal(200);

      for (const c of [a, b]) expect((await s.api.post(`/calls/${c.id}/hangup`, undefined)).status).to.equal(200);
      const [ra, rb] = await Promise.all([a.x.done, b.x.done]);
      expect(ra.code, ra.errors + ra.messages.slice(-3000)).to.equal(0);
      expect(rb.code, rb.errors + rb.messages.slice(-3000)).to.equal(0);
      expect(offeredDirections(ra), 'A: re-INVITEd for the hold only').to.deep.equal(['sendrecv', 'sendonly', 'sendrecv']);
    });
  });
}
