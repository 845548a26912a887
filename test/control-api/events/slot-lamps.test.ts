// A park slot's lamp on /v1.0/ws: every change of a slot's published state (core/presence/store.ts,
// what media-app's slot lamps write and a desk phone's BLF key reads) reaches a socket subscribed to
// the customer's `parkslot` topic as `parkslot_state_updated` with the slot's state as it stands when
// read (two quick changes may both read the later); a number outside the customer's slot range sends
// nothing.
import { expect } from 'chai';
import { createFixture } from '../../../testkit/api';
import { until } from '../../../testkit/media-app/harness';
import { PresenceStore } from '../../../core/presence/store';
import { startWs, connect, type WsHarness } from './support';

describe('WebSocket /v1.0/ws: parkslot_state_updated (real Redis presence)', function () {
  this.timeout(30_000);
  let h: WsHarness;
  before(async () => {
    h = await startWs();
  });
  after(async () => h.close());

  it("sends each change of a park slot's state, as it stands; nothing for a number that is no slot", async () => {
    const f = await createFixture(h.t.ctx);
    const cid = f.customer.id;
    const presence = new PresenceStore(h.t.ctx.redis, h.t.ctx.config.redisKeyPrefix);
    const c = await connect(h.url(`accesskey=${f.accesskey}`));
    c.send({ type: 'subscribe', topics: [`customer_id:${cid}:parkslot`] });
    // the subscription holds once a change of slot 720 comes through
    await until(
      async () => {
        await presence.publishState(cid, '720', []);
        return c.frames.length > 0;
      },
      5000,
      'a frame of slot 720',
    );
    const from = c.frames.length;
    const callId = '0b7f6d1e-4a0c-4c43-9a55-0d8f0b4d2a11';
    await presence.publishState(cid, '800', [{ id: callId, state: 'confirmed' }]);
    await presence.publishState(cid, '702', [{ id: callId, state: 'confirmed', direction: 'recipient', remote: { uri: 'sip:2201@example.test', display: 'Alice' }, since: Date.UTC(2026, 10, 28, 9) }]);
    await until(async () => c.frames.slice(from).some((m) => m.data.slot === 702), 5000, 'the frame of slot 702 occupied');
    await presence.publishState(cid, '702', []);
    await until(async () => c.frames.slice(from).filter((m) => m.data.slot === 702).length >= 2, 5000, 'the frame of slot 702 free');
    const frames = c.frames.slice(from).filter((m) => m.data.slot !== 720);
    expect(frames.map((m) => [m.event_type, m.topic, m.data.slot, m.data.state])).to.deep.equal([
      ['parkslot_state_updated', `customer_id:${cid}:parkslot:702`, 702, 'occupied'],
      ['parkslot_state_updated', `customer_id:${cid}:parkslot:702`, 702, 'free'],
    ]);
    expect(frames[0]!.data).to.deep.include({
      customer_id: cid,
      dialogs: [{ id: callId, state: 'confirmed', direction: 'recipient', remote: 'sip:2201@example.test', remote_name: 'Alice', tm_start: '2026-11-28T09:00:00.000Z' }],
    });
    expect(frames[1]!.data.dialogs).to.deep.equal([]);
    c.socket.close();
  });
});
