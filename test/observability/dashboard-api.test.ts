/**
 * GET /v1.0/dashboard against the real control-api app and real Postgres rows: buckets, peak
 * concurrency (a call answered before the range, a live one), ASR, ACD, the MOS histogram and worst
 * calls, webhook failures; another customer's, soft-deleted and stale rows not counted; bad input.
 */
import { insertCallRow } from '../../testkit/cdr';
import { insertDelivery } from '../../testkit/deliveries';
import { expect } from 'chai';
import request from 'supertest';
import { useTestApp, createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { newId } from '../../core/ids';
import { Permission } from '../../core/permissions';
import type { DeliveryStatus } from '../../core/repos/webhook-deliveries';
import { dashboardResponse, type Dashboard } from '../../core/calls/dashboard-schema';

/** The server's response read through the one declaration the console types itself with (strict: a field either side lacks fails). */
const shaped = (body: unknown): Dashboard => dashboardResponse.parse(body);

const at = (hms: string) => new Date(`2026-03-01T${hms}Z`);
const leg = (mos: number) => ({ mos_min: mos, mos_avg: mos + 0.1, loss_pct: 1, jitter_ms: 5, rtt_ms: 40 });

describe('Dashboard: GET /v1.0/dashboard (real Postgres)', function () {
  this.timeout(60_000);
  let t: TestApp;
  let f: Fixture;
  let other: Fixture;

  useTestApp((s) => ({ t, f } = s));
  before(async () => {
    other = await createFixture(t.ctx);
  });

  const call = (fx: Fixture, fields: Record<string, unknown>): Promise<string> => insertCallRow(t.ctx.db, fx.customer.id, fields);

  const delivery = (fx: Fixture, status: DeliveryStatus, tmCreate: Date): Promise<void> => insertDelivery(t.ctx.db, fx.customer.id, status, tmCreate);

  /** A voice-agent (or other) AI session with its messages: [role, time, metadata.latency?]. */
  async function aiSession(fx: Fixture, referenceType: string, messages: [string, Date, unknown?][]): Promise<void> {
    const aicall = newId();
    await t.ctx.db('aicalls').insert({
      id: aicall,
      customer_id: fx.customer.id,
      assistance_type: 'ai',
      assistance_id: newId(),
      status: 'terminated',
      reference_type: referenceType,
      reference_id: newId(),
      tm_create: messages[0]![1],
    });
    for (const [role, tm, latency] of messages) {
      const metadata = JSON.stringify(latency === undefined ? {} : { latency });
      await t.ctx
        .db('aimessages')
        .insert({ id: newId(), customer_id: fx.customer.id, aicall_id: aicall, role, content: role, direction: role === 'user' ? 'incoming' : 'outgoing', tm_create: tm, metadata });
    }
  }

  it('buckets calls, concurrency, ASR, ACD, MOS and webhook failures of the caller only', async () => {
    const a = await call(f, { tm_create: at('11:10:00'), tm_progressing: at('11:10:05'), tm_hangup: at('11:12:05'), quality: { codec: 'PCMU', in: leg(4.2), out: leg(3.9) } });
    const b = await call(f, {
      tm_create: at('11:11:00'),
      tm_progressing: at('11:11:10'),
      tm_hangup: at('11:11:40'),
      quality: { codec: 'PCMA', in: leg(2.4), out: null },
      source: { type: 'tel', target: '+15550009999' },
    });
    await call(f, { tm_create: at('11:11:30'), tm_hangup: at('11:11:50'), hangup_reason: 'noanswer' });
    // answered before the range, ends in its 6th minute
    await call(f, { tm_create: at('10:30:00'), tm_progressing: at('10:30:05'), tm_hangup: at('11:05:30') });
    // live: counts to the end of the range
    await call(f, { tm_create: at('11:50:00'), tm_progressing: at('11:50:10'), status: 'progressing', hangup_reason: '' });
    // none of these counts: another customer's, soft-deleted, a stale "live" call from days ago, after the range
    await call(other, { tm_create: at('11:10:30'), tm_progressing: at('11:10:31'), tm_hangup: at('11:11:30'), quality: { codec: 'PCMU', in: leg(1.5), out: null } });
    await call(f, { tm_create: at('11:20:00'), tm_progressing: at('11:20:01'), tm_hangup: at('11:21:00'), tm_delete: at('11:30:00'), quality: { codec: 'PCMU', in: leg(1.2), out: null } });
    await call(f, { tm_create: new Date('2026-02-25T09:00:00Z'), tm_progressing: new Date('2026-02-25T09:00:05Z'), status: 'progressing', hangup_reason: '' });
    await call(f, { tm_create: at('12:00:00'), tm_progressing: at('12:00:01'), tm_hangup: at('12:00:30') });
    await delivery(f, 'delivered', at('11:10:10'));
    await delivery(f, 'failed', at('11:10:20'));
    await delivery(f, 'refused', at('11:30:00'));
    await delivery(f, 'pending', at('11:31:00'));
    await delivery(other, 'failed', at('11:10:00'));
    // AI reply times: 800 and 1200 ms at 11:20; 2000 and 500 ms at 11:21 (a caller message answered by
    // nothing before the next one is not a turn); 1000 ms at 11:22 with a tool message in between
    await aiSession(f, 'call', [
      ['user', at('11:20:00.000')],
      ['assistant', at('11:20:00.800')],
      ['user', at('11:20:10.000')],
      ['assistant', at('11:20:11.200')],
      ['user', at('11:21:00.000')],
      ['assistant', at('11:21:02.000')],
      ['user', at('11:21:30.000')],
      ['user', at('11:21:40.000')],
      ['assistant', at('11:21:40.500')],
      ['user', at('11:22:00.000')],
      ['tool', at('11:22:00.300')],
      ['assistant', at('11:22:01.000')],
    ]);
    // a chat session (not a voice turn) and another customer's voice session do not count
    await aiSession(f, 'conversation', [
      ['user', at('11:20:00.000')],
      ['assistant', at('11:20:05.000')],
    ]);
    await aiSession(other, 'call', [
      ['user', at('11:20:00.000')],
      ['assistant', at('11:20:09.000')],
    ]);

    const res = await request(t.app).get('/v1.0/dashboard').query({ accesskey: f.accesskey, range: '1h', end: '2026-03-01T11:59:30Z' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.include({ range: '1h', start: '2026-03-01T11:00:00.000Z', end: '2026-03-01T12:00:00.000Z', bucket_sec: 60 });
    const buckets = shaped(res.body).buckets;
    expect(buckets).to.have.length(60);
    expect(buckets[10]).to.deep.equal({
      t: '2026-03-01T11:10:00.000Z',
      calls: 1,
      answered: 1,
      acd_sec: 120,
      concurrent_peak: 1,
      webhook_deliveries: 2,
      webhook_failures: 1,
      ai_reply_ms: null,
      ai_latency_ms: null,
    });
    expect(buckets[11]).to.include({ calls: 2, answered: 1, acd_sec: 30, concurrent_peak: 2 });
    expect(buckets.map((x) => x.concurrent_peak)).to.deep.equal([
      ...Array<number>(6).fill(1), // the call answered before the range, to 11:05:30
      ...Array<number>(4).fill(0),
      1,
      2,
      1, // a, a + b, a until 11:12:05
      ...Array<number>(37).fill(0),
      ...Array<number>(10).fill(1), // the live call
    ]);
    expect(buckets[30]).to.include({ webhook_deliveries: 1, webhook_failures: 1 });
    expect(buckets[31]).to.include({ webhook_deliveries: 1, webhook_failures: 0 });
    expect(buckets[20]!.ai_reply_ms).to.deep.equal({ turns: 2, p50: 1000, p90: 1160, p99: 1196 });
    expect(buckets[21]!.ai_reply_ms).to.deep.equal({ turns: 2, p50: 1250, p90: 1850, p99: 1985 });
    expect(buckets[22]!.ai_reply_ms).to.deep.equal({ turns: 1, p50: 1000, p90: 1000, p99: 1000 });
    expect(res.body.totals).to.deep.equal({
      calls: 4,
      answered: 3,
      asr: 0.75,
      acd_sec: 75,
      concurrent_peak: 2,
      mos_avg: 3.15,
      webhook_deliveries: 4,
      webhook_failures: 2,
      ai_reply_ms: { turns: 5, p50: 1000, p90: 1680, p99: 1968 },
      ai_latency_ms: null,
    });
    expect(res.body.mos_histogram).to.deep.equal({ edges: [1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5], counts: [0, 0, 1, 0, 0, 1, 0] });
    expect(res.body.worst_calls.map((w: { id: string; mos_min: number }) => [w.id, w.mos_min])).to.deep.equal([
      [b, 2.4],
      [a, 3.9],
    ]);
    expect(res.body.worst_calls[0]).to.include({ direction: 'incoming', source_target: '+15550009999', codec: 'PCMA' });

    // the other customer sees its own call only
    const theirs = await request(t.app).get('/v1.0/dashboard').query({ accesskey: other.accesskey, range: '1h', end: '2026-03-01T11:59:30Z' });
    expect(shaped(theirs.body).totals).to.include({ calls: 1, answered: 1, concurrent_peak: 1, mos_avg: 1.5, webhook_failures: 1 });
    expect(theirs.body.totals.ai_reply_ms).to.deep.equal({ turns: 1, p50: 9000, p90: 9000, p99: 9000 });
  });

  it("reports AI turn latency per stage from the answers' metadata.latency, ignoring answers without it", async () => {
    const lat = (firstRtp: number | null, wait: number | null, stt: number | null, llm: number, tts: number | null, rule: string | null = 'complete') => ({
      end_of_turn_rule: rule,
      end_of_turn_wait_ms: wait,
      stt_final_ms: stt,
      llm_first_token_ms: llm,
      tts_first_byte_ms: tts,
      first_rtp_ms: firstRtp,
      interrupted: false,
    });
    const h = (m: string) => new Date(`2026-03-02T10:${m}Z`);
    await aiSession(f, 'call', [
      // the greeting (no caller turn before it): not a caller-stops figure
      ['assistant', h('00:00.000'), lat(900, null, null, 400, 200, null)],
      ['user', h('00:10.000')],
      ['assistant', h('00:11.000'), lat(1000, 500, 300, 300, 150)],
      ['user', h('00:20.000')],
      // a tool call then the answer: both messages carry the turn's latency, the turn counts once
      ['assistant', h('00:21.000'), lat(2000, 800, 600, 700, 250, 'continuation')],
      ['tool', h('00:21.100')],
      ['assistant', h('00:22.000'), lat(2000, 800, 600, 700, 250, 'continuation')],
      ['user', h('00:30.000')],
      // cut before any audio: no TTS or first-audio figure
      ['assistant', h('00:30.900'), { ...lat(null, 400, 200, 350, null), interrupted: true }],
      // an answer from before latency was recorded: a reply time, no latency
      ['user', h('01:00.000')],
      ['assistant', h('01:01.500')],
      ['user', h('01:10.000')],
      ['assistant', h('01:11.000'), 'pending'],
    ]);
    // a chat session's latency (none is written there, but if it were) does not count
    await aiSession(f, 'conversation', [
      ['user', h('00:40.000')],
      ['assistant', h('00:41.000'), lat(5000, 5000, 5000, 5000, 5000)],
    ]);
    const res = await request(t.app).get('/v1.0/dashboard').query({ accesskey: f.accesskey, range: '1h', end: '2026-03-02T10:59:30Z' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const buckets = shaped(res.body).buckets;
    expect(buckets[0]!.ai_latency_ms).to.deep.equal({
      turns: 3,
      first_rtp: { turns: 2, p50: 1500, p90: 1900, p99: 1990 },
      end_of_turn_wait: { turns: 3, p50: 500, p90: 740, p99: 794 },
      stt_final: { turns: 3, p50: 300, p90: 540, p99: 594 },
      llm_first_token: { turns: 3, p50: 350, p90: 630, p99: 693 },
      tts_first_byte: { turns: 2, p50: 200, p90: 240, p99: 249 },
    });
    expect(buckets[0]!.ai_reply_ms).to.include({ turns: 3 });
    // the minute with turns but no latency
    expect(buckets[1]!.ai_reply_ms).to.include({ turns: 2 });
    expect(buckets[1]!.ai_latency_ms).to.equal(null);
    expect(res.body.totals.ai_reply_ms).to.include({ turns: 5 });
    expect(res.body.totals.ai_latency_ms).to.deep.equal(buckets[0]!.ai_latency_ms);
  });

  it('covers 30 days in 6-hour buckets and defaults to 24 h', async () => {
    const month = await request(t.app).get('/v1.0/dashboard').query({ accesskey: f.accesskey, range: '30d', end: '2026-03-01T11:59:30Z' });
    expect(month.status).to.equal(200);
    expect(shaped(month.body)).to.include({ bucket_sec: 21600, start: '2026-01-30T12:00:00.000Z', end: '2026-03-01T12:00:00.000Z' });
    expect(month.body.buckets).to.have.length(120);
    // the 10:30 call and the stale one of Feb 25 are in this range too
    expect(month.body.totals).to.include({ calls: 6, answered: 5 });
    const day = await request(t.app).get('/v1.0/dashboard').query({ accesskey: f.accesskey, end: '2026-03-01T11:59:30Z' });
    expect(shaped(day.body)).to.include({ range: '24h', bucket_sec: 900 });
    expect(day.body.buckets).to.have.length(96);
    // a range without AI turns
    const empty = await request(t.app).get('/v1.0/dashboard').query({ accesskey: f.accesskey, range: '1h', end: '2026-03-05T00:00:00Z' });
    expect(shaped(empty.body).totals).to.deep.include({ calls: 0, asr: null, acd_sec: null, mos_avg: null, ai_reply_ms: null, ai_latency_ms: null });
  });

  it('refuses a bad range or end with the error envelope, and an agent below manager', async () => {
    for (const [query, field] of [
      [{ range: '2h' }, 'range'],
      [{ range: '' }, 'range'],
      [{ end: 'yesterday' }, 'end'],
      [{ end: '2026-02-30T10:00:00Z' }, 'end'],
      [{ end: '2026-03-01T10:00:00' }, 'end'],
    ] as const) {
      const res = await request(t.app)
        .get('/v1.0/dashboard')
        .query({ accesskey: f.accesskey, ...query });
      expect(res.status, JSON.stringify(query)).to.equal(400);
      expect(res.body.error.status).to.equal('INVALID_ARGUMENT');
      expect(res.body.error.reason).to.equal('INVALID_REQUEST_PARAMETER');
      expect(JSON.stringify(res.body.error.details)).to.contain(field);
    }
    const agent = await createFixture(t.ctx, { permission: Permission.CustomerAgent });
    // an accesskey acts for the whole customer: the agent's own login token is what is limited
    const res = await request(t.app).get('/v1.0/dashboard').set('Authorization', `Bearer ${agent.token}`);
    expect(res.status).to.equal(403);
    expect(res.body.error.reason).to.equal('PERMISSION_DENIED');
  });
});
