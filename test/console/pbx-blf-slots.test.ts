// The busy-lamps page's park slots follow the slot's published state (what a desk phone's BLF key on
// the slot shows), in whatever order it comes beside the parkedcall events. A park publishes the
// slot's state to presence apart from its call_parked event: a page that re-read the field on the
// event before the write landed showed the slot free until reloaded (a CI failure of
// test/console/pbx-parked). The page now subscribes to the slots' state topic (parkslot) and to no
// park event, which the test asserts from the frames the browser sent; then the event comes first and
// the slot's state after it, by hand, on control-api's own Redis: the lamp lights, then goes free.
import { expect } from 'chai';
import { createFixture, type Fixture } from '../../testkit/api';
import { chromiumAvailable } from '../../testkit/browser';
import { eventPublisher } from '../../core/events/bus';
import { publishResourceEvent } from '../../core/events/catalogue';
import { newId } from '../../core/ids';
import { PresenceStore } from '../../core/presence/store';
import { until } from '../../testkit/poll';
import { js, signIn, startConsole, type ConsoleRig } from './support';

describe('console: busy lamps of park slots follow the slot state, after the park events too (Chromium)', function () {
  this.timeout(60_000);
  let rig: ConsoleRig;
  let f: Fixture;
  before(async function () {
    if (!chromiumAvailable()) this.skip();
    rig = await startConsole();
    f = await createFixture(rig.t.ctx);
  });
  after(async () => {
    await rig?.close();
  });

  it('a slot occupied after call_parked was published shows occupied, and free after call_unparked', async () => {
    const cid = f.customer.id;
    const presence = new PresenceStore(rig.t.ctx.redis, rig.t.ctx.config.redisKeyPrefix);
    const events = eventPublisher(rig.t.ctx);
    const page = await signIn(rig, f.admin.username, f.password);
    await page.waitForSelector('nav a[aria-current=page]');
    // the page's socket as the browser has it: what it subscribes to, what reaches it
    const cdp = await page.createCDPSession();
    await cdp.send('Network.enable');
    const subscribed: string[] = [];
    cdp.on('Network.webSocketFrameSent', (e) => subscribed.push(e.response.payloadData));
    await page.goto(`${rig.base}/console/#/blf`);
    await page.waitForSelector('.socket-open');
    const slot = (state: string) => `.lamps.slots li[data-slot="702"][data-state=${state}]`;
    await page.waitForSelector(slot('free'));

    // the lamp follows the slot's own state topic, never the park events: their order cannot matter
    await until(() => subscribed.some((m) => m.includes(`customer_id:${cid}:parkslot`)), 5000, 'the page subscribed to the slots state');
    expect(
      subscribed.filter((m) => m.includes(':parkedcall')),
      'the page listens to no park event',
    ).to.deep.equal([]);

    const callId = newId();
    const rec = { id: callId, call_id: callId, customer_id: cid, slot: 702, tm_parked: new Date().toISOString() };
    await publishResourceEvent(events, 'call_parked', rec);
    await presence.publishState(cid, '702', [{ id: callId, state: 'confirmed', direction: 'recipient', remote: { uri: 'sip:2201@example.test', display: 'Alice' }, since: Date.now() }]);
    await page.waitForSelector(slot('occupied'), { timeout: 5000 });
    expect(await js<string>(page, `document.querySelector('.lamps.slots li[data-slot="702"]').innerText`)).to.include('2201');

    await publishResourceEvent(events, 'call_unparked', { ...rec, reason: 'retrieved' });
    await presence.publishState(cid, '702', []);
    await page.waitForSelector(slot('free'), { timeout: 5000 });
    expect(await js<number>(page, `document.querySelectorAll('.lamps.slots li[data-state=occupied]').length`)).to.equal(0);
  });
});
