// Call park with real phones (sipp, each phone's audio a tone of its own: testkit/conference/party.ts).
// A calls B; B blind-transfers (REFER) to the lot 700: A is parked in the first free slot and hears
// the music on hold, B hears the slot spoken and is released; C dials the slot and talks to A. A slot
// parked too long rings B back; an empty slot is refused; A hanging up while parked frees the slot.
import { expect } from 'chai';
import { RtpParty, toneIn } from '../../testkit/conference/party';
import { eventsFor, sleep, until } from '../../testkit/media-app/harness';
import { parkSlots } from '../../core/pbx/park-slots';
import { DEFAULT_FEATURE_CODES } from '../../core/pbx/feature-codes';
import { pbxSettingsRepo } from '../../core/pbx/settings';
import { espeakLevels } from '../../testkit/speech/support';
import { party, type Stack } from '../xfer/support';
import { answerOn, call, caller, callWhere, hears, refusedCaller, shareOf, type Phone, usePhoneStack } from './support';

// none near the notes of the music on hold (523-1175 Hz)
const [TONE_A, TONE_B, TONE_C] = [400, 1600, 2000];

describe('pbx: park', function () {
  this.timeout(150_000);
  let s: Stack;
  let cid: string;
  const { newPhone, phones } = usePhoneStack((x) => ((s = x), (cid = x.f.customer.id)));

  const slots = () => parkSlots(s.p.redis, s.p.config.redisKeyPrefix);

  /** A calls B, B answers and (after referAfterMs) REFERs to the lot; resolves once A is parked. */
  async function parkedByB(a: Phone, b: Phone) {
    const bPhone = await answerOn(b, party({ rtpPort: b.audio.port, referTo: `sip:700@${b.domain}`, referAfterMs: 2500, byeTimeoutMs: 30_000 }));
    const aPhone = await call(s, a, caller({ user: a.user, domain: a.domain, target: b.extension, rtpPort: a.audio.port }));
    await hears(a.audio, TONE_B, 'A hears B before the park');
    await hears(b.audio, TONE_A, 'B hears A before the park');
    const parked = await until(async () => (await slots().list(cid)).find((p) => p.parker?.target === b.extension) ?? null, 20_000, 'A parked');
    const aRow = await callWhere(s, { customer_id: cid, direction: 'incoming', from: a.extension }, 'progressing', 'A up');
    expect(parked.call_id).to.equal(aRow.id);
    return { aPhone, bPhone, parked, aRow };
  }

  it('B blind-transfers A to the lot: A parked in 701 with music, B hears the slot; C dials 701 and talks to A', async () => {
    const [a, b, c] = [await newPhone(TONE_A), await newPhone(TONE_B), await newPhone(TONE_C)];
    const { aPhone, bPhone, parked, aRow } = await parkedByB(a, b);
    expect(parked.slot).to.equal(701);
    // B: 202, NOTIFY 100 and 200, then our BYE; between the REFER and the BYE it heard the announcement
    const rb = await bPhone.done;
    expect(rb.code, rb.errors + rb.messages.slice(-2000)).to.equal(0);
    const spoken = b.audio.heard.filter((h) => loud(h.pcm) && !toneIn(h.pcm, 0, h.pcm.length, TONE_A));
    // as long as espeak-ng says "Parked on 7 0 1" (the platform's embedded TTS voice), give or take
    const said = espeakLevels('Parked on 7 0 1').filter((l) => l > 200).length;
    expect(spoken.length, `B heard the slot announced (${spoken.length} speech frames, espeak ${said})`).to.be.within(said * 0.6, said * 1.5);
    // A hears the music on hold, nothing of B
    await sleep(1000);
    expect(shareOf(a.audio, TONE_B)).to.be.lessThan(0.05);
    expect(a.audio.framesBetween(Date.now() - 800)).to.be.greaterThan(10);
    expect(a.audio.heard.filter((h) => h.at > Date.now() - 800 && loud(h.pcm)).length, 'A hears music').to.be.greaterThan(10);
    // C dials the slot: C and A talk, each hears the other's tone
    const cPhone = await call(s, c, caller({ user: c.user, domain: c.domain, target: '701', rtpPort: c.audio.port, hangupAfterMs: 6000 }));
    await hears(a.audio, TONE_C, 'A hears C');
    await hears(c.audio, TONE_A, 'C hears A');
    expect(await slots().list(cid)).to.deep.equal([]);
    // C hangs up: A's call ends with it
    const [rc, ra] = await Promise.all([cPhone.done, aPhone.done]);
    expect(rc.code, rc.errors).to.equal(0);
    expect(ra.code, ra.errors).to.equal(0);
    const types = (await eventsFor(s.p.redis, aRow.id)).map((e) => [e.event_type, e.data.reason ?? '']);
    expect(types).to.deep.include(['call_parked', '']);
    expect(types).to.deep.include(['call_unparked', 'retrieved']);
  });

  it('a call parked too long rings the parker back; its answer takes the call', async () => {
    const [a, b] = [await newPhone(TONE_A), await newPhone(TONE_B)];
    await pbxSettingsRepo(s.t.ctx.db).put(cid, { ...DEFAULT_FEATURE_CODES, park_timeout_sec: 4 });
    try {
      const { aPhone, bPhone, aRow } = await parkedByB(a, b);
      expect((await bPhone.done).code).to.equal(0);
      // B's phone takes the ring-back (its audio anew: an RtpParty keeps the first far end it heard)
      const bAgain = await RtpParty.open(TONE_B);
      phones.push({ ...b, audio: bAgain });
      const ring = await answerOn(b, party({ rtpPort: bAgain.port, byeTimeoutMs: 40_000 }));
      await hears(a.audio, TONE_B, 'A hears B after the ring-back', { timeoutMs: 30_000 });
      await hears(bAgain, TONE_A, 'B hears A after the ring-back');
      expect(await slots().list(cid)).to.deep.equal([]);
      const types = (await eventsFor(s.p.redis, aRow.id)).map((e) => [e.event_type, e.data.reason ?? '']);
      expect(types).to.deep.include(['park_timeout', '']);
      expect(types).to.deep.include(['call_unparked', 'ringback_answered']);
      expect((await s.api.post(`/calls/${aRow.id}/hangup`, undefined)).status).to.equal(200);
      const [ra, rr] = await Promise.all([aPhone.done, ring.done]);
      expect(ra.code, ra.errors).to.equal(0);
      expect(rr.code, rr.errors).to.equal(0);
    } finally {
      await pbxSettingsRepo(s.t.ctx.db).put(cid, DEFAULT_FEATURE_CODES);
    }
  });

  it('a dial to the lot parks the caller itself: it hears its slot, then music; the slot dialled retrieves it', async () => {
    const [a, c] = [await newPhone(TONE_A), await newPhone(TONE_C)];
    const aPhone = await call(s, a, caller({ user: a.user, domain: a.domain, target: '700', rtpPort: a.audio.port }));
    const parked = await until(async () => (await slots().list(cid))[0] ?? null, 20_000, 'A parked');
    expect(parked.parker).to.equal(null);
    await until(() => a.audio.heard.filter((h) => loud(h.pcm)).length > 100, 15_000, 'A hears its slot and the music');
    const cPhone = await call(s, c, caller({ user: c.user, domain: c.domain, target: String(parked.slot), rtpPort: c.audio.port, hangupAfterMs: 4000 }));
    await hears(a.audio, TONE_C, 'A hears C');
    await hears(c.audio, TONE_A, 'C hears A');
    const [rc, ra] = await Promise.all([cPhone.done, aPhone.done]);
    expect(rc.code, rc.errors).to.equal(0);
    expect(ra.code, ra.errors).to.equal(0);
  });

  it('the timeout with nobody to ring back: the fallback hangs the parked call up and frees the slot', async () => {
    const a = await newPhone(TONE_A);
    await pbxSettingsRepo(s.t.ctx.db).put(cid, { ...DEFAULT_FEATURE_CODES, park_timeout_sec: 5 });
    try {
      const aPhone = await call(s, a, caller({ user: a.user, domain: a.domain, target: '700', rtpPort: a.audio.port, byeTimeoutMs: 30_000 }));
      const parked = await until(async () => (await slots().list(cid))[0] ?? null, 20_000, 'A parked');
      const ra = await aPhone.done; // the platform's BYE
      expect(ra.code, ra.errors).to.equal(0);
      expect(await slots().list(cid)).to.deep.equal([]);
      const types = (await eventsFor(s.p.redis, parked.call_id)).map((e) => [e.event_type, e.data.reason ?? '']);
      expect(types).to.deep.include(['park_timeout', '']);
      expect(types).to.deep.include(['call_unparked', 'timeout_fallback']);
    } finally {
      await pbxSettingsRepo(s.t.ctx.db).put(cid, DEFAULT_FEATURE_CODES);
    }
  });

  it('an empty slot is refused 404 "Parking Slot Empty" before any call exists', async () => {
    const c = await newPhone(TONE_C);
    const before = (await s.t.ctx.db('calls').where({ customer_id: cid }).select('id')).length;
    const r = await (await call(s, c, refusedCaller({ user: c.user, domain: c.domain, target: '705', status: 404, phrase: 'Parking Slot Empty' }))).done;
    expect(r.code, r.errors + r.messages.slice(-2000)).to.equal(0);
    expect((await s.t.ctx.db('calls').where({ customer_id: cid }).select('id')).length).to.equal(before);
  });

  it('A hangs up while parked: the slot frees (call_unparked, reason hangup)', async () => {
    const [a, b] = [await newPhone(TONE_A), await newPhone(TONE_B)];
    const bPhone = await answerOn(b, party({ rtpPort: b.audio.port, referTo: `sip:700@${b.domain}`, referAfterMs: 1500, byeTimeoutMs: 30_000 }));
    const aPhone = await call(s, a, caller({ user: a.user, domain: a.domain, target: b.extension, rtpPort: a.audio.port, hangupAfterMs: 9000 }));
    const parked = await until(async () => (await slots().list(cid))[0] ?? null, 20_000, 'A parked');
    expect((await bPhone.done).code).to.equal(0);
    const ra = await aPhone.done;
    expect(ra.code, ra.errors).to.equal(0);
    await until(async () => (await slots().list(cid)).length === 0, 10_000, 'the slot frees');
    await until(async () => (await eventsFor(s.p.redis, parked.call_id)).some((e) => e.event_type === 'call_unparked' && e.data.reason === 'hangup'), 10_000, 'call_unparked hangup');
  });
});

/** A frame that is not silence. */
function loud(pcm: Int16Array): boolean {
  let abs = 0;
  for (const v of pcm) abs += Math.abs(v);
  return abs / pcm.length > 200;
}
