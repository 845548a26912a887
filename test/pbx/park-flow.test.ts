// The flow action `park` (our extension) with real phones: A calls a number whose flow parks the call
// in slot 712; A hears its slot spoken, then music on hold; C dials 712 and talks to A; when C hangs
// up, A's call ends with it.
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { parkSlots } from '../../core/pbx/park-slots';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { killAllSipp, until } from '../../testkit/media-app/harness';
import { startStack, type Stack } from '../xfer/support';
import { call, caller, hears, phone, type Phone } from './support';

const [TONE_A, TONE_C] = [400, 2000];

describe('pbx: the flow action park', function () {
  this.timeout(120_000);
  let s: Stack;
  const phones: Phone[] = [];

  before(async () => {
    s = await startStack();
  });
  after(async () => {
    killAllSipp();
    for (const p of phones) p.audio.close();
    await s?.close();
  });

  it('parks the flow’s call in its slot; dialling the slot retrieves it', async () => {
    const cid = s.f.customer.id;
    const [a, c] = [await phone(s, cid, TONE_A), await phone(s, cid, TONE_C)];
    phones.push(a, c);
    const flow = await flowsRepo(s.t.ctx.db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'answer' }, { type: 'park', option: { slot: 712 } }, { type: 'talk', option: { text: 'never said' } }]),
    });
    const number = `+899300${String(Date.now()).slice(-6)}`;
    await numbersRepo(s.t.ctx.db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
    const aPhone = await call(s, a, caller({ user: a.user, domain: a.domain, target: number, rtpPort: a.audio.port }));
    const parked = await until(async () => (await parkSlots(s.p.redis, s.p.config.redisKeyPrefix).get(cid, 712)) ?? null, 20_000, 'A parked in 712');
    expect(parked.parker).to.equal(null);
    // the slot spoken, then the music: A hears sound that is none of the phones' tones
    await until(() => a.audio.heard.filter((h) => loud(h.pcm)).length > 100, 15_000, 'A hears its slot and the music');
    const cPhone = await call(s, c, caller({ user: c.user, domain: c.domain, target: '712', rtpPort: c.audio.port, hangupAfterMs: 5000 }));
    await hears(a.audio, TONE_C, 'A hears C');
    await hears(c.audio, TONE_A, 'C hears A');
    const [rc, ra] = await Promise.all([cPhone.done, aPhone.done]);
    expect(rc.code, rc.errors).to.equal(0);
    expect(ra.code, ra.errors).to.equal(0);
    expect(await parkSlots(s.p.redis, s.p.config.redisKeyPrefix).list(cid)).to.deep.equal([]);
  });
});

function loud(pcm: Int16Array): boolean {
  let abs = 0;
  for (const v of pcm) abs += Math.abs(v);
  return abs / pcm.length > 200;
}
