// GET /v1.0/conferences/{id}/media_stream: the whole mix of a progressing conference toward the
// client, and the client's audio heard by the participants. Refusals: another customer's
// conference, one that is not progressing.
import { expect } from 'chai';
import request from 'supertest';
import { conferencesRepo } from '../../core/repos/conferences';
import { testDb } from '../../testkit/db';
import { createFixture, type Fixture } from '../../testkit/api';
import { sleep, until } from '../../testkit/media-app/harness';
import { useStreamStack, accept, closed, level, pcmBuffer, placeCall, refusalOf, tone, type PlacedCall, type Stack } from '../../testkit/streams/support';

describe('media streams: GET /conferences/{id}/media_stream', function () {
  this.timeout(120_000);
  let stack: Stack;
  let owner: Fixture;
  let call: PlacedCall | undefined;

  useStreamStack((s) => ({ stack, owner } = s));
  after(() => call?.peer.close());

  const url = (id: string, q: string) => `${stack.base}/v1.0/conferences/${id}/media_stream?${q}`;

  async function progressingConference(): Promise<string> {
    const res = await request(stack.api.app).post('/v1.0/conferences').query({ accesskey: owner.accesskey }).send({ type: 'conference', name: 'stream room' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    await until(async () => (await conferencesRepo(await testDb()).get(res.body.id))?.status === 'progressing', 15_000, 'conference progressing');
    return res.body.id as string;
  }

  it('streams the mix (a participant talking) at 50 chunks a second; the client is heard in the room', async () => {
    const confId = await progressingConference();
    call = await placeCall(stack, owner.customer.id, [{ type: 'answer' }, { type: 'conference_join', option: { conference_id: confId } }, { type: 'hangup' }]);
    await until(async () => (await (await testDb())('conferencecalls').where({ conference_id: confId, status: 'joined' })).length === 1, 15_000, 'participant joined');
    const ws = await accept(url(confId, `encapsulation=sln&token=${owner.token}`));
    const msgs: { at: number; m: Buffer }[] = [];
    ws.on('message', (m: Buffer) => msgs.push({ at: Date.now(), m }));
    await sleep(500);
    const t0 = Date.now();
    const start = msgs.length;
    await sleep(2000);
    const win = msgs.slice(start).filter((x) => x.at - t0 <= 2000);
    expect(win.length).to.be.within(80, 120);
    for (const { m } of msgs) expect(m.length).to.equal(320);
    const loud = win.filter((x) => level(x.m) > 1000).length;
    expect(
      loud,
      `levels ${win
        .slice(0, 30)
        .map((x) => Math.round(level(x.m)))
        .join(',')}`,
    ).to.be.greaterThan(win.length * 0.4);

    const heardBefore = call.peer.levels.length;
    for (let n = 0; n < 50; n++) {
      ws.send(pcmBuffer(tone(n, 500)), { binary: true });
      await sleep(20);
    }
    await sleep(500);
    expect(call.peer.voiced(heardBefore)).to.be.greaterThan(30);

    // the conference ends (DELETE): the stream closes
    const bye = closed(ws);
    const del = await request(stack.api.app).delete(`/v1.0/conferences/${confId}`).query({ accesskey: owner.accesskey });
    expect(del.status).to.equal(200);
    const c = await bye;
    expect(c.code).to.equal(1000);
  });

  it("refuses another customer's conference (404) and one that is not progressing (409 STATE_INVALID)", async () => {
    const confId = await progressingConference();
    const stranger = await createFixture(stack.api.ctx);
    const foreign = await refusalOf(url(confId, `encapsulation=rtp&token=${stranger.token}`));
    expect(foreign.status).to.equal(404);
    expect(foreign.body.error!.reason).to.equal('RESOURCE_NOT_FOUND');
    const missing = await refusalOf(url(confId, `token=${owner.token}`));
    expect(missing.status).to.equal(400);
    expect(missing.body.error!.reason).to.equal('MISSING_REQUEST_PARAMETER');
    await (await testDb())('conferences').where({ id: confId }).update({ status: 'terminating' });
    const r = await refusalOf(url(confId, `encapsulation=rtp&token=${owner.token}`));
    expect(r.status).to.equal(409);
    expect(r.body.error!.reason).to.equal('STATE_INVALID');
  });
});

// On the fsmrf backend a conference is the switch's room (media-app/media-server/fsmrf/conference.ts): it
// has no raw frames of its mix, and mod_audio_fork's playback goes into a channel's outgoing audio, never
// into a room's input, so the stream's other half (the client heard by the participants) cannot be made
// there. The upgrade is refused by name (409 STATE_INVALID naming the fsmrf backend), never a 404 that
// says the conference is not live; the room and its participant go on.
describe('media streams: GET /conferences/{id}/media_stream on the fsmrf backend', function () {
  this.timeout(120_000);
  let stack: Stack;
  let owner: Fixture;
  let call: PlacedCall | undefined;

  useStreamStack((s) => ({ stack, owner } = s), { mediaServer: 'fsmrf' });
  after(() => call?.peer.close());

  it('refuses the stream by name (409 STATE_INVALID, the fsmrf backend named); the room and its participant go on', async () => {
    const res = await request(stack.api.app).post('/v1.0/conferences').query({ accesskey: owner.accesskey }).send({ type: 'conference', name: 'switch room' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const confId = res.body.id as string;
    await until(async () => (await conferencesRepo(await testDb()).get(confId))?.status === 'progressing', 15_000, 'conference progressing');
    call = await placeCall(stack, owner.customer.id, [{ type: 'answer' }, { type: 'conference_join', option: { conference_id: confId } }, { type: 'hangup' }]);
    await until(async () => (await (await testDb())('conferencecalls').where({ conference_id: confId, status: 'joined' })).length === 1, 15_000, 'participant joined');
    for (const encapsulation of ['sln', 'rtp']) {
      const r = await refusalOf(`${stack.base}/v1.0/conferences/${confId}/media_stream?encapsulation=${encapsulation}&token=${owner.token}`);
      expect(r.status, JSON.stringify(r.body)).to.equal(409);
      expect(r.body.error!.reason).to.equal('STATE_INVALID');
      expect(r.body.error!.message).to.match(/media stream of a conference is not available on the fsmrf media backend/);
    }
    // the room goes on: the participant is still joined and the conference progressing
    expect(await (await testDb())('conferencecalls').where({ conference_id: confId, status: 'joined' })).to.have.length(1);
    expect((await conferencesRepo(await testDb()).get(confId))?.status).to.equal('progressing');
  });
});
