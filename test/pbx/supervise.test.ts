// Supervisor with real phones (sipp, each phone's audio a tone of its own): the customer A (400 Hz)
// calls the agent B (1600 Hz); the supervisor S (2800 Hz, louder) dials *1 + B's extension.
// listen: S hears A and B, nobody hears S; whisper (PUT): B hears S, A does not (A's energy at
// 2800 Hz at least 60 dB below B's, 200 ms Goertzel blocks); barge: everyone hears everyone; S's
// in-band keys 4 and 5 switch back to listen and whisper. S's
// leg ending leaves A and B talking; the call ending releases S (the REST supervisor, rung by POST).
import { expect } from 'chai';
import { RtpParty } from '../../testkit/conference/party';
import { eventsFor, sleep, until } from '../../testkit/media-app/harness';
import { DEFAULT_FEATURE_CODES } from '../../core/pbx/feature-codes';
import { pbxSettingsRepo } from '../../core/pbx/settings';
import { party, type Stack } from '../xfer/support';
import { silentFor } from '../../testkit/count-waits';
import { answerOn, call, caller, callWhere, framesWith, hears, shareOf, type Phone, usePhoneStack } from './support';
import { api, dbAbove, powerAt } from './supervise-support';

const [F_A, F_B, F_S] = [400, 1600, 2800];

describe('pbx: supervisor', function () {
  this.timeout(180_000);
  let s: Stack;
  let cid: string;
  const phoneStack = usePhoneStack((x) => ((s = x), (cid = x.f.customer.id)));

  const newPhone = async (freq: number, amplitude?: number) => {
    const p = await phoneStack.newPhone(freq);
    if (amplitude) {
      p.audio.close();
      p.audio = await RtpParty.open(freq, amplitude);
    }
    return p;
  };
  const supervisors = (...exts: string[]) => pbxSettingsRepo(s.t.ctx.db).put(cid, { ...DEFAULT_FEATURE_CODES, supervisor_extensions: exts });

  /** A calls B; resolves once they hear each other, with B's leg (the supervised call) and A's. */
  async function talking(a: Phone, b: Phone) {
    const bPhone = await answerOn(b, party({ rtpPort: b.audio.port, byeTimeoutMs: 120_000 }));
    const aPhone = await call(s, a, caller({ user: a.user, domain: a.domain, target: b.extension, rtpPort: a.audio.port, byeTimeoutMs: 120_000 }));
    await hears(a.audio, F_B, 'A hears B');
    await hears(b.audio, F_A, 'B hears A');
    const bRow = await callWhere(s, { customer_id: cid, direction: 'outgoing', to: b.extension }, 'progressing', "B's leg up");
    const aRow = await callWhere(s, { customer_id: cid, direction: 'incoming', from: a.extension }, 'progressing', "A's call up");
    return { aPhone, bPhone, aRow, bRow };
  }

  it('*1 + EXT listens; whisper reaches the agent only (60 dB); barge reaches both; S leaving leaves the call untouched', async () => {
    const [a, b, sup] = [await newPhone(F_A), await newPhone(F_B), await newPhone(F_S, 12000)];
    await supervisors(sup.extension);
    const { aPhone, bPhone, aRow, bRow } = await talking(a, b);
    // what A and B hear of S, counted from before S dials: in listen not one frame, the join's included
    const [aHearsS, bHearsS] = [framesWith(a.audio, F_S), framesWith(b.audio, F_S)];
    const [aHeardS, bHeardS] = [await aHearsS(), await bHearsS()];
    const sPhone = await call(s, sup, caller({ user: sup.user, domain: sup.domain, target: `*1${b.extension}`, rtpPort: sup.audio.port, byeTimeoutMs: 120_000 }));
    const rec = await until(async () => ((await api(s).get(`/calls/${bRow.id}/supervise`)).status === 200 ? (await api(s).get(`/calls/${bRow.id}/supervise`)).body : null), 20_000, 'supervision up');
    expect(rec).to.include({ call_id: bRow.id, mode: 'listen', status: 'active' });
    // listen: S hears both sides, nobody hears S, A and B still hear each other
    await hears(sup.audio, F_A, 'S hears A');
    await hears(sup.audio, F_B, 'S hears B');
    await hears(a.audio, F_B, 'A still hears B');
    await hears(b.audio, F_A, 'B still hears A');
    // (over the checks above and 1.5 s of frames more: S's tone is loud, a frame of it would be counted)
    const since = Date.now();
    await Promise.all([a.audio.framesHeard(since, 75), b.audio.framesHeard(since, 75)]);
    expect((await aHearsS()) - aHeardS, 'A does not hear S, not one frame since S dialled').to.equal(0);
    expect((await bHearsS()) - bHeardS, 'B does not hear S, not one frame since S dialled').to.equal(0);
    // whisper: B hears S, A does not
    expect((await api(s).put(`/calls/${bRow.id}/supervise`, { mode: 'whisper' })).status).to.equal(200);
    await hears(b.audio, F_S, 'B hears the whisper');
    await sleep(2500);
    const [toAgent, toCustomer] = [powerAt(b.audio, F_S, 2000), powerAt(a.audio, F_S, 2000)];
    const gap = dbAbove(toAgent, toCustomer);
    expect(gap, `the customer's energy at ${F_S} Hz is ${gap.toFixed(1)} dB below the agent's`).to.be.at.least(60);
    expect(shareOf(a.audio, F_S, 2000)).to.equal(0);
    await hears(a.audio, F_B, 'A still hears B while B is coached');
    // barge: A hears S too
    expect((await api(s).put(`/calls/${bRow.id}/supervise`, { mode: 'barge' })).status).to.equal(200);
    await hears(a.audio, F_S, 'A hears S in barge');
    await hears(b.audio, F_S, 'B hears S in barge');
    await hears(sup.audio, F_A, 'S hears A in barge');
    // the supervisor's keys switch modes (ChanSpy's d option): 4 listen, 5 whisper
    sup.audio.pressKey('4');
    await until(async () => (await api(s).get(`/calls/${bRow.id}/supervise`)).body.mode === 'listen', 10_000, 'key 4: listen');
    // (the mode is told once the mix has changed: only what was in flight may still come)
    await silentFor(framesWith(b.audio, F_S), 1000, 'B no longer hears S', { settleMs: 500 });
    sup.audio.pressKey('5');
    await until(async () => (await api(s).get(`/calls/${bRow.id}/supervise`)).body.mode === 'whisper', 10_000, 'key 5: whisper');
    await hears(b.audio, F_S, 'B hears the whisper again');
    // S's leg ends: A and B talk on, nothing of S
    const sRow = await callWhere(s, { customer_id: cid, direction: 'incoming', from: sup.extension }, 'progressing', "S's call");
    expect((await s.api.post(`/calls/${sRow.id}/hangup`, undefined)).status).to.equal(200);
    expect((await sPhone.done).code).to.equal(0);
    await until(async () => (await api(s).get(`/calls/${bRow.id}/supervise`)).status === 404, 10_000, 'supervision gone');
    await Promise.all([silentFor(framesWith(a.audio, F_S), 1000, 'A hears nothing of S after it left'), silentFor(framesWith(b.audio, F_S), 1000, 'B hears nothing of S after it left')]);
    await hears(a.audio, F_B, 'A hears B after S left');
    await hears(b.audio, F_A, 'B hears A after S left');
    const types = (await eventsFor(s.p.redis, rec.id)).map((e) => [e.event_type, e.data.mode, e.data.reason ?? '']);
    expect(types).to.deep.equal([
      ['supervise_started', 'listen', ''],
      ['supervise_updated', 'whisper', ''],
      ['supervise_updated', 'barge', ''],
      ['supervise_updated', 'listen', ''],
      ['supervise_updated', 'whisper', ''],
      ['supervise_ended', 'whisper', 'supervisor_left'],
    ]);
    expect((await s.api.post(`/calls/${aRow.id}/hangup`, undefined)).status).to.equal(200);
    const [ra, rb] = await Promise.all([aPhone.done, bPhone.done]);
    expect(ra.code, ra.errors).to.equal(0);
    expect(rb.code, rb.errors).to.equal(0);
  });

  it('POST rings the supervisor; the call ending releases it', async () => {
    const [a, b, sup] = [await newPhone(F_A), await newPhone(F_B), await newPhone(F_S)];
    const { aPhone, bPhone, aRow, bRow } = await talking(a, b);
    const sPhone = await answerOn(sup, party({ rtpPort: sup.audio.port, byeTimeoutMs: 60_000 }));
    const r = await api(s).post(`/calls/${bRow.id}/supervise`, { mode: 'listen', destination: { type: 'extension', target: sup.extension } });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    expect(r.body).to.include({ call_id: bRow.id, mode: 'listen', status: 'ringing', supervisor_call_id: null });
    expect((await api(s).post(`/calls/${bRow.id}/supervise`, { mode: 'barge', destination: { type: 'extension', target: sup.extension } })).status, 'one at a time').to.equal(409);
    await hears(sup.audio, F_A, 'S hears A');
    await hears(sup.audio, F_B, 'S hears B');
    // the call ends: S gets its BYE
    expect((await s.api.post(`/calls/${aRow.id}/hangup`, undefined)).status).to.equal(200);
    const [ra, rb, rs] = await Promise.all([aPhone.done, bPhone.done, sPhone.done]);
    expect(ra.code, ra.errors).to.equal(0);
    expect(rb.code, rb.errors).to.equal(0);
    expect(rs.code, rs.errors).to.equal(0);
    const ended = await until(async () => (await eventsFor(s.p.redis, r.body.id)).find((e) => e.event_type === 'supervise_ended') ?? null, 10_000, 'supervise_ended');
    expect(ended.data.reason).to.equal('call_ended');
    expect((await api(s).get(`/calls/${bRow.id}/supervise`)).status).to.equal(404);
  });
});
