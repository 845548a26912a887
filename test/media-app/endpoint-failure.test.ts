// A call whose media endpoint the media engine cannot give (every RTP port of the node taken) fails at
// once and cleanly (media-app/call/endpoint.ts, the one allocation site): hangup with cause failure, no
// INVITE sent, no flow started on it (not even with early_execution), nothing left dialing. Before, the
// outgoing leg's allocation (call/factory.ts startOutgoing) swallowed the failure and the call went on
// (its early flow started) until the dialler tried again.
import { hungUpCall } from '../../testkit/call-ends';
import { expect } from 'chai';
import dgram from 'node:dgram';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { callsRepo } from '../../core/repos/calls';
import { repos } from '../../core/repos';
import { numbersRepo } from '../../core/repos/numbers';
import { EMPTY_UUID } from '../../core/ids';
import type { CommandBus } from '../../core/commands/bus';
import type { Endpoint } from '../../media-engine';
import { testDb, truncateAll } from '../../testkit/db';
import { freePort } from '../../testkit/ports';
import { eventsFor, sleep, until, type Platform } from '../../testkit/media-app/harness';
import { startOriginating, type Originating } from './originating';

describe('media-app: a call without a media endpoint fails', function () {
  this.timeout(90_000);
  let o: Originating;
  let p: Platform;
  let bus: CommandBus;
  let held: Endpoint[] = [];
  let sink: dgram.Socket;
  let sinkPort: number;
  const received: string[] = [];

  before(async () => {
    await truncateAll();
    o = await startOriginating({});
    ({ p, bus } = o);
    // the callee: a real UDP socket on loopback that records whatever SIP reaches it
    sinkPort = await freePort();
    sink = dgram.createSocket('udp4');
    sink.on('message', (m, from) => {
      const text = m.toString('utf8');
      received.push(text);
      if (!text.startsWith('INVITE ')) return;
      // a busy callee: 486 with the request's Via, From, To (tagged), Call-ID and CSeq
      const h = (name: string) => text.split('\r\n').filter((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
      const lines = ['SIP/2.0 486 Busy Here', ...h('Via'), ...h('From'), `${h('To')[0]};tag=busy1`, ...h('Call-ID'), ...h('CSeq'), 'Content-Length: 0', '', ''];
      sink.send(lines.join('\r\n'), from.port, from.address);
    });
    await new Promise<void>((r) => sink.bind(sinkPort, '127.0.0.1', r));
  });
  after(async () => {
    sink?.close();
    await Promise.all(held.map((e) => e.destroy().catch(() => undefined)));
    await o?.close();
  });

  // the ports go back after each test, passed or not
  afterEach(() => release());

  /** Takes every RTP port of the node's media engine; returns its refusal. */
  async function exhaustMedia(): Promise<string> {
    for (let i = 0; i < 2000; i++) {
      try {
        held.push(await p.engine().createEndpoint());
      } catch (err) {
        return (err as Error).message;
      }
    }
    throw new Error('the media engine never refused');
  }

  async function release(): Promise<void> {
    await Promise.all(held.map((e) => e.destroy()));
    held = [];
  }

  async function outgoing(data: Record<string, unknown>, to?: string) {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `noep${Date.now()}${Math.random()}@example.test`, status: 'active', name: 'noep' })).id;
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'talk', option: { text: 'hello', language: 'en-US' } }, { type: 'hangup' }]),
    });
    const row = await callsRepo(db).create({
      customer_id: cid,
      flow_id: flow.id,
      source: { type: 'tel', target: '+15550001111' },
      destination: to ? { type: 'tel', target: to } : { type: 'sip', target: `callee@127.0.0.1:${sinkPort}` },
      direction: 'outgoing',
      status: 'dialing',
      data,
    });
    return { db, row, cid, flowId: flow.id };
  }

  it('an originated call (early_execution) ends with failure: no INVITE, no flow, nothing left dialing', async () => {
    expect(await exhaustMedia()).to.match(/no free RTP port/);
    const { db, row } = await outgoing({ early_execution: true });
    await bus.originate([row.id], row.customer_id, `cmd-${row.id}`);
    const done = await hungUpCall(row.id, 15_000);
    // a flow that started would write its activeflow on the row: give it the time it would take
    await sleep(1500);
    const after = (await callsRepo(db).get(row.id))!;
    expect(done.hangup_reason).to.equal('failed');
    expect(after.activeflow_id, 'no flow ran on a call without media').to.equal(EMPTY_UUID);
    expect(
      received.filter((m) => m.startsWith('INVITE ')),
      'no INVITE was sent',
    ).to.deep.equal([]);
    const events = (await eventsFor(p.redis, row.id)).map((e) => e.event_type);
    expect(events).to.deep.equal(['call_hangup']);
    expect(p.app.calls.get(row.id), 'the node holds nothing of it').to.equal(undefined);
  });

  it('with media back, the next call is dialled again (the refusal held nothing): busy', async () => {
    const { row } = await outgoing({});
    await bus.originate([row.id], row.customer_id, `cmd-${row.id}`);
    const done = await hungUpCall(row.id, 15_000);
    expect(
      received.filter((m) => m.startsWith('INVITE ')),
      'the INVITE went out',
    ).to.have.length(1);
    expect(done.hangup_reason).to.equal('busy');
  });

  it("an internal (+899) call whose callee's endpoint cannot be made fails the caller; no callee leg, no number flow", async () => {
    await exhaustMedia();
    // one port back: the caller's own endpoint takes it, the callee's finds none
    await held.pop()!.destroy();
    const { db, row, cid, flowId } = await outgoing({}, `+899300${String(process.pid % 1000).padStart(3, '0')}1`);
    await numbersRepo(db).create({ customer_id: cid, number: row.destination.target, type: 'virtual', call_flow_id: flowId });
    await bus.originate([row.id], row.customer_id, `cmd-${row.id}`);
    const done = await hungUpCall(row.id, 15_000);
    expect(done.hangup_reason).to.equal('failed');
    expect(done.tm_ringing, 'never rang').to.equal(null);
    const legs = await db('calls').where({ customer_id: cid }).select('id', 'direction');
    expect(legs, 'no incoming leg was made for the number').to.deep.equal([{ id: row.id, direction: 'outgoing' }]);
    // the control: with media back, the same call is routed internally (its callee leg appears)
    await release();
    const again = await callsRepo(db).create({ customer_id: cid, source: row.source, destination: row.destination, direction: 'outgoing', status: 'dialing', data: {} });
    await bus.originate([again.id], cid, `cmd-${again.id}`);
    await until(async () => (await db('calls').where({ customer_id: cid, direction: 'incoming' }).first()) ?? null, 15_000, 'the internal callee leg');
    await p.app.factory.get(again.id)?.hangup();
  });
});
