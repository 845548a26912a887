/**
 * Call quality per leg on the platform (issue 38): a sipp caller dials a number whose flow answers and
 * waits; the caller's media is a real media-engine endpoint (RTP + RTCP SR/RR every ~5 s) talking to
 * the platform through the lossy relay (testkit/lossy-relay/). With 3 % loss and 40 ms jitter
 * injected towards the platform, the `call_quality` samples, the alarm and the call record's `quality`
 * are checked against the E-model (core/quality/emodel.ts); a clean call reports MOS ≥ 4.3.
 */
import { expect } from 'chai';
import request from 'supertest';
import { Writable } from 'node:stream';
import { emodel, oneWayDelayMs } from '../../core/quality/emodel';
import { platformRegistry } from '../../core/metrics';
import type { Endpoint, MediaServer } from '../../media-engine';
import { startEventStore } from '../../core/events/store';
import { eventStreamKey } from '../../core/events/bus';
import { newId } from '../../core/ids';
import { LossyRelay, type Impairment } from '../../testkit/lossy-relay';
import { readPcap } from '../../testkit/pcap-reader';
import { createFixture } from '../../testkit/api';
import { Permission } from '../../core/permissions';
import { eventsFor, killAllSipp, until } from '../../testkit/media-app/harness';
import { startStack, type Stack } from '../xfer/support';
import { answeringNumber, cleanPath, dialThrough, onCleanPath, phoneBehind, startPhones, type CleanPath } from './relay-calls';
import { bufferBody } from '../../testkit/buffer-body';

interface Sample {
  mos: number;
  r_factor: number;
  loss_pct: number;
  jitter_ms: number;
  rtt_ms: number | null;
}

/** Entries the events stream holds during this suite (at least). */
const FILLED_STREAM = 100_000;

/** Adds other resources' events to the platform's events stream until it holds `size`; returns their ids. */
async function fillEventStream(redis: Stack['p']['redis'], stream: string, size: number): Promise<string[]> {
  const missing = size - (await redis.xlen(stream));
  const ev = (i: number) =>
    JSON.stringify({
      id: newId(),
      event_type: 'call_progressing',
      customer_id: newId(),
      resource: 'call',
      resource_id: newId(),
      timestamp: new Date().toISOString(),
      data: { filler: i, pad: 'x'.repeat(300) },
    });
  const ids: string[] = [];
  for (let done = 0; done < missing; done += 1000) {
    const p = redis.pipeline();
    for (let j = done; j < Math.min(missing, done + 1000); j++) p.xadd(stream, '*', 'e', ev(j));
    for (const [err, id] of (await p.exec()) ?? []) if (!err) ids.push(String(id));
  }
  return ids;
}

describe('call quality per leg: samples, alarms and the call record through a lossy relay', function () {
  this.timeout(120_000);
  let s: Stack;
  let phones: MediaServer;
  let number = '';
  let cid = '';
  /** the impaired call and the clean one, for the operator walk-through */
  let store: { close(): Promise<void> } | undefined;
  let lossyId = '';
  let cleanId = '';
  /** false when the clean call's path was not clean (relay-calls.ts cleanPath): its figures not judged */
  let cleanCallJudged = true;
  let filler: string[] = [];
  /** media-app's log lines (JSON) */
  const logLines: Record<string, unknown>[] = [];
  const log = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) logLines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });

  before(async () => {
    // SIP capture on: the walk-through ends at the call's ladder and pcap
    s = await startStack({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', QUALITY_SAMPLE_MS: '2000', SIP_CAPTURE: 'on' }, { log });
    cid = s.f.customer.id;
    number = await answeringNumber(s, { trunk: 'q', prefix: '+8991380', sleepMs: 16_000 });
    phones = await startPhones();
    // The events stream as a CI shard leaves it: the suites before this one (and other test processes on
    // the same Redis) filled it towards its cap; reading all of it per poll (~1 s per 100,000 entries)
    // blocked this process, media-app included (eventsFor now reads only what is new). Removed in after().
    filler = await fillEventStream(s.p.redis, eventStreamKey(s.p.config.redisKeyPrefix), FILLED_STREAM);
    // the timeline store control-api runs (GET /timelines/calls/{id}/events reads what it wrote)
    store = await startEventStore(s.t.ctx.db, s.t.ctx.redis, { stream: eventStreamKey(s.t.ctx.config.redisKeyPrefix), group: `quality-store-${newId()}` });
  });
  after(async () => {
    for (let i = 0; i < filler.length; i += 5000) await s.p.redis.xdel(eventStreamKey(s.p.config.redisKeyPrefix), ...filler.slice(i, i + 5000));
    await store?.close();
    killAllSipp();
    await phones?.destroy();
    await s?.close();
  });

  /**
   * One call: sipp signals, its SDP names the relay; the phone endpoint's media goes through the relay.
   * Returns the call id and how clean its path was while it lasted (read at the hang-up: the phone's RTP
   * after it measures nothing).
   */
  async function call(toPlatform: Impairment | undefined, opts: { silentAfterMs?: number } = {}): Promise<{ id: string; path: CleanPath }> {
    const relay = await LossyRelay.open({ toFar: toPlatform, seed: 38 });
    let phone: Endpoint | undefined;
    // a party that stops sending (held, silence suppression, a dead link): neither RTP nor RTCP after this (a
    // failure of the relay's thread is not lost: close() below throws it)
    const silence = opts.silentAfterMs === undefined ? null : setTimeout(() => void relay.hold().catch(() => undefined), opts.silentAfterMs);
    try {
      phone = await phoneBehind(phones, relay);
      const before = new Set(((await s.t.ctx.db('calls').where({ customer_id: cid }).select('id')) as { id: string }[]).map((r) => r.id));
      await dialThrough(s, number, relay);
      const path = cleanPath(relay);
      const row = await until(
        async () => ((await s.t.ctx.db('calls').where({ customer_id: cid, status: 'hangup' }).select('id', 'quality')) as { id: string }[]).find((r) => !before.has(r.id)),
        15_000,
        'the call hung up',
      );
      return { id: row.id, path };
    } finally {
      if (silence) clearTimeout(silence);
      await relay.close();
      await phone?.destroy();
    }
  }

  /** The leg's quality events once its final sample is out (the last one: its alarms come before it). */
  async function qualityEvents(id: string) {
    const final = async () => (await eventsFor(s.p.redis, id)).some((e) => e.event_type === 'call_quality' && (e.data as { final?: boolean }).final === true) || null;
    await until(final, 10_000, 'the final call_quality sample');
    const evs = await eventsFor(s.p.redis, id);
    return {
      samples: evs.filter((e) => e.event_type === 'call_quality').map((e) => e.data as { final: boolean; codec: string; in: Sample | null; out: Sample | null; call_id: string }),
      alarms: evs.filter((e) => e.event_type === 'call_quality_alarm').map((e) => e.data as { direction: string; metric: string; state: string; value: number; threshold: number }),
    };
  }

  it('3 % loss and 40 ms jitter: MOS within 0.3 of the E-model, loss within 0.5 points, the jitter alarm fires once', async () => {
    const { id, path } = await call({ lossPct: 3, jitterMs: 40 });
    lossyId = id;
    const { samples, alarms } = await qualityEvents(id);
    expect(samples.length, 'a sample every 2 s and the final one').to.be.within(6, 11);
    expect(samples.filter((x) => x.final)).to.have.length(1);
    expect(samples.at(-1)!.final).to.equal(true);
    for (const x of samples) expect(x.call_id).to.equal(id);
    const ins = samples.map((x) => x.in).filter((x): x is Sample => x !== null);
    expect(ins.length).to.be.greaterThan(3);

    const res = await s.api.get(`/calls/${id}`);
    expect(res.status).to.equal(200);
    const q = res.body.quality as { codec: string; in: { mos_min: number; mos_avg: number; loss_pct: number; jitter_ms: number; rtt_ms: number | null }; out: unknown };
    expect(q.codec).to.equal('PCMU');
    // (a stalled path holds more packets in flight at the hang-up: counted missing by the final read)
    expect(q.in.loss_pct, 'loss over the call').to.be.at.least(2.5);
    expect(q.in.jitter_ms).to.be.at.least(30);
    expect(q.in.rtt_ms, 'the phone answers our SRs').to.be.a('number');
    // the E-model for the injected conditions: 3 % random loss; one way: the relay's mean delay (60 ms),
    // a jitter buffer spanning its 120 ms spread, the 20 ms packet
    const expected = emodel({ codec: 'PCMU', lossPct: 3, oneWayDelayMs: 60 + oneWayDelayMs({ rttMs: null, jitterBufferMs: 120, ptimeMs: 20, codec: 'PCMU' }) });
    expect(q.in.mos_avg, `E-model ${expected.mos.toFixed(2)}`).to.be.at.most(expected.mos + 0.3);
    // each full 2 s sample too (the median: the final one covers only the time since the last, maybe without a loss)
    const periodic = samples
      .filter((x) => !x.final && x.in)
      .map((x) => x.in!.mos)
      .sort((x, y) => x - y);
    expect(periodic[periodic.length >> 1]).to.be.at.most(expected.mos + 0.3);
    // a path that added lateness of its own (relay-calls.ts cleanPath) adds jitter and discards to what was
    // injected: the floors above are judged always, the ceilings (and the MOS's floor) on a clean path only
    onCleanPath(path, 'toPlatform', 'the ceilings', () => {
      expect(q.in.loss_pct, 'loss over the call').to.be.at.most(3.5);
      expect(q.in.jitter_ms).to.be.at.most(55);
      expect(q.in.mos_avg, `E-model ${expected.mos.toFixed(2)}`).to.be.at.least(expected.mos - 0.3);
      expect(periodic[periodic.length >> 1]).to.be.at.least(expected.mos - 0.3);
    });
    // the far end's reports on our stream (not impaired): the out direction is clean
    expect(q.out).to.not.equal(null);

    const jitter = alarms.filter((a) => a.metric === 'jitter_ms' && a.direction === 'in');
    expect(
      jitter.filter((a) => a.state === 'raised'),
      'raised once per crossing',
    ).to.have.length(1);
    expect(jitter[0]).to.deep.include({ state: 'raised', threshold: 30 });
    expect(jitter[0]!.value).to.be.greaterThan(30);
    // and as a structured log line (an operator's log search finds it without the events)
    const line = logLines.find((l) => l.event === 'call_quality_alarm' && l.call_id === id && l.metric === 'jitter_ms' && l.state === 'raised');
    expect(line, 'the alarm logged').to.not.equal(undefined);
    expect(line).to.deep.include({ customer_id: cid, direction: 'in', leg: 'call', threshold: 30, value: jitter[0]!.value, level: 40 });

    const scrape = await platformRegistry.metrics();
    expect(scrape).to.match(/call_quality_mos_count\{codec="PCMU",direction="in"\} [1-9]/);
    expect(scrape).to.match(/call_quality_alarms_total\{metric="jitter_ms",direction="in"\} [1-9]/);
    expect(scrape).to.not.include(id);
  });

  it('a clean G.711 call: MOS ≥ 4.3 both ways, no alarm, RTT from RTCP', async function () {
    const { id, path } = await call(undefined);
    cleanId = id;
    const { samples, alarms } = await qualityEvents(id);
    const q = (await s.api.get(`/calls/${id}`)).body.quality as { in: { mos_avg: number; loss_pct: number; rtt_ms: number }; out: { mos_avg: number; rtt_ms: number } };
    // nothing lost on the path, whatever the machine's load: loss is the network's count (in order here,
    // so none counted missing and found later), not the buffer's discards
    expect(q.in.loss_pct).to.equal(0);
    expect(alarms.filter((a) => a.metric === 'loss_pct')).to.deep.equal([]);
    // the rest are the figures of a clean path (relay-calls.ts cleanPath): the `in` ones the platform
    // measures on the path to it; the `out` MOS (no RTCP-XR from the phone: our buffer and the RTT stand in,
    // core/quality/leg.ts) and the RTT (a round trip) on both
    if (path.toPlatform) {
      expect(
        alarms.filter((a) => a.direction === 'in' && a.metric !== 'rtt_ms'),
        JSON.stringify(alarms),
      ).to.deep.equal([]);
      // the mean: on a loaded machine the adaptive jitter buffer may discard a late packet or two while it settles
      expect(q.in.mos_avg, JSON.stringify(samples)).to.be.at.least(4.3);
      const mos = samples
        .filter((x) => x.in)
        .map((x) => x.in!.mos)
        .sort((x, y) => x - y);
      expect(mos[mos.length >> 1], 'the median sample').to.be.at.least(4.3);
    }
    if (path.toPlatform && path.toPhone) {
      expect(alarms, JSON.stringify(alarms)).to.deep.equal([]);
      expect(q.out.mos_avg).to.be.at.least(4.3);
      expect(q.in.rtt_ms).to.be.within(0, 50);
    } else {
      console.log(
        `      (not all judged: ${path.says}; MOS in ${q.in.mos_avg}, out ${q.out.mos_avg}; RTT ${q.in.rtt_ms} ms; alarms ${JSON.stringify(alarms.map((a) => [a.direction, a.metric, a.value]))})`,
      );
      cleanCallJudged = false;
      this.skip();
    }
  });

  it("a party silent for the call's last periods still gets its final sample, and the call its summary", async () => {
    // the flow hangs up 16 s after the answer; the party's RTP and RTCP stop at ~10 s, so the last
    // periods (2 s each) measure nothing: the final sample was dropped with them (CI, shard 1)
    const { id } = await call(undefined, { silentAfterMs: 10_000 });
    const { samples } = await qualityEvents(id);
    const last = samples.at(-1)!;
    expect(last.final).to.equal(true);
    expect(samples.filter((x) => x.final)).to.have.length(1);
    expect(last.in, 'nothing heard since the last sample').to.equal(null);
    const ins = samples.map((x) => x.in).filter((x): x is Sample => x !== null);
    expect(ins.length).to.be.greaterThan(2);
    const q = (await s.api.get(`/calls/${id}`)).body.quality as { in: { mos_min: number; mos_avg: number } | null };
    expect(q.in!.mos_avg, 'the summary of the samples that heard something').to.be.closeTo(ins.reduce((a, x) => a + x.mos, 0) / ins.length, 0.011);
  });

  it('the operator walk-through (docs/observability.md): export filtered on MOS → the call → its quality samples and alarms → its SIP ladder and pcap', async () => {
    expect(lossyId, 'the impaired call of the first test').to.not.equal('');
    expect(cleanId, 'the clean call of the second test').to.not.equal('');
    // 1. the calls behind the alert: the CDR export of the period, filtered on the lowest MOS
    const text = async (r: ReturnType<Stack['api']['get']>) =>
      (
        await r.buffer(true).parse((res, cb) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => cb(null, body));
        })
      ).body as string;
    const start = new Date(Date.now() - 3_600_000).toISOString();
    const end = new Date(Date.now() + 60_000).toISOString();
    const rows = (await text(s.api.get(`/calls/export?start=${encodeURIComponent(start)}&end=${encodeURIComponent(end)}&format=jsonl&mos_below=4`)))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((r) => r.id)).to.include(lossyId);
    // (the clean call only when its path was: see the clean call's test)
    if (cleanCallJudged) expect(rows.map((r) => r.id)).to.not.include(cleanId);
    const row = rows.find((r) => r.id === lossyId)!;
    expect(row.quality_in_mos_min).to.be.below(4);
    // or platform-wide: a ProjectSuperAdmin lists the period's alarms of every customer (the store keeps them)
    const root = await createFixture(s.t.ctx, { permission: Permission.ProjectSuperAdmin | Permission.CustomerAdmin });
    const alarms = await until(
      async () => {
        const r = await request(s.t.app).get('/v1.0/quality_alarms').set('Authorization', `Bearer ${root.token}`).query({ start, end, metric: 'jitter_ms', state: 'raised' });
        const items = (r.body.result ?? []) as { call_id: string; customer_id: string; value: number }[];
        return items.some((a) => a.call_id === lossyId) ? items : null;
      },
      10_000,
      'the jitter alarm listed',
    );
    expect(alarms.find((a) => a.call_id === lossyId)).to.deep.include({ customer_id: cid });
    // 2. the call's quality summary
    const callRes = await s.api.get(`/calls/${lossyId}`);
    expect(callRes.body.quality.in.mos_min).to.equal(row.quality_in_mos_min);
    // 3. its timeline: the 5 s samples (the quality over time) and the alarms
    const events = await until(
      async () => {
        const r = (await s.api.get(`/timelines/calls/${lossyId}/events?page_size=1000`)).body.result as { event_type: string; data: Record<string, unknown> }[];
        return r.some((e) => e.event_type === 'call_quality' && e.data.final === true) ? r : null;
      },
      10_000,
      'the call quality events stored',
    );
    expect(events.filter((e) => e.event_type === 'call_quality').length).to.be.greaterThan(3);
    expect(events.filter((e) => e.event_type === 'call_quality_alarm').map((e) => e.data.metric)).to.include('jitter_ms');
    // 4. its SIP ladder and a pcap of it
    const ladder = (await s.api.get(`/timelines/calls/${lossyId}/sip-analysis`)).body.sip_messages as { raw: string }[];
    const firstLines = ladder.map((m) => m.raw.split('\r\n')[0]!);
    expect(firstLines.some((l) => l.startsWith('INVITE '))).to.equal(true);
    expect(firstLines.some((l) => l.startsWith('BYE '))).to.equal(true);
    const pcap = await s.api.get(`/timelines/calls/${lossyId}/pcap`).buffer(true).parse(bufferBody);
    const bytes = pcap.body as Buffer;
    expect(bytes.readUInt32LE(0), 'pcap magic').to.equal(0xa1b2c3d4);
    expect(bytes.length).to.be.greaterThan(24 + 16 * ladder.length);
    // RTP_CAPTURE is off (the default): SIP only, no media datagram (test/observability/rtp-pcap.test.ts: on)
    const { packets } = readPcap(bytes);
    expect(packets.length).to.equal(ladder.length);
    expect(packets.every((p) => p.srcPort === s.p.sipPort || p.dstPort === s.p.sipPort)).to.equal(true);
  });
});
