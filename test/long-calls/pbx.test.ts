// Long calls of the PBX (issue 52): pickup (group *8 and directed **B) of a call ringing B, and park
// retrieval (A parks itself by dialling the lot, C dials the slot). The dial timeout is 3 s here (a
// pickup must reach the platform while B's leg still rings) and the park timeout 2 s; the joined call
// is held past three times the longest, both parties still up (rows progressing, each hears the
// other, no BYE), then C hangs up and the records say C.
import { expect } from 'chai';
import { DEFAULT_FEATURE_CODES } from '../../core/pbx/feature-codes';
import { parkSlots } from '../../core/pbx/park-slots';
import { pbxSettingsRepo } from '../../core/pbx/settings';
import { extensionsRepo } from '../../core/repos/extensions';
import type { CallRow } from '../../core/repos/calls';
import { killAllSipp, until, type SippResult } from '../../testkit/media-app/harness';
import { callUp, callWithStatus, hangupOf } from '../../testkit/long-calls/calls';
import { holdFor } from '../../testkit/long-calls/hold';
import { holdPast } from '../../testkit/long-calls/timers';
import { cancelledUas, startStack, type Stack } from '../xfer/support';
import { answerOn, call, caller, callWhere, hears, phone, type Phone } from '../pbx/support';

const [TONE_A, TONE_B, TONE_C] = [400, 1600, 2000];
const DIAL_TIMEOUT_MS = 3000;
const PARK_TIMEOUT_SEC = 2;
const HOLD_MS = holdPast(DIAL_TIMEOUT_MS);
/** C hangs up this long after its answer: past the hold and the checks. */
const C_HANGS_UP_MS = HOLD_MS + 3500;

describe('long calls: pickup and park retrieval', function () {
  this.timeout(60_000);
  let s: Stack;
  let cid: string;
  const phones: Phone[] = [];

  before(async () => {
    s = await startStack({ CALL_DIAL_TIMEOUT_MS: String(DIAL_TIMEOUT_MS) });
    cid = s.f.customer.id;
    await pbxSettingsRepo(s.t.ctx.db).put(cid, { ...DEFAULT_FEATURE_CODES, park_timeout_sec: PARK_TIMEOUT_SEC });
  });
  after(async () => {
    killAllSipp();
    for (const p of phones) p.audio.close();
    await s?.close();
  });

  const newPhone = async (freq: number, groups: string[] = []) => {
    const p = await phone(s, cid, freq);
    if (groups.length) await extensionsRepo(s.t.ctx.db).update(p.id, { pickup_groups: groups });
    phones.push(p);
    return p;
  };
  const ok = (r: SippResult, who: string) => expect(r.code, `${who}: ${r.errors}${r.messages.slice(-2000)}`).to.equal(0);
  /** The incoming call of phone `p` once up. */
  const callOf = (p: Phone, what: string) => callWhere(s, { customer_id: cid, direction: 'incoming', from: p.extension }, 'progressing', what);

  /** A and C joined: held, each hears the other, C hangs up (its scenario), the records say C. */
  async function heldThenCHangsUp(a: Phone, c: Phone, aPhone: { done: Promise<SippResult> }, cPhone: { done: Promise<SippResult> }, aRow: CallRow) {
    const cRow = await callOf(c, 'C up');
    await callUp(s.t.ctx.db, aRow.id, 'A up');
    await hears(a.audio, TONE_C, 'A hears C');
    await holdFor(HOLD_MS, {
      db: s.t.ctx.db,
      calls: [aRow.id, cRow.id],
      parties: [
        { name: 'A’s phone', done: aPhone.done },
        { name: 'C’s phone', done: cPhone.done },
      ],
    });
    await hears(a.audio, TONE_C, 'A hears C after the hold');
    await hears(c.audio, TONE_A, 'C hears A after the hold');
    const [rc, ra] = await Promise.all([cPhone.done, aPhone.done]);
    ok(rc, 'C');
    ok(ra, 'A');
    expect(hangupOf(await callWithStatus(s.t.ctx.db, cRow.id, 'hangup', 'C ended'))).to.deep.equal({ hangup_by: 'remote', hangup_reason: 'normal' });
    expect(hangupOf(await callWithStatus(s.t.ctx.db, aRow.id, 'hangup', 'A ended'))).to.deep.equal({ hangup_by: 'local', hangup_reason: 'normal' });
  }

  for (const [name, code] of [
    ['group pickup *8', () => '*8'],
    ['directed pickup **B', (b: Phone) => `**${b.extension}`],
  ] as const) {
    it(`${name}: C answers A’s call ringing B; held past 3× the dial timeout, C hangs up`, async () => {
      const [a, b, c] = [await newPhone(TONE_A), await newPhone(TONE_B, ['sales']), await newPhone(TONE_C, ['sales'])];
      const bPhone = await answerOn(b, cancelledUas());
      const aPhone = await call(s, a, caller({ user: a.user, domain: a.domain, target: b.extension, rtpPort: a.audio.port, byeTimeoutMs: 60_000 }));
      await callWhere(s, { customer_id: cid, direction: 'outgoing', to: b.extension }, 'ringing', 'B rings');
      const cPhone = await call(s, c, caller({ user: c.user, domain: c.domain, target: code(b), rtpPort: c.audio.port, hangupAfterMs: C_HANGS_UP_MS }));
      ok(await bPhone.done, 'B (cancelled)');
      await heldThenCHangsUp(a, c, aPhone, cPhone, await callOf(a, 'A up'));
    });
  }

  it('park retrieval: A parks itself, C dials the slot; held past 3× the dial and park timeouts, C hangs up', async () => {
    const [a, c] = [await newPhone(TONE_A), await newPhone(TONE_C)];
    const slots = parkSlots(s.p.redis, s.p.config.redisKeyPrefix);
    const aPhone = await call(s, a, caller({ user: a.user, domain: a.domain, target: '700', rtpPort: a.audio.port, byeTimeoutMs: 60_000 }));
    const parked = await until(async () => (await slots.list(cid))[0] ?? null, 20_000, 'A parked');
    const cPhone = await call(s, c, caller({ user: c.user, domain: c.domain, target: String(parked.slot), rtpPort: c.audio.port, hangupAfterMs: C_HANGS_UP_MS }));
    await heldThenCHangsUp(a, c, aPhone, cPhone, await callUp(s.t.ctx.db, parked.call_id, 'A up'));
  });
});
