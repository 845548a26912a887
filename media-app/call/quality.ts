/**
 * The call quality of one session's leg (issue 38): every QUALITY_SAMPLE_MS (5 s) while the session has an
 * endpoint, and once more when its media ends, the endpoint's statistics become a sample per direction
 * (core/quality/leg.ts): a `call_quality` event (the call's timeline), the Prometheus histograms (codec
 * and direction only), `call_quality_alarm` events for thresholds crossed, and at the end the call
 * record's `quality`. A failed read or publish is logged, never thrown: quality never ends or delays a call.
 *
 * Where each figure comes from:
 * - the embedded engine's leg (EndpointStats): `in` from what the engine receives (E-model MOS and R
 *   from its loss, discards and delays; network loss; RFC 3550 jitter; RTT from RTCP), `out` from the
 *   party's RTCP reports;
 * - a leg on the fsmrf backend (SwitchRtpCounts, the switch's rtp_audio_* variables): `in` only, scored
 *   by the same E-model from its loss per period (rtp_audio_in_flaw_total of in_packet_count + flaws); its
 *   jitter (√rtp_audio_in_jitter_max_variance, the leg's worst) in the summary only (LegQuality.sampleSwitch); RTT null and
 *   `out` null: the switch reports neither, so none is made up.
 * The engine's strict-RTP drops (`foreignDropped`: packets from a source other than the leg's latched far end) go to
 * Prometheus' rtp_foreign_dropped_total, what each sample adds since the last.
 */
import type { Logger } from 'pino';
import { engineStats, type CallEndpoint, type CallEndpointStats } from '../media-server/endpoint';
import type { EventPublisher } from '../../core/events/bus';
import { publishResourceEvent } from '../../core/events/catalogue';
import { platformMetrics } from '../../core/metrics';
import { LegQuality, type DirectionSample, type QualityDirection, type QualitySampleResult, type QualityThresholds } from '../../core/quality/leg';
import { callsRepo, type CallRow } from '../../core/repos/calls';
import type { Knex } from '../../core/db/knex';
import { EMPTY_UUID } from '../../core/ids';

const FINAL_SAMPLE_WAIT_MS = 2000;

export interface QualityMeterDeps {
  db: Knex;
  events: EventPublisher;
  logger: Logger;
  sampleMs: number;
  thresholds: QualityThresholds;
}

export class CallQualityMeter {
  private readonly leg: LegQuality;
  private timer: NodeJS.Timeout | null = null;
  private ep: CallEndpoint | null = null;
  /** the sample being taken (one at a time: the final one waits for a periodic one in flight) */
  private inFlight: Promise<void> = Promise.resolve();
  /** the samples' events, in order (a sample's alarms, then the sample) */
  private publishing: Promise<void> = Promise.resolve();
  private finished = false;
  private measured = false;
  /**
   * each endpoint's foreignDropped at its last read (rtp_foreign_dropped_total takes what it added since): by
   * endpoint, so a read of one no longer attached (in flight at a re-attach) or one attached again adds only its growth
   */
  private readonly foreignDropped = new WeakMap<CallEndpoint, number>();

  constructor(
    private readonly deps: QualityMeterDeps,
    private readonly row: () => CallRow,
  ) {
    this.leg = new LegQuality(deps.thresholds);
  }

  /** Meters `ep` from now on (null: none). A new endpoint is a new source: its counts start over. */
  attach(ep: CallEndpoint | null): void {
    if (this.finished || ep === this.ep) return;
    this.ep = ep;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (!ep) return;
    this.leg.restart();
    this.timer = setInterval(() => void this.take(false), this.deps.sampleMs);
    this.timer.unref();
  }

  /**
   * The last sample (from the endpoint still up) and the call record's quality; call before the endpoint goes.
   * The final sample is published whenever the leg measured anything, even if its own period heard nothing
   * (a party on hold or silent at the end): it is the leg's last quality event, the one webhooks get.
   */
  async finish(): Promise<void> {
    if (this.finished) return;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    // reading the stats is bounded (a stuck worker must not hold up the hangup); the sample is computed
    // after a periodic one in flight, so the summary below includes it
    await this.take(true);
    this.finished = true;
    // its events normally go out before the hangup row; a slow Redis delays the hangup by 2 s at most
    await Promise.race([this.publishing, new Promise((r) => setTimeout(r, FINAL_SAMPLE_WAIT_MS).unref())]);
    if (!this.measured) return;
    await callsRepo(this.deps.db)
      .setQuality(this.row().id, this.leg.summary())
      .catch((err: Error) => this.deps.logger.warn({ err: err.message, call: this.row().id }, 'call quality not written'));
  }

  private take(final: boolean): Promise<void> {
    const ep = this.ep;
    if (!ep || this.finished) return this.inFlight;
    // read now (not behind a sample being published): the final one reads the endpoint while it is up
    const read = this.read(ep);
    this.inFlight = this.inFlight.then(async () => {
      const stats = await read;
      if (stats && engineStats(stats)) this.countForeign(ep, stats.foreignDropped);
      // the last read failed (on fsmrf the switch often ends the channel first): the leg's final sample still
      // goes out when it measured anything, with nothing in either direction
      if (!stats && !(final && this.measured)) return;
      const s = !stats ? this.leg.unread() : engineStats(stats) ? this.leg.sample(stats) : this.leg.sampleSwitch(stats);
      if (!s.in && !s.out && !(final && this.measured)) return;
      this.measured = true;
      this.observe(s);
      this.publishing = this.publishing.then(() => this.publish(s, final));
    });
    return this.inFlight;
  }

  /** The endpoint's statistics within FINAL_SAMPLE_WAIT_MS, or null (gone, failed, too slow: logged). */
  private async read(ep: CallEndpoint): Promise<CallEndpointStats | null> {
    if (ep.destroyed) return null;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), FINAL_SAMPLE_WAIT_MS)));
    try {
      const stats = await Promise.race([ep.getStats(), late]);
      if (!stats) this.deps.logger.warn({ call: this.row().id }, 'quality sample skipped: the media worker did not answer in time');
      return stats;
    } catch (err) {
      this.deps.logger.debug({ err: (err as Error).message, call: this.row().id }, 'quality sample skipped');
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  /** `ep`'s count read now: what it grew by since its last read; a first read or a smaller count (a counter started over) is a new base, all of it new. */
  private countForeign(ep: CallEndpoint, n: number): void {
    const last = this.foreignDropped.get(ep);
    const added = last === undefined || n < last ? n : n - last;
    if (added > 0) platformMetrics.rtpForeignDropped.inc(added);
    this.foreignDropped.set(ep, n);
  }

  private observe(s: QualitySampleResult): void {
    const m = platformMetrics;
    const one = (d: QualityDirection, x: DirectionSample | null) => {
      if (!x) return;
      m.qualityMos.labels(s.codec, d).observe(x.mos);
      m.qualityLoss.labels(s.codec, d).observe(x.loss_pct);
      if (x.jitter_ms !== null) m.qualityJitter.labels(s.codec, d).observe(x.jitter_ms);
      if (x.rtt_ms !== null) m.qualityRtt.labels(s.codec, d).observe(x.rtt_ms);
    };
    one('in', s.in);
    one('out', s.out);
    for (const a of s.alarms) if (a.state === 'raised') m.qualityAlarms.labels(a.metric, a.direction).inc();
    this.logAlarms(s);
  }

  /** Each alarm as a structured log line too (the call's ids and the numbers: nothing the customer sent). */
  private logAlarms(s: QualitySampleResult): void {
    if (!s.alarms.length) return;
    const row = this.row();
    // a leg the platform dialled from another call (connect, transfer) names that call
    const chained = !!row.master_call_id && row.master_call_id !== EMPTY_UUID;
    for (const a of s.alarms) {
      const line = {
        event: 'call_quality_alarm',
        call_id: row.id,
        customer_id: row.customer_id,
        master_call_id: chained ? row.master_call_id : null,
        leg: chained ? 'chained' : 'call',
        codec: s.codec,
        direction: a.direction,
        metric: a.metric,
        state: a.state,
        value: a.value,
        threshold: a.threshold,
      };
      if (a.state === 'raised') this.deps.logger.warn(line, 'call quality alarm raised');
      else this.deps.logger.info(line, 'call quality alarm cleared');
    }
  }

  private async publish(s: QualitySampleResult, final: boolean): Promise<void> {
    const row = this.row();
    const base = { id: row.id, customer_id: row.customer_id, call_id: row.id, activeflow_id: row.activeflow_id, codec: s.codec };
    const send = (type: 'call_quality' | 'call_quality_alarm', payload: typeof base & Record<string, unknown>) =>
      publishResourceEvent(this.deps.events, type, payload).catch((err: Error) => this.deps.logger.warn({ err: err.message, call: row.id, type }, 'event publish failed'));
    // a sample's alarms before the sample: the final sample is the leg's last quality event
    for (const a of s.alarms) await send('call_quality_alarm', { ...base, ...a });
    await send('call_quality', { ...base, final, in: s.in, out: s.out });
  }
}
