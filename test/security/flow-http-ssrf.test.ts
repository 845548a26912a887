// Finding 3: flow HTTP (webhook_send, fetch, and the actions a fetch_flow brings in) reached internal
// addresses: `http://[::ffff:127.0.0.1]:PORT/` slipped past the old guard, and a fetch answer ran as
// flow actions. Activeflows are started through the API on a real media-app node whose egress policy
// allows only 127.0.0.2 (the "public" server of spellings.ts); the forbidden servers on 127.0.0.1 and
// ::1 must get no request at all, whatever the spelling (literals, loopback DNS names, redirects).
import { expect } from 'chai';
import request from 'supertest';
import { closeCommandBus } from '../../control-api/calls/bus';
import { ConfigError } from '../../core/config';
import { loadMediaAppConfig } from '../../media-app/kit/config';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { SPELLINGS, startInternalTargets, type InternalTargets } from './spellings';

interface Row {
  status: string;
  end_reason: string;
  error: string;
  executed_actions: { type: string }[];
}

describe('security: flow HTTP goes through the egress policy (finding 3)', function () {
  this.timeout(240_000);
  let p: Platform;
  let t: TestApp;
  let f: Fixture;
  let targets: InternalTargets;

  before(async () => {
    targets = await startInternalTargets();
    p = await startPlatform(targets.env);
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: p.config.redisKeyPrefix } });
    f = await createFixture(t.ctx);
  });
  after(async () => {
    if (t) await closeCommandBus(t.ctx);
    await t?.close();
    await p?.close();
    await targets?.close();
  });

  const api = (m: 'get' | 'post', path: string) => request(t.app)[m](`/v1.0${path}`).query({ accesskey: f.accesskey });

  /** Starts an activeflow of `actions` with `variables` and resolves its ended row. */
  async function run(actions: unknown[], variables: Record<string, string>): Promise<Row> {
    const r = await api('post', '/activeflows').send({ actions, variables });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    const id = r.body.id as string;
    return until(
      async () => {
        const row = (await t.ctx.db('activeflows').where({ id }).first()) as Row | undefined;
        return row?.status === 'ended' ? row : null;
      },
      20_000,
      `activeflow ${id} ended`,
    );
  }

  it('the finding: webhook_send and fetch to http://[::ffff:127.0.0.1]:PORT/ reach nothing and run nothing', async () => {
    const target = `http://[::ffff:127.0.0.1]:${targets.port}/admin`;
    const before = targets.internalHits();
    const hook = await run([{ type: 'webhook_send', option: { sync: true, uri: '${target}', method: 'POST', data: '{}' } }], { target });
    expect(hook.end_reason).to.equal('finished');
    const fetched = await run([{ type: 'fetch', option: { event_url: '${target}' } }, { type: 'stop' }], { target });
    expect(targets.internalHits() - before).to.equal(0);
    expect(fetched.executed_actions.map((a) => a.type)).to.deep.equal(['fetch']);
    expect(fetched.end_reason).to.equal('error');
    expect(fetched.error).to.match(/^fetch: event_url refused: .*not allowed/);
  });

  it('every spelling of spellings.ts is refused for webhook_send, fetch and a flow brought in by fetch_flow', async () => {
    // a stored flow whose webhook_send target is filled in at run time (a literal one is refused when stored)
    const stored = await api('post', '/flows').send({ name: 'inner', actions: [{ type: 'webhook_send', option: { sync: true, uri: '${target}', method: 'GET' } }] });
    expect(stored.status, JSON.stringify(stored.body)).to.be.oneOf([200, 201]);
    const flowId = stored.body.id as string;
    const reached: string[] = [];
    for (const s of SPELLINGS) {
      if (s.kind === 'rebind') targets.resetRebind();
      const before = targets.internalHits();
      const variables = { target: s.url(targets) };
      const hook = await run([{ type: 'webhook_send', option: { sync: true, uri: '${target}', method: 'GET' } }], variables);
      const fetched = await run([{ type: 'fetch', option: { event_url: '${target}', event_method: 'GET' } }], variables);
      const viaFlow = await run([{ type: 'fetch_flow', option: { flow_id: flowId } }], variables);
      if (targets.internalHits() > before) reached.push(`${s.label} (${targets.internalHits() - before} requests)`);
      expect(hook.end_reason, s.label).to.equal('finished');
      expect(
        viaFlow.executed_actions.map((a) => a.type),
        s.label,
      ).to.deep.equal(['fetch_flow', 'webhook_send']);
      if (fetched.end_reason !== 'error' || fetched.executed_actions.length !== 1) reached.push(`${s.label}: the fetch answer ran as actions`);
      expect(fetched.error, s.label).not.to.contain(targets.secret);
    }
    expect(reached, 'spellings that reached the forbidden server').to.deep.equal([]);
  });

  it('a flow stored or started with a literal forbidden URL is refused with 400 naming the field', async () => {
    const cases: [string, unknown[], string][] = [
      ['/flows', [{ type: 'webhook_send', option: { uri: `http://[::ffff:127.0.0.1]:${targets.port}/x` } }], 'actions[0].option.uri'],
      ['/flows', [{ type: 'answer' }, { type: 'fetch', option: { event_url: `http://0x7f000001:${targets.port}/x` } }], 'actions[1].option.event_url'],
      ['/flows', [{ type: 'play', option: { stream_urls: ['https://example.com/a.wav', `http://[::1]:${targets.port}/a.wav`] } }], 'actions[0].option.stream_urls[1]'],
      ['/activeflows', [{ type: 'external_media_start', option: { url: `ws://localhost:${targets.port}/bot` } }], 'actions[0].option.url'],
      ['/flows', [{ type: 'webhook_send', option: { uri: 'https://user:secret@crm.example.com/x' } }], 'actions[0].option.uri'], // stored only: never run
      ['/flows', [{ type: 'amd', option: { voicemail_urls: ['http://169.254.169.254/latest/meta-data'] } }], 'actions[0].option.voicemail_urls[0]'], // stored only: never run
    ];
    for (const [path, actions, field] of cases) {
      const r = await api('post', path).send(path === '/flows' ? { name: 'x', actions } : { actions });
      expect(r.status, `${field}: ${JSON.stringify(r.body)}`).to.equal(400);
      expect(
        (r.body.details ?? r.body.error?.details ?? []).map((d: { field: string }) => d.field),
        JSON.stringify(r.body),
      ).to.include(field);
    }
    // a URL filled in at run time is checked then, not when stored
    const ok = await api('post', '/flows').send({ name: 'x', actions: [{ type: 'webhook_send', option: { uri: 'http://${host}/x' } }] });
    expect(ok.status, JSON.stringify(ok.body)).to.be.oneOf([200, 201]);
    expect(targets.internalHits()).to.equal(0);
  });

  it('FLOW_HTTP_ALLOW_PRIVATE is gone: a node configured with it does not start, and says to use EGRESS_ALLOW_CIDRS', () => {
    expect(() => loadMediaAppConfig({ FLOW_HTTP_ALLOW_PRIVATE: 'true' }))
      .to.throw(ConfigError)
      .with.property('message')
      .match(/FLOW_HTTP_ALLOW_PRIVATE.*EGRESS_ALLOW_CIDRS/);
    expect(() => loadMediaAppConfig({ FLOW_HTTP_ALLOW_PRIVATE: 'false' })).not.to.throw();
  });
});
