// The hold of a conference member on both media backends (issue 55): 'embedded' (the engine's mix) and
// 'fsmrf' (the switch's room: `conference <room> hold <member> <file>`, the file played again at each
// play-file-member-done, `unhold`: media-server/fsmrf/member-hold.ts). Two parties in a room, each a
// sipp call whose RTP is a tone of its own; POST /calls/{id}/hold with a 1 s music URL: the held party
// hears the music for longer than one play of the file (the loop) and not the other party, the other
// party no longer hears it; DELETE /calls/{id}/hold: both hear each other again, the music gone; on
// fsmrf the music's file on the directory shared with the switch is removed once the hold ends.
// Real loopback SIP and RTP: control-api, media-app, sipp, our switch, real Postgres and Redis.
import { expect } from 'chai';
import request from 'supertest';
import { until } from '../../testkit/media-app/harness';
import { toneIn } from '../../testkit/conference/party';
import { type Stack } from '../xfer/support';
import { conferencesRepo } from '../../core/repos/conferences';
import { CallSession } from '../../media-app/call/session';
import { useRoomMembers } from './room-members';
import { offeredDirections } from './held-party';

const A = 500;
const B = 1100;
const MUSIC = 1400;
/** Share of 20 ms frames that must carry a tone for "hears it" (test/conference/backends.test.ts). */
const HEARS = 0.5;

for (const backend of ['embedded', 'fsmrf'] as const) {
  describe(`the hold of a conference member on the ${backend} media backend`, function () {
    this.timeout(120_000);
    const slow = { asked: 0, answers: [] as (() => void)[] };
    const rooms = useRoomMembers(backend, {
      prefix: 'member-hold',
      // one second of the music's tone: a hold of three seconds hears it played again
      tones: { music: MUSIC },
      // answered when the test says (slow.answer): a hold's fetch still running
      route: (url, send) => url.split('?')[0] === '/slow.wav' && (slow.asked++, slow.answers.push(() => send('music')), true),
      after: () => {
        for (const answer of slow.answers.splice(0)) answer();
      },
    });
    let s: Stack;
    let musicUrl = '';
    before(() => ((s = rooms.s), (musicUrl = rooms.url('music'))));
    const { member, sharedFiles } = rooms;

    it('the held member hears the music in a loop and not the room, the room no longer hears it; unhold: both ways again', async () => {
      const conf = await conferencesRepo(s.t.ctx.db).create({ customer_id: s.f.customer.id, type: 'conference', name: `member hold ${Date.now()}` });
      const a = await member(conf.id, A, ['sendonly', 'sendrecv']);
      const b = await member(conf.id, B, []);
      await Promise.all([a.party.toneTurns(B, true, 15_000), b.party.toneTurns(A, true, 15_000)]);

      const held = await s.api.post(`/calls/${a.id}/hold`, { music: musicUrl });
      expect(held.status, JSON.stringify(held.body)).to.equal(200);
      await Promise.all([a.party.toneTurns(MUSIC, true, 10_000), b.party.toneTurns(A, false, 10_000)]);
      // three plays of the one-second file: the loop, measured over the frames the party heard
      const t0 = Date.now();
      await a.party.framesHeard(t0, 150);
      const t1 = Date.now();
      expect(a.party.presence(MUSIC, t0, t1), 'A hears the music for 3 s').to.be.greaterThan(HEARS);
      expect(a.party.presence(B, t0, t1), 'A held does not hear B').to.be.lessThan(0.1);
      expect(b.party.presence(A, t0, t1), 'B does not hear A held').to.be.lessThan(0.1);
      if (backend === 'fsmrf') expect(sharedFiles(), "the music's file on the shared directory while held").to.have.length(1);

      const unheld = await request(s.t.app).delete(`/v1.0/calls/${a.id}/hold`).set('Authorization', `Bearer ${s.f.token}`);
      expect(unheld.status, JSON.stringify(unheld.body)).to.equal(200);
      await Promise.all([a.party.toneTurns(MUSIC, false, 10_000), a.party.toneTurns(B, true, 10_000), b.party.toneTurns(A, true, 10_000)]);
      if (backend === 'fsmrf') await until(() => (sharedFiles().length === 0 ? true : null), 5_000, "the music's file removed once the hold ended");

      for (const c of [a, b]) expect((await s.api.post(`/calls/${c.id}/hangup`, undefined)).status).to.equal(200);
      const [ra, rb] = await Promise.all([a.x.done, b.x.done]);
      expect(ra.code, ra.errors + ra.messages.slice(-3000)).to.equal(0);
      expect(rb.code, rb.errors + rb.messages.slice(-3000)).to.equal(0);
      expect(offeredDirections(ra), 'A: re-INVITEd sendonly, then sendrecv').to.deep.equal(['sendrecv', 'sendonly', 'sendrecv']);
    });

    it("a hold with no music plays the node's own (copied where the switch reads it), removed at unhold", async () => {
      const conf = await conferencesRepo(s.t.ctx.db).create({ customer_id: s.f.customer.id, type: 'conference', name: `member hold node ${Date.now()}` });
      const a = await member(conf.id, A, ['sendonly', 'sendrecv']);
      const b = await member(conf.id, B, []);
      await Promise.all([a.party.toneTurns(B, true, 15_000), b.party.toneTurns(A, true, 15_000)]);

      expect((await s.api.post(`/calls/${a.id}/hold`, {})).status).to.equal(200);
      await Promise.all([a.party.toneTurns(B, false, 10_000), b.party.toneTurns(A, false, 10_000)]);
      const t0 = Date.now();
      await a.party.framesHeard(t0, 100);
      const frames = a.party.heard.filter((h) => h.at >= t0);
      const voiced = frames.filter((h) => h.pcm.reduce((n, v) => n + Math.abs(v), 0) / h.pcm.length > 300).length / frames.length;
      expect(voiced, "A hears the node's music").to.be.greaterThan(HEARS);
      if (backend === 'fsmrf') expect(sharedFiles(), "the node's music copied to the shared directory while held").to.have.length(1);

      const unheld = await request(s.t.app).delete(`/v1.0/calls/${a.id}/hold`).set('Authorization', `Bearer ${s.f.token}`);
      expect(unheld.status, JSON.stringify(unheld.body)).to.equal(200);
      await Promise.all([a.party.toneTurns(B, true, 10_000), b.party.toneTurns(A, true, 10_000)]);
      if (backend === 'fsmrf') await until(() => (sharedFiles().length === 0 ? true : null), 5_000, 'the copy removed once the hold ended');

      for (const c of [a, b]) expect((await s.api.post(`/calls/${c.id}/hangup`, undefined)).status).to.equal(200);
      for (const r of await Promise.all([a.x.done, b.x.done])) expect(r.code, r.errors + r.messages.slice(-3000)).to.equal(0);
    });

    it('an unhold while the music is still being fetched leaves the member in the room, heard and hearing', async () => {
      const conf = await conferencesRepo(s.t.ctx.db).create({ customer_id: s.f.customer.id, type: 'conference', name: `member hold slow ${Date.now()}` });
      const a = await member(conf.id, A, ['sendonly', 'sendrecv']);
      const b = await member(conf.id, B, []);
      await Promise.all([a.party.toneTurns(B, true, 15_000), b.party.toneTurns(A, true, 15_000)]);

      const asked = slow.asked;
      const url = musicUrl.replace('/music.wav', '/slow.wav');
      expect((await s.api.post(`/calls/${a.id}/hold`, { music: url })).status).to.equal(200);
      await until(() => (slow.asked > asked ? true : null), 10_000, 'the music asked for');
      const unheld = await request(s.t.app).delete(`/v1.0/calls/${a.id}/hold`).set('Authorization', `Bearer ${s.f.token}`);
      expect(unheld.status, JSON.stringify(unheld.body)).to.equal(200);
      await until(async () => ((await s.t.ctx.db('calls').where({ id: a.id }).first())?.metadata?.hold === false ? true : null), 10_000, 'unheld');
      // the fetch ends after the unhold: nothing is played or held with it
      for (const answer of slow.answers.splice(0)) answer();
      await Promise.all([a.party.toneTurns(B, true, 10_000), b.party.toneTurns(A, true, 10_000)]);
      const t0 = Date.now();
      await Promise.all([a.party.framesHeard(t0, 100), b.party.framesHeard(t0, 100)]);
      const t1 = Date.now();
      expect(a.party.presence(B, t0, t1), 'A hears B').to.be.greaterThan(HEARS);
      expect(b.party.presence(A, t0, t1), 'B hears A').to.be.greaterThan(HEARS);
      expect(a.party.presence(MUSIC, t0, t1), 'no music').to.be.lessThan(0.1);
      if (backend === 'fsmrf') await until(() => (sharedFiles().length === 0 ? true : null), 5_000, 'the fetched file removed');

      for (const c of [a, b]) expect((await s.api.post(`/calls/${c.id}/hangup`, undefined)).status).to.equal(200);
      for (const r of await Promise.all([a.x.done, b.x.done])) expect(r.code, r.errors + r.messages.slice(-3000)).to.equal(0);
    });

    /**
     * On fsmrf, samples every 10 ms whether the member of channel `uuid` is out of hold in its switch room
     * (esl/ conference rooms); stop() ends the sampling and gives how many samples found it so. Embedded: 0.
     */
    function watchUnheld(uuid: string): { stop: () => number } {
      type Rooms = { all(): { members: Map<number, { held: boolean; channel: { uuid: string } }> }[] };
      const rooms = (s.p.switch?.sw.esl.api as unknown as { conferences?: Rooms } | undefined)?.conferences;
      let unheld = 0;
      const timer = setInterval(() => {
        for (const room of rooms?.all() ?? []) for (const m of room.members.values()) if (m.channel.uuid === uuid && !m.held) unheld++;
      }, 10);
      return { stop: () => (clearInterval(timer), unheld) };
    }

    // fsmrf only: the room's hold of the member (member-hold.ts); a URL of its own, as both backends cache the
    // slow URL fetched before (defined for fsmrf alone: nothing is left pending on the engine)
    const fsmrfIt = (title: string, fn: () => Promise<void>) => (backend === 'fsmrf' ? it(title, fn) : undefined);
    fsmrfIt('a stop or a change of the music while held keeps the member held: the room never hears it meanwhile', async () => {
      const conf = await conferencesRepo(s.t.ctx.db).create({ customer_id: s.f.customer.id, type: 'conference', name: `member hold change ${Date.now()}` });
      const a = await member(conf.id, A, ['sendonly', 'sendrecv']);
      const b = await member(conf.id, B, []);
      await Promise.all([a.party.toneTurns(B, true, 15_000), b.party.toneTurns(A, true, 15_000)]);
      expect((await s.api.post(`/calls/${a.id}/hold`, { music: musicUrl })).status).to.equal(200);
      await Promise.all([a.party.toneTurns(MUSIC, true, 10_000), b.party.toneTurns(A, false, 10_000)]);
      const call = s.p.app.calls.get(a.id);
      if (!(call instanceof CallSession) || !call.endpoint) throw new Error('A has no endpoint on the node');
      /** B's frames since `from` that carry A's tone: A heard by the room */
      const aHeardByB = (from: number) => b.party.heard.filter((h) => h.at >= from && toneIn(h.pcm, 0, h.pcm.length, A)).length;
      const t0 = Date.now();
      const outOfHold = watchUnheld(call.endpoint.uuid);
      try {
        // what a flow's abort or a barge-in does: the music stops, then plays again (media-state.ts's loop)
        await call.endpoint.stopPlayback();
        await b.party.framesHeard(Date.now(), 25);
        await a.party.toneTurns(MUSIC, true, 10_000);

        // a change of music (as a participant's new HoldUrl): held all through the new music's fetch
        const asked = slow.asked;
        await call.mediaState.set({ music: musicUrl.replace('/music.wav', '/slow.wav?changed') });
        await until(() => (slow.asked > asked ? true : null), 10_000, 'the new music asked for');
        await b.party.framesHeard(Date.now(), 50);
        for (const answer of slow.answers.splice(0)) answer();
        await a.party.toneTurns(MUSIC, true, 10_000);
        await b.party.framesHeard(Date.now(), 10);
      } finally {
        expect(outOfHold.stop(), "samples of A out of hold in the switch's room over the stop and the change").to.equal(0);
      }
      expect(b.party.framesBetween(t0), "B's frames over the stop and the change").to.be.greaterThan(85);
      expect(aHeardByB(t0), 'B heard A while A was held').to.equal(0);

      // the hold still ends at the unhold
      const unheld = await request(s.t.app).delete(`/v1.0/calls/${a.id}/hold`).set('Authorization', `Bearer ${s.f.token}`);
      expect(unheld.status, JSON.stringify(unheld.body)).to.equal(200);
      await Promise.all([a.party.toneTurns(MUSIC, false, 10_000), a.party.toneTurns(B, true, 10_000), b.party.toneTurns(A, true, 10_000)]);
      if (backend === 'fsmrf') await until(() => (sharedFiles().length === 0 ? true : null), 5_000, "the music's file removed once the hold ended");

      for (const c of [a, b]) expect((await s.api.post(`/calls/${c.id}/hangup`, undefined)).status).to.equal(200);
      for (const r of await Promise.all([a.x.done, b.x.done])) expect(r.code, r.errors + r.messages.slice(-3000)).to.equal(0);
    });

    it("a held member that hangs up ends its hold's loop: the music's file removed, the room goes on", async () => {
      const conf = await conferencesRepo(s.t.ctx.db).create({ customer_id: s.f.customer.id, type: 'conference', name: `member hold gone ${Date.now()}` });
      const a = await member(conf.id, A, ['sendonly']);
      const b = await member(conf.id, B, []);
      const c = await member(conf.id, 1700, []);
      await Promise.all([a.party.toneTurns(B, true, 15_000), b.party.toneTurns(1700, true, 15_000)]);

      expect((await s.api.post(`/calls/${a.id}/hold`, { music: musicUrl })).status).to.equal(200);
      await a.party.toneTurns(MUSIC, true, 10_000);
      expect((await s.api.post(`/calls/${a.id}/hangup`, undefined)).status).to.equal(200);
      if (backend === 'fsmrf') await until(() => (sharedFiles().length === 0 ? true : null), 5_000, "the music's file removed once the member left");
      // the two others still hear each other
      const t0 = Date.now();
      await b.party.framesHeard(t0, 100);
      expect(b.party.presence(1700, t0), 'B hears C').to.be.greaterThan(HEARS);

      for (const x of [b, c]) expect((await s.api.post(`/calls/${x.id}/hangup`, undefined)).status).to.equal(200);
      for (const r of await Promise.all([a.x.done, b.x.done, c.x.done])) expect(r.code, r.errors + r.messages.slice(-3000)).to.equal(0);
    });

    it("the room's end while a member is held ends the hold's loop: the music's file removed", async () => {
      const conf = await conferencesRepo(s.t.ctx.db).create({ customer_id: s.f.customer.id, type: 'conference', name: `member hold end ${Date.now()}` });
      const a = await member(conf.id, A, ['sendonly']);
      const b = await member(conf.id, B, []);
      await Promise.all([a.party.toneTurns(B, true, 15_000), b.party.toneTurns(A, true, 15_000)]);

      expect((await s.api.post(`/calls/${a.id}/hold`, { music: musicUrl })).status).to.equal(200);
      await a.party.toneTurns(MUSIC, true, 10_000);
      const ended = await request(s.t.app).delete(`/v1.0/conferences/${conf.id}`).set('Authorization', `Bearer ${s.f.token}`);
      expect(ended.status, JSON.stringify(ended.body)).to.equal(200);
      if (backend === 'fsmrf') await until(() => (sharedFiles().length === 0 ? true : null), 5_000, "the music's file removed once the room ended");
      for (const x of [a, b]) await s.api.post(`/calls/${x.id}/hangup`, undefined);
      for (const r of await Promise.all([a.x.done, b.x.done])) expect(r.code, r.errors + r.messages.slice(-3000)).to.equal(0);
    });
  });
}
