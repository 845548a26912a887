/**
 * The operators' Prometheus side (deploy/prometheus, deploy/grafana): Debian's promtool checks and
 * unit-tests the alert rules; then a real Prometheus (the Debian binary, loopback port, temp config
 * and data dir) scrapes a running control-api metrics listener and a running sip-server process,
 * loads the rules and evaluates them. Every metric the rules and the dashboard name must exist in
 * those real scrapes (no made-up names).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, type TestApp } from '../../testkit/api';
import { freePort, portBlock } from '../../testkit/ports';
import { testDatabaseUrl } from '../../testkit/db';
import { closeCommandBus } from '../../control-api/calls/bus';

const DRACHTIO_SECRET = 'prometheus-test-secret';
import { startMetricsListener, type MetricsListener } from '../../control-api/ops';
import { platformMetrics } from '../../core/metrics';

const ROOT = path.resolve(__dirname, '../..');
const RULES = path.join(ROOT, 'deploy/prometheus/alerts.yml');
const RULE_TESTS_DIR = path.join(ROOT, 'deploy/prometheus/tests');
const DASHBOARD = path.join(ROOT, 'deploy/grafana/openvoice.json');

const PROMQL_WORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

/** The metric names a PromQL expression reads (functions, keywords, labels, strings and ranges left out). */
export function metricNames(expr: string): string[] {
  const s = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const out = new Set<string>();
  for (const m of s.matchAll(/(?<![A-Za-z0-9_:.$])([A-Za-z_:][A-Za-z0-9_:]*)(?![A-Za-z0-9_:])(?!\s*\()/g)) {
    if (!PROMQL_WORDS.has(m[1]!.toLowerCase())) out.add(m[1]!);
  }
  return [...out];
}

/** Sample names a scrape offers: every family (with a histogram's _bucket/_sum/_count) and every sample. */
function scrapedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const t = /^# TYPE (\S+) (\S+)/.exec(line);
    if (t) {
      names.add(t[1]!);
      if (t[2] === 'histogram') for (const x of ['_bucket', '_sum', '_count']) names.add(t[1]! + x);
      if (t[2] === 'summary') for (const x of ['_sum', '_count']) names.add(t[1]! + x);
      continue;
    }
    const m = /^([A-Za-z_:][A-Za-z0-9_:]*)[{ ]/.exec(line);
    if (m) names.add(m[1]!);
  }
  return names;
}

async function until<T>(what: string, f: () => Promise<T | null>, ms = 40_000): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown = null;
  for (;;) {
    try {
      const v = await f();
      if (v !== null) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`${what}: not in time${last ? ` (${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

type Started = { proc: ChildProcess; ready: Promise<void>; exited: Promise<number | null>; output: () => string };

function startSipServer(env: Record<string, string>): Started {
  return startProcess('sip-server/main.ts', { SIP_SERVER_READY_LINE: '1', ...env });
}

function startProcess(script: string, env: Record<string, string>): Started {
  const proc = spawn(process.execPath, ['-r', 'tsx/cjs', path.join(ROOT, script)], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const ready = new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${script} not ready: ${out}`)), 30_000);
    proc.stdout!.on('data', () => out.includes('READY ') && (clearTimeout(t), resolve()));
    proc.once('exit', () => (clearTimeout(t), reject(new Error(`${script} exited: ${out}`))));
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { proc, ready, exited, output: () => out };
}

describe('Prometheus alert rules and Grafana dashboard (promtool, a real Prometheus, real scrapes)', function () {
  this.timeout(120_000);

  it('promtool check rules and promtool test rules pass', () => {
    const check = spawnSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
    expect(check.status, check.stdout + check.stderr).to.equal(0);
    expect(check.stdout).to.match(/SUCCESS: \d+ rules found/);
    // every unit-test file of the rules (alerts.test.yml, quality-asr.test.yml, ...)
    const ruleTests = fs
      .readdirSync(RULE_TESTS_DIR)
      .filter((n) => n.endsWith('.test.yml'))
      .map((n) => path.join(RULE_TESTS_DIR, n));
    expect(ruleTests.map((f) => path.basename(f))).to.include.members(['alerts.test.yml', 'quality-asr.test.yml']);
    const unit = spawnSync('promtool', ['test', 'rules', ...ruleTests], { encoding: 'utf8' });
    expect(unit.status, unit.stdout + unit.stderr).to.equal(0);
    expect(unit.stdout.match(/SUCCESS/g)).to.have.length(ruleTests.length);
    const example = spawnSync('promtool', ['check', 'config', path.join(ROOT, 'deploy/prometheus/prometheus.yml')], { encoding: 'utf8' });
    expect(example.status, example.stdout + example.stderr).to.equal(0);
  });

  it('sip-server refuses a bad SIP_METRICS_LISTEN with exit code 2 naming it', async () => {
    const m = startSipServer({ SIP_LISTEN_HOST: '127.0.0.1', SIP_PORT: String(await freePort()), DRACHTIO_PORT: String(await freePort()), SIP_METRICS_LISTEN: 'nowhere' });
    m.ready.catch(() => undefined);
    try {
      expect(await Promise.race([m.exited, new Promise((r) => setTimeout(() => r('still running after 20 s'), 20_000))])).to.equal(2);
      expect(m.output()).to.contain('SIP_METRICS_LISTEN');
    } finally {
      if (m.proc.exitCode === null) m.proc.kill('SIGKILL');
    }
  });

  it('media-app refuses a bad MEDIA_APP_METRICS_LISTEN with exit code 2 naming it', async () => {
    const m = startProcess('media-app/main.ts', { DATABASE_URL: await testDatabaseUrl(), REDIS_URL: process.env.TEST_REDIS_URL!, MEDIA_APP_METRICS_LISTEN: '9466' });
    m.ready.catch(() => undefined);
    try {
      expect(await Promise.race([m.exited, new Promise((r) => setTimeout(() => r('still running after 20 s'), 20_000))])).to.equal(2);
      expect(m.output()).to.contain('MEDIA_APP_METRICS_LISTEN');
    } finally {
      if (m.proc.exitCode === null) m.proc.kill('SIGKILL');
    }
  });

  describe('a real Prometheus scraping the platform', () => {
    let t: TestApp;
    let listener: MetricsListener;
    let sip: Started;
    let media: Started;
    let mediaMetricsPort: number;
    /** calls_ended_total{direction="outgoing"} of this process before the test's call (other suites may share the process). */
    let endedBefore = 0;
    let sipMetricsPort: number;
    let sipPort: number;
    let prom: ChildProcess | null = null;
    let promOut = '';
    let promUrl: string;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prom-test-'));

    before(async () => {
      t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
      listener = await startMetricsListener(t.platform.metrics, { host: '127.0.0.1', port: 0 });
      // some API traffic and one refused egress, so those series have samples
      const f = await createFixture(t.ctx);
      await request(t.app).get('/v1.0/customer').query({ accesskey: f.accesskey });
      await request(t.app).get('/v1.0/calls/not-a-uuid').query({ accesskey: f.accesskey });
      await t.ctx.egress.fetch('http://10.1.2.3/hook').catch(() => undefined);
      // a call made and hung up through the API before any node took it: control-api ends it
      endedBefore = (await platformMetrics.callsEnded.get()).values.filter((v) => v.labels.direction === 'outgoing').reduce((n, v) => n + v.value, 0);
      const call = await request(t.app)
        .post('/v1.0/calls')
        .query({ accesskey: f.accesskey })
        .send({ source: { type: 'sip', target: 'alice@example.test' }, destinations: [{ type: 'sip', target: 'sip:bob@example.test:5090' }], actions: [{ type: 'answer' }] });
      expect(call.status, JSON.stringify(call.body)).to.equal(200);
      const hung = await request(t.app)
        .post(`/v1.0/calls/${call.body.calls[0].id as string}/hangup`)
        .query({ accesskey: f.accesskey });
      expect(hung.body.status).to.equal('hangup');

      sipPort = await freePort();
      sipMetricsPort = await freePort();
      mediaMetricsPort = await freePort();
      const drachtioPort = await freePort();
      sip = startSipServer({
        SIP_LISTEN_HOST: '127.0.0.1',
        SIP_PORT: String(sipPort),
        DRACHTIO_HOST: '127.0.0.1',
        DRACHTIO_PORT: String(drachtioPort),
        DRACHTIO_SECRET: DRACHTIO_SECRET,
        SIP_METRICS_LISTEN: `127.0.0.1:${sipMetricsPort}`,
      });
      await sip.ready;
      // a media-app node connected to that sip-server, with its own metrics listener
      const rtpMin = portBlock('platformRtp', 200).min;
      media = startProcess('media-app/main.ts', {
        DATABASE_URL: await testDatabaseUrl(),
        REDIS_URL: process.env.TEST_REDIS_URL!,
        REDIS_KEY_PREFIX: t.ctx.config.redisKeyPrefix,
        DATA_DIR: path.join(dir, 'media-app'),
        SIP_DOMAIN: 'sip.test',
        JWT_SECRET: 'y'.repeat(40),
        DRACHTIO_HOST: '127.0.0.1',
        DRACHTIO_PORT: String(drachtioPort),
        DRACHTIO_SECRET: DRACHTIO_SECRET,
        MEDIA_APP_NODE_ID: `prom-${process.pid}`,
        RTP_PORT_MIN: String(rtpMin),
        RTP_PORT_MAX: String(rtpMin + 199),
        MEDIA_WORKERS: '1',
        MEDIA_APP_READY_LINE: '1',
        DRAIN_TIMEOUT_SEC: '0',
        MEDIA_APP_METRICS_LISTEN: `127.0.0.1:${mediaMetricsPort}`,
      });
      await media.ready;
      // one SIP request over UDP, so sip_requests_received_total has a sample
      const sock = dgram.createSocket('udp4');
      await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
      const lport = sock.address().port;
      const options = [
        `OPTIONS sip:ping@127.0.0.1:${sipPort} SIP/2.0`,
        `Via: SIP/2.0/UDP 127.0.0.1:${lport};branch=z9hG4bK-prom-${Date.now()}`,
        'Max-Forwards: 70',
        `From: <sip:probe@127.0.0.1>;tag=p1`,
        `To: <sip:ping@127.0.0.1>`,
        `Call-ID: prom-${Date.now()}@127.0.0.1`,
        'CSeq: 1 OPTIONS',
        `Contact: <sip:probe@127.0.0.1:${lport}>`,
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n');
      const answered = new Promise<string>((resolve) => sock.once('message', (m) => resolve(m.toString())));
      sock.send(options, sipPort, '127.0.0.1');
      await Promise.race([answered, new Promise((r) => setTimeout(r, 3000))]);
      sock.close();

      const promPort = await freePort();
      promUrl = `http://127.0.0.1:${promPort}`;
      fs.writeFileSync(
        path.join(dir, 'prometheus.yml'),
        [
          'global:',
          '  scrape_interval: 1s',
          '  evaluation_interval: 1s',
          'rule_files:',
          `  - ${JSON.stringify(RULES)}`,
          'scrape_configs:',
          '  - job_name: openvoice-control-api',
          '    static_configs:',
          `      - targets: ["127.0.0.1:${listener.address.port}"]`,
          '  - job_name: openvoice-sip-server',
          '    static_configs:',
          `      - targets: ["127.0.0.1:${sipMetricsPort}"]`,
          '  - job_name: openvoice-media-app',
          '    static_configs:',
          `      - targets: ["127.0.0.1:${mediaMetricsPort}"]`,
          '',
        ].join('\n'),
      );
      prom = spawn(
        'prometheus',
        [
          `--config.file=${path.join(dir, 'prometheus.yml')}`,
          `--storage.tsdb.path=${path.join(dir, 'data')}`,
          `--web.listen-address=127.0.0.1:${promPort}`,
          '--storage.tsdb.retention.time=1h',
          '--log.level=warn',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      prom.stdout!.on('data', (d: Buffer) => (promOut += d.toString()));
      prom.stderr!.on('data', (d: Buffer) => (promOut = (promOut + d.toString()).slice(-4000)));
      await until('prometheus ready', async () => ((await fetch(`${promUrl}/-/ready`)).ok ? true : null));
    });

    after(async () => {
      if (prom && prom.exitCode === null) {
        const gone = new Promise((r) => prom!.once('exit', r));
        prom.kill('SIGTERM');
        await Promise.race([gone, new Promise((r) => setTimeout(r, 5000))]);
        if (prom.exitCode === null) prom.kill('SIGKILL');
      }
      if (media) {
        media.proc.kill('SIGINT');
        await Promise.race([media.exited, new Promise((r) => setTimeout(r, 8000))]);
        if (media.proc.exitCode === null) media.proc.kill('SIGKILL');
      }
      if (sip) {
        sip.proc.kill('SIGTERM');
        await Promise.race([sip.exited, new Promise((r) => setTimeout(r, 5000))]);
        if (sip.proc.exitCode === null) sip.proc.kill('SIGKILL');
      }
      await listener?.close();
      await closeCommandBus(t.ctx).catch(() => undefined);
      await t?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    type Rule = { name: string; query: string; health: string; type: string; lastError?: string };
    type Groups = { data: { groups: { name: string; rules: Rule[] }[] } };

    it('scrapes the three listeners, loads every rule group and evaluates every rule healthily', async () => {
      const targets = await until('both targets up', async () => {
        const r = (await (await fetch(`${promUrl}/api/v1/targets`)).json()) as { data: { activeTargets: { labels: { job: string }; health: string; lastError: string }[] } };
        const up = r.data.activeTargets.filter((x) => x.health === 'up').map((x) => x.labels.job);
        return up.length === 3 ? r.data.activeTargets : null;
      });
      expect(targets.map((x) => x.labels.job).sort()).to.deep.equal(['openvoice-control-api', 'openvoice-media-app', 'openvoice-sip-server']);

      const groups = await until('every rule evaluated', async () => {
        const r = (await (await fetch(`${promUrl}/api/v1/rules`)).json()) as Groups;
        const rules = r.data.groups.flatMap((g) => g.rules);
        return rules.length > 0 && rules.every((x) => x.health !== 'unknown') ? r.data.groups : null;
      });
      expect(groups.map((g) => g.name).sort()).to.deep.equal(['openvoice-calls', 'openvoice-egress', 'openvoice-nodes', 'openvoice-quality', 'openvoice-queues', 'openvoice-webhooks']);
      for (const g of groups) for (const r of g.rules) expect(r.health, `${g.name}/${r.name}: ${r.lastError ?? ''}`).to.equal('ok');

      // scraped series, as Prometheus stores them
      const q = async (query: string) =>
        ((await (await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(query)}`)).json()) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } }).data.result;
      const options = await until('sip_requests_received_total scraped', async () => {
        const r = await q('sip_requests_received_total{method="OPTIONS",job="openvoice-sip-server"}');
        return r.length ? r : null;
      });
      expect(Number(options[0]!.value[1])).to.be.at.least(1);
      // the call control-api ended, counted where it ended
      const ended = await q('sum(calls_ended_total{job="openvoice-control-api",direction="outgoing"})');
      expect(Number(ended[0]!.value[1])).to.equal(endedBefore + 1);
      // media-app's own series (its calls_ended_total exists, at 0: no call reached it)
      const mediaSeries = await q('count(calls_ended_total{job="openvoice-media-app"})');
      expect(Number(mediaSeries[0]!.value[1])).to.be.greaterThan(0);
      // a real media-app node's concurrent calls, 0 when idle, and the answer counters for the ASR rule
      const activeCalls = await q('calls_active{job="openvoice-media-app"}');
      expect(activeCalls.map((x) => [x.metric.direction, Number(x.value[1])]).sort()).to.deep.equal([
        ['incoming', 0],
        ['outgoing', 0],
      ]);
      expect(await q('count(calls_answered_total{job="openvoice-media-app"})')).to.have.length(1);
      // every known outcome is a series from the start, so the webhook rules work before the first failure
      const outcomes = await q('count(webhook_delivery_attempts_total{job="openvoice-control-api"})');
      expect(Number(outcomes[0]!.value[1])).to.equal(4);
      const refusals = await q('sum(egress_refusals_total{reason="private",job="openvoice-control-api"})');
      expect(Number(refusals[0]!.value[1])).to.be.at.least(1);
      // read from Postgres at scrape time: a count, not -1 (unreadable)
      const waiting = await q('queuecalls_waiting{job="openvoice-control-api"}');
      expect(Number(waiting[0]!.value[1])).to.be.at.least(0);
      // nothing is firing on an idle, healthy platform
      const alerts = (await (await fetch(`${promUrl}/api/v1/alerts`)).json()) as { data: { alerts: { labels: { alertname: string }; state: string }[] } };
      expect(alerts.data.alerts.filter((a) => a.state === 'firing').map((a) => a.labels.alertname)).to.deep.equal([]);
    });

    it('names only metrics that exist in the real scrapes, in the rules and in the dashboard', async () => {
      const scrape = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      const exported = new Set([...scrapedNames(await scrape(listener.address.port)), ...scrapedNames(await scrape(sipMetricsPort)), ...scrapedNames(await scrape(mediaMetricsPort))]);
      const r = (await (await fetch(`${promUrl}/api/v1/rules`)).json()) as Groups;
      const rules = r.data.groups.flatMap((g) => g.rules);
      const recorded = new Set(rules.filter((x) => x.type === 'recording').map((x) => x.name));
      const dashboard = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8')) as { panels: { targets?: { expr: string }[] }[] };
      const dashExprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((x) => x.expr));
      expect(dashExprs.length).to.be.greaterThan(10);

      const named = new Map<string, string>();
      for (const x of rules) for (const n of metricNames(x.query)) named.set(n, `rule ${x.name}`);
      for (const e of dashExprs) for (const n of metricNames(e.replace(/\$__rate_interval/g, '1m'))) named.set(n, `dashboard: ${e}`);
      expect(named.size).to.be.greaterThan(10);
      const missing: string[] = [];
      for (const [n, where] of named) {
        if (recorded.has(n)) continue;
        // up is Prometheus's own series: it must exist for our jobs
        if (n === 'up') continue;
        if (!exported.has(n)) missing.push(`${n} (${where})`);
      }
      expect(missing, 'metric names not in any scrape').to.deep.equal([]);
      const up = ((await (await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent('up{job=~"openvoice-.*"}')}`)).json()) as { data: { result: unknown[] } }).data.result;
      expect(up).to.have.length(3);
      // the self-check of the extractor: it sees the names it must, and no PromQL words
      expect(metricNames('sum by (le) (rate(http_request_duration_seconds_bucket{a="b"}[5m])) or vector(0) and x:y:z > 0.2')).to.deep.equal(['http_request_duration_seconds_bucket', 'x:y:z']);
      expect(metricNames('made_up_metric_total')).to.deep.equal(['made_up_metric_total']);
      expect(exported.has('made_up_metric_total')).to.equal(false);
    });
  });
});
