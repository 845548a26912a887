// API battery (issue 13, item 5, bounded form): every operation of the OpenAPI document fed
// generated bad input answers below 500, and every error is the spec's envelope.
import { expect } from 'chai';
import http from 'node:http';
import net from 'node:net';
import request from 'supertest';
import { buildTestApp, createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { Permission } from '../../core/permissions';
import { badRequests, type BadRequest } from './api/inputs';
import { envelopeProblem } from './api/envelope';
import { answerClientErrors } from '../../control-api/client-error';

type Json = Record<string, any>;
const PER_OP = Number(process.env.API_FUZZ_PER_OP ?? 6);
const SEED = Number(process.env.API_FUZZ_SEED ?? 1121);

/** Operations whose bad input could still have a side effect on the whole test database. */
function skipped(method: string, path: string): boolean {
  return (method === 'delete' && !path.includes('{')) || (method === 'post' && /renew|logout/.test(path));
}

describe('reliability: bad input on every API operation', function () {
  this.timeout(150_000);
  let t: TestApp;
  let sa: Fixture;
  let doc: Json;
  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', BODY_LIMIT_BYTES: '262144' } });
    // a project super admin reaches every operation's validation instead of stopping at 403
    sa = await createFixture(t.ctx, { permission: Permission.ProjectSuperAdmin | Permission.CustomerAdmin });
    doc = (await request(t.app).get('/v1.0/openapi.json')).body;
  });
  after(async () => t.close());

  it(`${PER_OP} generated bad requests per operation: zero 5xx, every error in the envelope`, async () => {
    const failures: string[] = [];
    let tried = 0,
      ops = 0;
    const statuses: Record<number, number> = {};
    for (const [p, methods] of Object.entries<Json>(doc.paths)) {
      for (const [method, op] of Object.entries<Json>(methods)) {
        if (skipped(method, p)) continue;
        ops++;
        for (const r of badRequests(p, op, PER_OP, SEED + ops)) {
          const res = await send(t, method, r, sa.token);
          tried++;
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          // 431 comes from Node's HTTP parser before the app runs (supertest's server; see the test below)
          if (res.status === 431) continue;
          const bad = res.status >= 500 ? `HTTP ${res.status} ${String(res.text).slice(0, 200)}` : envelopeProblem(res);
          if (bad) failures.push(`${method.toUpperCase()} ${p} [${r.what}] -> ${bad}`);
        }
      }
    }
    expect(ops).to.be.greaterThan(300);
    expect(tried).to.be.greaterThan(ops * PER_OP * 0.9);
    expect(failures, `${failures.length} of ${tried} requests; statuses ${JSON.stringify(statuses)}\n${failures.slice(0, 30).join('\n')}`).to.deep.equal([]);
  });

  // Node's HTTP parser refuses a request line or headers over 16 KB before express runs; main.ts's
  // server answers those in the envelope too (control-api/client-error.ts).
  it('an oversized request line and malformed HTTP are answered in the envelope (431, 400)', async () => {
    const server = http.createServer(t.app);
    answerClientErrors(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      const big = await fetch(`http://127.0.0.1:${port}/v1.0/accesskeys?page_token=${'x'.repeat(20_000)}`, { headers: { Authorization: `Bearer ${sa.token}` } });
      expect(big.status).to.equal(431);
      const j = (await big.json()) as { error: Record<string, string> };
      expect(j.error).to.include({ status: 'INVALID_ARGUMENT', reason: 'INVALID_ARGUMENT' });
      expect(j.error.request_id).to.equal(big.headers.get('x-request-id'));
      const raw = await new Promise<string>((resolve, reject) => {
        const s = net.connect(port, '127.0.0.1', () => s.write('GARBAGE / NOT-HTTP\r\n\r\n'));
        let out = '';
        s.on('data', (d) => (out += d.toString()));
        s.on('end', () => resolve(out));
        s.on('error', reject);
      });
      expect(raw).to.match(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)).error.reason).to.equal('INVALID_ARGUMENT');
    } finally {
      server.close();
    }
  });
});

export async function send(t: TestApp, method: string, r: BadRequest, token: string): Promise<request.Response> {
  let req = (request(t.app) as any)[method](`/v1.0${r.path}`).set('Authorization', `Bearer ${token}`).query(r.query) as request.Test;
  if (r.raw !== undefined) req = req.set('Content-Type', r.contentType ?? 'application/json').send(r.raw);
  else if (r.body !== undefined && method !== 'get') req = req.set('Content-Type', 'application/json').send(JSON.stringify(r.body));
  return req;
}
