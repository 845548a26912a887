// A held conference member's music replaced by a Participants update (Twilio's POST
// .../Conferences/{ConferenceSid}/Participants/{CallSid} with Hold=true and a new HoldUrl while the member
// is held), on both media backends: 'embedded' (the engine's mix, the leg's own play) and 'fsmrf' (the
// switch's room: the room's hold of the member, media-server/fsmrf/member-hold.ts). The new music replaces
// the old (media-app/call/controls.ts), the member stays held all along (the room does not hear it), no
// new re-INVITE goes to the party (its direction is unchanged); Hold=false: both ways again, and on fsmrf
// no music file left on the directory shared with the switch.
// Real loopback SIP and RTP: control-api, media-app, sipp parties, our switch, real Postgres and Redis.
import { expect } from 'chai';
import request from 'supertest';
import { until } from '../../testkit/media-app/harness';
import { accountSid, callSid, toSid } from '../../core/twilio/sids';
import { twilioAuthToken } from '../../core/twilio/auth-token';
import { type Stack } from '../xfer/support';
import { conferencesRepo } from '../../core/repos/conferences';
import { useRoomMembers } from './room-members';
import { offeredDirections } from './held-party';

const A = 500;
const B = 1100;
const FIRST = 1400;
const SECOND = 1900;
/** Share of 20 ms frames that must carry a tone for "hears it" (test/conference/backends.test.ts). */
const HEARS = 0.5;

for (const backend of ['embedded', 'fsmrf'] as const) {
  describe(`a held conference member's new HoldUrl on the ${backend} media backend`, function () {
    this.timeout(120_000);
    const rooms = useRoomMembers(backend, { prefix: 'hold-url', tones: { first: FIRST, second: SECOND } });
    let s: Stack;
    before(() => (s = rooms.s));
    const { member, sharedFiles } = rooms;

    it('Hold=true with a new HoldUrl while held: the new music replaces the old, the member still held; Hold=false: both ways again', async () => {
      const conf = await conferencesRepo(s.t.ctx.db).create({ customer_id: s.f.customer.id, type: 'conference', name: `hold url ${Date.now()}` });
      const a = await member(conf.id, A, ['sendonly', 'sendrecv']);
      const b = await member(conf.id, B, []);
      await Promise.all([a.party.toneTurns(B, true, 15_000), b.party.toneTurns(A, true, 15_000)]);

      const customer = s.f.customer.id;
      const token = twilioAuthToken(s.t.ctx.config.jwtSecret, customer, 0);
      const update = (body: Record<string, string>) =>
        request(s.t.app)
          .post(`/2010-04-01/Accounts/${accountSid(customer)}/Conferences/${toSid('CF', conf.id)}/Participants/${callSid(a.id)}.json`)
          .auth(accountSid(customer), token)
          .type('form')
          .send(body);

      const first = await update({ Hold: 'true', HoldUrl: rooms.url('first') });
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      expect(first.body.hold).to.equal(true);
      await Promise.all([a.party.toneTurns(FIRST, true, 10_000), b.party.toneTurns(A, false, 10_000)]);

      const second = await update({ Hold: 'true', HoldUrl: rooms.url('second') });
      expect(second.status, JSON.stringify(second.body)).to.equal(200);
      expect(second.body.hold).to.equal(true);
      await a.party.toneTurns(SECOND, true, 10_000);
      // two plays of the one-second file: the new music in a loop, the old one gone, the room still away
      const t0 = Date.now();
      await a.party.framesHeard(t0, 100);
      const t1 = Date.now();
      expect(a.party.presence(SECOND, t0, t1), 'A hears the new music').to.be.greaterThan(HEARS);
      expect(a.party.presence(FIRST, t0, t1), 'A no longer hears the old music').to.be.lessThan(0.1);
      expect(a.party.presence(B, t0, t1), 'A, still held, does not hear B').to.be.lessThan(0.1);
      expect(b.party.presence(A, t0, t1), 'B does not hear A, still held').to.be.lessThan(0.1);
      expect((await s.t.ctx.db('calls').where({ id: a.id }).first())?.metadata?.hold, 'still held').to.equal(true);
      if (backend === 'fsmrf') await until(() => (sharedFiles().length === 1 ? true : null), 5_000, "the old music's file released, the new one's there");

      const unheld = await update({ Hold: 'false' });
      expect(unheld.status, JSON.stringify(unheld.body)).to.equal(200);
      await Promise.all([a.party.toneTurns(SECOND, false, 10_000), a.party.toneTurns(B, true, 10_000), b.party.toneTurns(A, true, 10_000)]);
      if (backend === 'fsmrf') await until(() => (sharedFiles().length === 0 ? true : null), 5_000, "the music's file removed once the hold ended");

      for (const c of [a, b]) expect((await s.api.post(`/calls/${c.id}/hangup`, undefined)).status).to.equal(200);
      const [ra, rb] = await Promise.all([a.x.done, b.x.done]);
      expect(ra.code, ra.errors + ra.messages.slice(-3000)).to.equal(0);
      expect(rb.code, rb.errors + rb.messages.slice(-3000)).to.equal(0);
      expect(offeredDirections(ra), 'A: re-INVITEd sendonly once (the music changed, not the direction), then sendrecv').to.deep.equal(['sendrecv', 'sendonly', 'sendrecv']);
    });
  });
}
