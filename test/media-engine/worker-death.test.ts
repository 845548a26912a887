// A media worker that dies takes its endpoints with it: each one reports its end at once with the
// reason (so the call layer can end its calls), the worker's RTP ports are free again, and the
// other worker keeps serving. The worker protocol is a closed list: a name outside it is refused.
import { expect } from 'chai';
import { isFromWorker, isToWorker, METHODS } from '../../media-engine/worker/protocol';
import type { Endpoint, EndpointEnd, MediaServer } from '../../media-engine';
import { bindable, rejection, useMediaServer } from '../../testkit/media-engine/support';

describe('media-engine: a worker dies', function () {
  this.timeout(30000);
  let ms: MediaServer;
  useMediaServer({ ports: 200, workers: 2 }, (f) => ({ ms } = f));

  it('20 endpoints on a killed worker each end with reason worker-died within 1 s; its ports and fork sinks are released', async () => {
    const first = await ms.createEndpoint();
    const eps: Endpoint[] = [first];
    for (let i = 1; i < 20; i++) eps.push(await ms.createEndpoint({ near: first }));
    const victim = first.host;
    expect(eps.every((e) => e.host === victim)).to.equal(true);
    const survivor = await ms.createEndpoint({ near: undefined });
    // a fork on the victim, and the survivor (other worker) bridged to one of its endpoints
    await eps[3].forkAudioStart({ mix: 'in', onFrame: () => undefined });
    await survivor.bridge(eps[5]);
    expect(survivor.host).to.not.equal(victim);
    expect(victim.forkSinks.size).to.equal(1);
    const ports = eps.map((e) => e.local.port);
    const allocated = ms.ports.allocated;
    const ends = new Map<Endpoint, { end: EndpointEnd; ms: number }>();
    const t0 = performance.now();
    const all = Promise.all(eps.map((e) => new Promise<void>((resolve) => e.once('destroy', (end) => (ends.set(e, { end, ms: performance.now() - t0 }), resolve())))));
    await victim.kill();
    await Promise.race([all, new Promise((r) => setTimeout(r, 1000))]);
    expect(ends.size, 'endpoints that reported their end within 1 s').to.equal(20);
    for (const { end, ms: at } of ends.values()) {
      expect(end.reason).to.equal('worker-died');
      expect(end.message).to.match(/media worker \d+ exited/);
      expect(at).to.be.below(1000);
    }
    expect(ms.ports.allocated).to.equal(allocated - 20);
    for (const p of ports) expect(await bindable(p), `port ${p} free again`).to.equal(true);
    expect(eps.every((e) => e.destroyed)).to.equal(true);
    expect(victim.forkSinks.size, 'fork sinks of the dead worker released').to.equal(0);
    // the survivor was not touched and its worker still answers
    expect(survivor.destroyed).to.equal(false);
    expect((await survivor.getStats()).packetsSent).to.be.a('number');
    await survivor.destroy();
  });

  it('an endpoint destroyed on request ends with reason destroyed', async () => {
    const ep = await ms.createEndpoint();
    const end = new Promise<EndpointEnd>((resolve) => ep.once('destroy', resolve));
    await ep.destroy();
    expect(await end).to.deep.equal({ reason: 'destroyed' });
  });

  it('the worker refuses an operation outside the protocol (EPROTO) and keeps serving', async () => {
    const ep = await ms.createEndpoint();
    // a name that is an Engine method (private), but not an operation of the protocol
    const err = (await rejection(ep.host.call(String('tick') as 'stopPlayback', ep.uuid))) as Error & { code?: string };
    expect(err.code).to.equal('EPROTO');
    expect(err.message).to.match(/unknown operation tick/);
    expect((await ep.getStats()).packetsSent).to.be.a('number');
    await ep.destroy();
  });

  it('isToWorker / isFromWorker take only the messages of the protocol', () => {
    expect(METHODS).to.include('createLeg');
    expect(isToWorker({ t: 'call', id: 1, method: 'createLeg', args: [] })).to.equal(true);
    for (const bad of [
      null,
      'call',
      { t: 'call', id: 1, method: 'tick', args: [] },
      { t: 'call', id: 1, method: 'constructor', args: [] },
      { t: 'call', id: 'x', method: 'play', args: [] },
      { t: 'call', id: 1, method: 'play', args: 'x' },
      { t: 'forkAck', forkId: 'f' },
      { t: 'inject', forkId: 'f', samples: [1, 2] },
      { t: 'eval', code: '1' },
    ])
      expect(isToWorker(bad), JSON.stringify(bad)).to.equal(false);
    expect(isFromWorker({ t: 'event', kind: 'leg', target: 'a', name: 'dtmf', data: { dtmf: '1' } })).to.equal(true);
    expect(isFromWorker({ t: 'event', kind: 'conference', target: 'a', name: 'join', data: { memberId: 'm', size: 1 } })).to.equal(true);
    for (const bad of [
      { t: 'event', kind: 'leg', target: 'a', name: 'destroy', data: {} },
      { t: 'event', target: 'a', name: 'dtmf', data: {} },
      { t: 'event', kind: 'leg', target: 'a', name: '__proto__', data: {} },
      { t: 'reply', id: 1, ok: false },
      { t: 'nope' },
    ])
      expect(isFromWorker(bad), JSON.stringify(bad)).to.equal(false);
  });
});
