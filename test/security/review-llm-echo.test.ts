/**
 * Review: an engine's answer that is not a JSON event was echoed into the customer-visible error
 * ("LLM endpoint sent an event that is not JSON: <first 100 characters>"). With EGRESS_ALLOW_CIDRS
 * opening a private range for the operator's LLM, every customer may point engine_url into that
 * range, and the echo read other internal services' answers. The error now names no content.
 * Real API; the "internal" server listens on 127.0.0.2, the only allowlisted address.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { proposalOutcome } from './proposals';

const SECRET = 'internal-inventory-7f3a';

describe('security review: an engine answer that is not JSON is not echoed', function () {
  this.timeout(60_000);
  let server: http.Server;
  let url: string;
  let t: TestApp;
  let f: Fixture;
  const auth = (r: request.Test) => r.set('Authorization', `Bearer ${f.token}`);

  before(async () => {
    server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(`data: ${SECRET} rows=42\n\n`));
    await new Promise<void>((r) => server.listen(0, '127.0.0.2', r));
    url = `http://127.0.0.2:${(server.address() as AddressInfo).port}/v1`;
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', EGRESS_ALLOW_CIDRS: '127.0.0.2/32' } });
    f = await createFixture(t.ctx);
  });
  after(async () => {
    await t?.close();
    await new Promise((r) => server?.close(r));
  });

  it('the proposal fails with a generic protocol error', async () => {
    const ai = await auth(request(t.app).post('/v1.0/ais')).send({ name: 'bot', engine_model: 'openai.gpt-5', engine_url: url, engine_key: 'k', init_prompt: 'x' });
    expect(ai.status, JSON.stringify(ai.body)).to.equal(200);
    const done = await proposalOutcome(t.app, f.token, ai.body.id);
    expect(done.status).to.equal('failed');
    expect(done.error).to.not.include(SECRET);
    expect(done.error).to.match(/not JSON/);
  });
});
