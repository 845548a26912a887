// POST /activeflows end to end: control-api writes the record and queues activeflow.start; a real
// media-app node claims it, runs it (no call), and stop reaches the node that runs it. A second
// delivery of the same start runs nothing.
import { expect } from 'chai';
import http from 'node:http';
import request from 'supertest';
import { CommandBus } from '../../core/commands/bus';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { closeCommandBus } from '../../control-api/calls/bus';
import { sleep, startPlatform, until, type Platform } from '../../testkit/media-app/harness';

describe('activeflows started through the API run on a media-app node', function () {
  this.timeout(60_000);
  let p: Platform;
  let t: TestApp;
  let f: Fixture;
  let server: http.Server;
  let hookUrl: string;
  const hooks: { path: string; body: string }[] = [];

  before(async () => {
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }); // the webhook receiver is on loopback: opted in
    // the same key prefix: control-api's BullMQ queues are the ones this media-app consumes
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: p.config.redisKeyPrefix, EGRESS_ALLOW_CIDRS: '127.0.0.0/8' } });
    f = await createFixture(t.ctx);
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        hooks.push({ path: req.url ?? '', body });
        res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(async () => {
    server?.close();
    if (t) await closeCommandBus(t.ctx);
    await t?.close();
    await p?.close();
  });
  const api = (m: 'get' | 'post', path: string) => request(t.app)[m](`/v1.0${path}`).query({ accesskey: f.accesskey });
  const row = (id: string) => t.ctx.db('activeflows').where({ id }).first();

  it('runs the actions, substituting variables, and ends the record; a second start runs nothing', async () => {
    const r = await api('post', '/activeflows').send({
      actions: [
        { type: 'variable_set', option: { key: 'greeting', value: 'hello-${who}' } },
        { type: 'webhook_send', option: { sync: true, uri: `${hookUrl}/first`, method: 'POST', data_type: 'application/json', data: '{"g":"${greeting}"}' } },
      ],
      variables: { who: 'world' },
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    const id = r.body.id as string;
    const ended = await until(async () => ((await row(id))?.status === 'ended' ? row(id) : null), 15_000, 'activeflow ended');
    expect(ended.end_reason).to.equal('finished');
    expect((ended.executed_actions as { type: string }[]).map((a) => a.type)).to.deep.equal(['variable_set', 'webhook_send']);
    expect(hooks.filter((h) => h.path === '/first').map((h) => JSON.parse(h.body))).to.deep.equal([{ g: 'hello-world' }]);

    // at-least-once delivery: the same start again (another command id) must not run it twice
    const bus = new CommandBus({ redis: t.ctx.redis, keyPrefix: p.config.redisKeyPrefix });
    try {
      await bus.startActiveflow(id, f.customer.id, `activeflow-start-${id}-again`);
      await sleep(1500);
    } finally {
      await bus.close();
    }
    expect(hooks.filter((h) => h.path === '/first')).to.have.length(1);
    expect((await row(id))!.executed_actions).to.have.length(2);
  });

  it('stop reaches the node running a blocked activeflow; stopping again is idempotent', async () => {
    const r = await api('post', '/activeflows').send({
      actions: [
        { type: 'webhook_send', option: { sync: true, uri: `${hookUrl}/blocked`, method: 'POST' } },
        { type: 'block' },
        { type: 'webhook_send', option: { sync: true, uri: `${hookUrl}/after`, method: 'POST' } },
      ],
    });
    expect(r.status).to.equal(201);
    const id = r.body.id as string;
    await until(() => hooks.some((h) => h.path === '/blocked'), 15_000, 'blocked');
    expect((await row(id))!.status).to.equal('running');
    const s = await api('post', `/activeflows/${id}/stop`);
    expect(s.status, JSON.stringify(s.body)).to.equal(200);
    const ended = await until(async () => ((await row(id))?.status === 'ended' ? row(id) : null), 15_000, 'stopped');
    expect(ended.end_reason).to.equal('stopped');
    expect(hooks.some((h) => h.path === '/after')).to.equal(false);
    expect((await api('post', `/activeflows/${id}/stop`)).status).to.equal(200);
  });

  it('a start naming another customer, or an unknown activeflow, runs nothing and writes nothing', async () => {
    const r = await api('post', '/activeflows').send({ actions: [{ type: 'block' }] });
    const id = r.body.id as string;
    await until(async () => ((await row(id))?.executed_actions.length ? true : null), 15_000, 'running');
    await api('post', `/activeflows/${id}/stop`);
    const other = await createFixture(t.ctx);
    const bus = new CommandBus({ redis: t.ctx.redis, keyPrefix: p.config.redisKeyPrefix });
    const before = Number((await t.ctx.db('activeflows').count({ n: 'id' }))[0]!.n);
    try {
      await bus.startActiveflow(id, other.customer.id, `start-foreign-${id}`);
      await bus.startActiveflow('6f1b9e2c-0000-4000-8000-00000000dead', f.customer.id, 'start-unknown');
      await sleep(1000);
    } finally {
      await bus.close();
    }
    expect(Number((await t.ctx.db('activeflows').count({ n: 'id' }))[0]!.n)).to.equal(before);
    expect((await row(id))!.status).to.equal('ended');
    expect(p.app.factory.manager.get(id)).to.equal(undefined);
  });
});
