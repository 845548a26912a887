/**
 * Strict RTP's drops go out with a call's quality figures: a real media-engine leg latched to its far end gets
 * packets from another port (dropped, the leg's `foreignDropped`), and the call's quality meter
 * (media-app/call/quality.ts, with the test database and a private Redis stream) adds them to Prometheus'
 * rtp_foreign_dropped_total at its sample, once: a second sample adds only what was dropped since. Once as well
 * when the meter's endpoint changes: the same endpoint attached again, or a read of the previous one still in
 * flight when the next is attached, adds only what that endpoint dropped since its last read.
 */
import { expect } from 'chai';
import dgram from 'node:dgram';
import pino from 'pino';
import { Redis } from 'ioredis';
import { EventPublisher } from '../../core/events/bus';
import { newId } from '../../core/ids';
import { platformMetrics } from '../../core/metrics';
import { DEFAULT_THRESHOLDS } from '../../core/quality/leg';
import type { CallRow } from '../../core/repos/calls';
import { MediaServer, type Endpoint } from '../../media-engine';
import { writeRtpInto } from '../../media-engine/rtp-packet/packet';
import { CallQualityMeter } from '../../media-app/call/quality';
import type { CallEndpoint } from '../../media-app/media-server/endpoint';
import { testDb } from '../../testkit/db';
import { statsWhen } from '../../testkit/media-engine/bridged-pair';
import { within } from '../../testkit/poll';
import { pcmuOffer, portRange } from '../../testkit/media-engine/support';

const errors: Error[] = [];

async function udp(): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  s.on('error', (e) => errors.push(e));
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  return s;
}

function sendRtp(s: dgram.Socket, to: number, seq: number, ssrc: number): void {
  const b = Buffer.alloc(12 + 160);
  writeRtpInto(b, false, 0, seq, seq * 160, ssrc, new Uint8Array(160).fill(0x55), 160);
  s.send(b, to, '127.0.0.1');
}

const metric = async () => (await platformMetrics.rtpForeignDropped.get()).values.reduce((a, v) => a + v.value, 0);

describe('strict RTP drops in the metrics: rtp_foreign_dropped_total from the call quality samples', function () {
  this.timeout(30_000);
  let ms: MediaServer;
  let ep: Endpoint;
  let redis: Redis;
  let stream = '';
  const socks: dgram.Socket[] = [];
  const eps: Endpoint[] = [];

  /** The meter on a private stream (samples every 100 ms). */
  const meterOf = async () => {
    stream = stream || `test:foreign-dropped:${newId()}`;
    return new CallQualityMeter(
      { db: await testDb(), events: new EventPublisher(redis, stream), logger: pino({ level: 'silent' }), sampleMs: 100, thresholds: DEFAULT_THRESHOLDS },
      () => ({ id: newId(), customer_id: newId(), activeflow_id: newId(), master_call_id: null }) as unknown as CallRow,
    );
  };
  /**
   * A real endpoint latched to its far end, as the meter sees it: its reads counted (`reads`), and held while
   * `hold` is set (`held`: the held reads, released with the endpoint's stats at `release`).
   */
  const metered = async () => {
    const [far, other] = [await udp(), await udp()];
    socks.push(far, other);
    const real = await ms.createEndpoint({ remoteSdp: pcmuOffer(far.address().port) });
    eps.push(real);
    const m = { real, far, other, reads: 0, hold: false, held: [] as (() => void)[] };
    const ep = {
      get destroyed() {
        return real.destroyed;
      },
      getStats: () => {
        m.reads++;
        if (!m.hold) return real.getStats();
        return new Promise((resolve) => m.held.push(() => resolve(real.getStats())));
      },
    } as unknown as CallEndpoint;
    const release = () => {
      m.hold = false;
      for (const r of m.held.splice(0)) r();
    };
    /** 5 packets from its far end (latched), then `n` from another port, out of sequence: dropped */
    const drop = async (n: number) => {
      for (let i = 0; i < 5; i++) sendRtp(far, real.local.port, 100 + i, 0x1111);
      for (let i = 0; i < n; i++) sendRtp(other, real.local.port, 900 + i * 3, 0x2222);
      const st = await statsWhen(real, (s) => s.packetsReceived === 5 && s.foreignDropped === n);
      expect([st.packetsReceived, st.foreignDropped]).to.deep.equal([5, n]);
    };
    return { m, ep, release, drop };
  };

  before(async () => {
    ms = await MediaServer.start({ rtpPorts: portRange(), workers: 1 });
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    for (const s of socks) s.close();
    await ep?.destroy().catch(() => undefined);
    for (const e of eps) await e.destroy().catch(() => undefined);
    await ms.destroy();
    if (stream) await redis.del(stream);
    redis.disconnect();
  });

  it('a foreign sender is counted once per packet, across samples and at the end', async () => {
    const far = await udp();
    const other = await udp();
    socks.push(far, other);
    // the far end's SDP names its own port: its first packet latches the leg
    ep = await ms.createEndpoint({ remoteSdp: pcmuOffer(far.address().port) });
    stream = `test:foreign-dropped:${newId()}`;
    const meter = new CallQualityMeter(
      { db: await testDb(), events: new EventPublisher(redis, stream), logger: pino({ level: 'silent' }), sampleMs: 100, thresholds: DEFAULT_THRESHOLDS },
      () => ({ id: newId(), customer_id: newId(), activeflow_id: newId(), master_call_id: null }) as unknown as CallRow,
    );
    const before = await metric();
    // the real endpoint, its reads by the meter counted (one per sample)
    let samples = 0;
    const seen = ep;
    const counted = {
      get destroyed() {
        return seen.destroyed;
      },
      getStats: () => (samples++, seen.getStats()),
    } as unknown as CallEndpoint;
    meter.attach(counted);
    for (let i = 0; i < 5; i++) sendRtp(far, ep.local.port, 100 + i, 0x1111);
    for (let i = 0; i < 7; i++) sendRtp(other, ep.local.port, 900 + i * 3, 0x2222); // out of sequence: never latched
    const st = await statsWhen(ep, (s) => s.packetsReceived === 5 && s.foreignDropped === 7);
    expect([st.packetsReceived, st.foreignDropped]).to.deep.equal([5, 7]);
    expect(await within(async () => (await metric()) - before === 7), 'added at a sample').to.equal(true);
    const after = samples;
    expect(await within(() => samples >= after + 3), 'three more samples (which must add nothing)').to.equal(true);
    expect((await metric()) - before, 'the samples after it').to.equal(7);
    for (let i = 0; i < 3; i++) sendRtp(other, ep.local.port, 2000 + i * 3, 0x2222);
    await statsWhen(ep, (s) => s.foreignDropped === 10);
    await meter.finish();
    expect((await metric()) - before, 'with the sample at the call end').to.equal(10);
    expect(errors).to.deep.equal([]);
  });
  it('the same endpoint attached again (after none) adds only what it dropped since its last read', async () => {
    const meter = await meterOf();
    const before = await metric();
    const a = await metered();
    meter.attach(a.ep);
    await a.drop(7);
    expect(await within(async () => (await metric()) - before === 7), 'added at a sample').to.equal(true);
    meter.attach(null);
    meter.attach(a.ep);
    const reads = a.m.reads;
    expect(await within(() => a.m.reads >= reads + 3), 'three samples of it again (which must add nothing)').to.equal(true);
    await meter.finish();
    expect((await metric()) - before, 'its 7 drops, once').to.equal(7);
    expect(errors).to.deep.equal([]);
  });

  it("a read of the previous endpoint in flight when another is attached adds only that endpoint's growth", async () => {
    const meter = await meterOf();
    const before = await metric();
    const [a, b] = [await metered(), await metered()];
    meter.attach(a.ep);
    await a.drop(7);
    expect(await within(async () => (await metric()) - before === 7), 'added at a sample').to.equal(true);
    // a sample's read of A answers only after B is attached
    a.m.hold = true;
    expect(await within(() => a.m.held.length > 0), "a sample reading A's stats").to.equal(true);
    meter.attach(b.ep);
    a.release();
    await b.drop(2);
    const reads = b.m.reads;
    expect(await within(() => b.m.reads >= reads + 3), 'samples of B').to.equal(true);
    await meter.finish();
    expect((await metric()) - before, "A's 7 once, B's 2").to.equal(7 + 2);
    expect(errors).to.deep.equal([]);
  });
});
