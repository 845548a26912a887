/**
 * Call quality with jitter on both media backends (issue 55): 'embedded' (the engine scores the leg from
 * its loss, discards and jitter buffer) and 'fsmrf' (our switch measures the leg: rtp_audio_in_flaw_total
 * and rtp_audio_in_jitter_max_variance, and the platform scores them with the same E-model,
 * core/quality/leg.ts sampleSwitch). A sipp caller dials a number whose flow answers and waits; its media
 * is a real media-engine endpoint whose RTP reaches the platform through the lossy relay
 * (testkit/lossy-relay/), once untouched and once delayed by a seeded uniform draw over 240 ms (an RFC
 * 3550 jitter of about 80 ms), no packet lost. Embedded: the jittered call's MOS is well under the clean
 * one's, its jitter reported and alarmed. fsmrf: the switch reports its jitter only as the leg's worst
 * (a running variance's maximum, no figure per period), so the call's record reports it while each sample
 * is the E-model's of its loss alone, with no jitter and no jitter alarm (core/quality/leg.ts sampleSwitch;
 * test/media-app/fsmrf-quality-jitter.test.ts: an early spike does not penalise later periods).
 */
import { expect } from 'chai';
import { emodel } from '../../core/quality/emodel';
import type { Endpoint, MediaServer } from '../../media-engine';
import { LossyRelay, type Impairment } from '../../testkit/lossy-relay';
import { eventsFor, killAllSipp, until } from '../../testkit/media-app/harness';
import { startStack, type Stack } from '../xfer/support';
import { answeringNumber, cleanPath, dialThrough, onCleanPath, phoneBehind, startPhones, type CleanPath } from './relay-calls';

interface Sample {
  mos: number;
  r_factor: number;
  loss_pct: number;
  jitter_ms: number | null;
  rtt_ms: number | null;
}

interface Summary {
  codec: string;
  in: { mos_min: number; mos_avg: number; loss_pct: number; jitter_ms: number | null; rtt_ms: number | null } | null;
}

for (const backend of ['embedded', 'fsmrf'] as const) {
  describe(`call quality with jitter on the ${backend} media backend`, function () {
    this.timeout(120_000);
    let s: Stack;
    let phones: MediaServer;
    let number = '';
    let cid = '';
    const results: Record<'clean' | 'jittered', { quality: Summary; samples: Sample[]; alarms: { direction: string; metric: string; state: string }[]; path: CleanPath } | null> = {
      clean: null,
      jittered: null,
    };

    before(async () => {
      s = await startStack({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', QUALITY_SAMPLE_MS: '2000' }, { mediaServer: backend });
      cid = s.f.customer.id;
      number = await answeringNumber(s, { trunk: 'qj', prefix: '+8991381', sleepMs: 9000 });
      phones = await startPhones();
    });
    after(async () => {
      killAllSipp();
      await phones?.destroy();
      await s?.close();
    });

    /** One call whose RTP toward the platform goes through the relay with `toPlatform`; its quality, samples and alarms once its final sample is out. */
    async function call(toPlatform: Impairment | undefined) {
      const relay = await LossyRelay.open({ toFar: toPlatform, seed: 55 });
      let phone: Endpoint | undefined;
      try {
        phone = await phoneBehind(phones, relay);
        const before = new Set(((await s.t.ctx.db('calls').where({ customer_id: cid }).select('id')) as { id: string }[]).map((r) => r.id));
        await dialThrough(s, number, relay);
        // how clean the path was while the call lasted (the phone's RTP after the hang-up measures nothing)
        const path = cleanPath(relay);
        const row = await until(
          async () => ((await s.t.ctx.db('calls').where({ customer_id: cid, status: 'hangup' }).select('id', 'quality')) as { id: string; quality: Summary }[]).find((r) => !before.has(r.id)),
          15_000,
          'the call hung up',
        );
        const finalOut = async () => (await eventsFor(s.p.redis, row.id)).some((e) => e.event_type === 'call_quality' && (e.data as { final?: boolean }).final === true) || null;
        await until(finalOut, 10_000, 'the final call_quality sample');
        const evs = await eventsFor(s.p.redis, row.id);
        const samples = evs
          .filter((e) => e.event_type === 'call_quality')
          .map((e) => (e.data as { in: Sample | null }).in)
          .filter((x): x is Sample => x !== null);
        const alarms = evs.filter((e) => e.event_type === 'call_quality_alarm').map((e) => e.data as { direction: string; metric: string; state: string });
        const quality = ((await s.t.ctx.db('calls').where({ id: row.id }).first()) as { quality: Summary }).quality;
        return { quality, samples, alarms, path };
      } finally {
        await relay.close();
        await phone?.destroy();
      }
    }

    it('a clean call: MOS of a clean G.711 leg, a few ms of jitter at most, no alarm', async function () {
      const r = (results.clean = await call(undefined));
      expect(r.quality.in, JSON.stringify(r.samples)).to.not.equal(null);
      expect(r.quality.in!.loss_pct).to.equal(0);
      // the figures of a clean path: only if it was one (relay-calls.ts cleanPath), else printed, not judged
      if (!r.path.toPlatform) {
        console.log(`      (not judged: ${r.path.says}; jitter ${r.quality.in!.jitter_ms} ms, MOS ${r.quality.in!.mos_avg}; alarms ${JSON.stringify(r.alarms)})`);
        this.skip();
      }
      expect(r.quality.in!.jitter_ms).to.be.within(0, 15);
      expect(r.quality.in!.mos_avg).to.be.at.least(4.3);
      expect(
        r.alarms.filter((a) => a.direction === 'in' && a.metric !== 'rtt_ms'),
        JSON.stringify(r.alarms),
      ).to.deep.equal([]);
      // the phone's reports of our stream and the RTT (a round trip): on both paths
      onCleanPath(r.path, 'toPhone', 'the out and RTT alarms', () => expect(r.alarms, JSON.stringify(r.alarms)).to.deep.equal([]));
    });

    it('about 80 ms of jitter, no loss: the jitter is reported; on the engine alarmed and the MOS drops well below the clean call', async () => {
      const clean = results.clean;
      expect(clean, 'the clean call of the test before').to.not.equal(null);
      const r = (results.jittered = await call({ lossPct: 0, jitterMs: 80 }));
      const q = r.quality.in!;
      // the injected jitter over a path that added none of its own (else only its floor: a stall adds to it)
      expect(q.jitter_ms, JSON.stringify(r.samples)).to.be.at.least(40);
      onCleanPath(r.path, 'toPlatform', `jitter ${q.jitter_ms} ms, its ceiling`, () => expect(q.jitter_ms, JSON.stringify(r.samples)).to.be.at.most(140));
      if (backend === 'embedded') {
        expect(r.alarms.filter((a) => a.direction === 'in' && a.metric === 'jitter_ms' && a.state === 'raised')).to.have.length(1);
        // against the clean call only when its path was clean (its test says so when not)
        if (clean!.path.toPlatform) {
          expect(clean!.quality.in!.mos_avg - q.mos_avg, `clean ${clean!.quality.in!.mos_avg}, jittered ${q.mos_avg}`).to.be.greaterThan(0.05);
          expect(q.mos_min).to.be.below(clean!.quality.in!.mos_min);
        }
      } else {
        // the switch's jitter is the leg's worst, no period's: each sample is the E-model of its loss and the 20 ms packet
        expect(
          r.alarms.filter((a) => a.metric === 'jitter_ms'),
          'no jitter alarm from a figure of no period',
        ).to.deep.equal([]);
        for (const x of r.samples) {
          expect(x.jitter_ms, JSON.stringify(x)).to.equal(null);
          expect(x.mos, JSON.stringify(x)).to.be.closeTo(emodel({ codec: 'PCMU', lossPct: x.loss_pct, oneWayDelayMs: 20 }).mos, 0.011);
        }
      }
    });
  });
}
