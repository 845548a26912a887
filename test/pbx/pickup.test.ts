// Call pickup with real phones (sipp; each phone's audio a tone of its own). A calls B, B's phone
// rings; C, in B's pickup group, dials *8 (group pickup) or **B (directed pickup): C and A talk, B's
// phone gets CANCEL. With nothing ringing, *8 is refused before any call exists.
import { expect } from 'chai';
import { extensionsRepo } from '../../core/repos/extensions';
import { cancelledUas, type Stack } from '../xfer/support';
import { answerOn, call, caller, callWhere, hears, refusedCaller, type Phone, usePhoneStack } from './support';

const [TONE_A, TONE_B, TONE_C] = [400, 1600, 2000];

describe('pbx: pickup', function () {
  this.timeout(120_000);
  let s: Stack;
  let cid: string;
  const phoneStack = usePhoneStack((x) => ((s = x), (cid = x.f.customer.id)));

  const newPhone = async (freq: number, groups: string[] = []) => {
    const p = await phoneStack.newPhone(freq);
    if (groups.length) await extensionsRepo(s.t.ctx.db).update(p.id, { pickup_groups: groups });
    return p;
  };

  /** A calls B, whose phone rings until cancelled; C dials `code`: C and A talk, B's phone is cancelled. */
  async function pickedUp(code: (b: Phone) => string, groups: { b: string[]; c: string[] }) {
    const [a, b, c] = [await newPhone(TONE_A), await newPhone(TONE_B, groups.b), await newPhone(TONE_C, groups.c)];
    const bPhone = await answerOn(b, cancelledUas());
    const aPhone = await call(s, a, caller({ user: a.user, domain: a.domain, target: b.extension, rtpPort: a.audio.port }));
    await callWhere(s, { customer_id: cid, direction: 'outgoing', to: b.extension }, 'ringing', 'B rings');
    const cPhone = await call(s, c, caller({ user: c.user, domain: c.domain, target: code(b), rtpPort: c.audio.port, hangupAfterMs: 5000 }));
    await hears(a.audio, TONE_C, 'A hears C');
    await hears(c.audio, TONE_A, 'C hears A');
    // B's phone got CANCEL (its scenario answers it: 200, 487, ACK)
    const rb = await bPhone.done;
    expect(rb.code, rb.errors + rb.messages.slice(-2000)).to.equal(0);
    expect(rb.messages).to.match(/CANCEL sip:/);
    const bLeg = await callWhere(s, { customer_id: cid, direction: 'outgoing', to: b.extension }, 'hangup', 'B leg ended');
    expect(bLeg.hangup_by).to.equal('local');
    // C hangs up: A's call goes with it
    const [rc, ra] = await Promise.all([cPhone.done, aPhone.done]);
    expect(rc.code, rc.errors).to.equal(0);
    expect(ra.code, ra.errors).to.equal(0);
  }

  it('group pickup *8: C in B’s group answers A’s call ringing B', async () => {
    await pickedUp(() => '*8', { b: ['sales'], c: ['sales', 'support'] });
  });

  it('directed pickup **B: C answers the call ringing B', async () => {
    await pickedUp((b) => `**${b.extension}`, { b: [], c: [] });
  });

  it('nothing ringing: *8 is refused 404 "Nothing To Pick Up", and a call to another group is not picked', async () => {
    const [a, b, c] = [await newPhone(TONE_A), await newPhone(TONE_B, ['sales']), await newPhone(TONE_C, ['support'])];
    const idle = await (await call(s, c, refusedCaller({ user: c.user, domain: c.domain, target: '*8', status: 404, phrase: 'Nothing To Pick Up' }))).done;
    expect(idle.code, idle.errors + idle.messages.slice(-2000)).to.equal(0);
    // B rings, but C is not in B's group
    const bPhone = await answerOn(b, cancelledUas());
    await call(s, a, caller({ user: a.user, domain: a.domain, target: b.extension, rtpPort: a.audio.port }));
    await callWhere(s, { customer_id: cid, direction: 'outgoing', to: b.extension }, 'ringing', 'B rings');
    const other = await (await call(s, c, refusedCaller({ user: c.user, domain: c.domain, target: '*8', status: 404, phrase: 'Nothing To Pick Up' }))).done;
    expect(other.code, other.errors + other.messages.slice(-2000)).to.equal(0);
    // B still rings: A's call, ended by the API, cancels it
    const aRow = await callWhere(s, { customer_id: cid, direction: 'incoming', from: a.extension }, 'ringing', 'A rings');
    expect((await s.api.post(`/calls/${aRow.id}/hangup`, undefined)).status).to.equal(200);
    const rb = await bPhone.done;
    expect(rb.code, rb.errors).to.equal(0);
  });
});
