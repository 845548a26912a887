import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp } from '../../../testkit/api';
import { authOpenApiPaths } from '../../../control-api/auth';
import { uniqueEmail, expectBare } from './harness';

describe('auth group mounting and its OpenAPI part', () => {
  it('createApp mounts control-api/auth by default at /auth, and /v1.0/auth/* is ROUTE_NOT_FOUND', async () => {
    const outbox = await fs.mkdtemp(path.join(os.tmpdir(), 'auth-outbox-'));
    const t = await buildTestApp({ env: { OUTBOX_DIR: outbox, RATE_LIMIT_SCALE: '0' } });
    try {
      const email = uniqueEmail('mount');
      const res = await request(t.app).post('/auth/signup').send({ email, accepted_tos: true });
      expect(res.status).to.equal(200);
      expect(res.body.customer.email).to.equal(email);
      expect((await fs.readdir(outbox)).some((f) => f.endsWith('.eml'))).to.equal(true);
      expectBare(await request(t.app).post('/auth/login').send({ username: email }));
      for (const p of ['/v1.0/auth/login', '/v1.0/auth/signup', '/v1.0/auth']) {
        const r = await request(t.app).post(p).send({});
        expect(r.status, p).to.equal(404);
        expect(r.body.error.reason, p).to.equal('ROUTE_NOT_FOUND');
      }
      const unknown = await request(t.app).get('/auth/nothing-here');
      expect(unknown.status).to.equal(404);
      expect(unknown.body.error.reason).to.equal('ROUTE_NOT_FOUND');
    } finally {
      await t.close();
      await fs.rm(outbox, { recursive: true, force: true });
    }
  });

  it('authOpenApiPaths describes every endpoint of the spec table from the validating schemas', () => {
    const paths = authOpenApiPaths('http://127.0.0.1:8080/');
    const ops = Object.entries(paths).flatMap(([p, v]) =>
      Object.keys(v)
        .filter((k) => k !== 'servers')
        .map((m) => `${m.toUpperCase()} ${p}`),
    );
    expect(ops.sort()).to.deep.equal(
      [
        'POST /auth/signup',
        'POST /auth/email-verify',
        'GET /auth/email-verify',
        'POST /auth/email-verify-resend',
        'POST /auth/login',
        'POST /auth/boot',
        'POST /auth/boot/refresh',
        'POST /auth/password-forgot',
        'GET /auth/password-reset',
        'POST /auth/password-reset',
        'POST /auth/unregister',
        'DELETE /auth/unregister',
        'POST /auth/delegate',
        'POST /auth/logout',
      ].sort(),
    );
    const signup = paths['/auth/signup'].post as { requestBody: { content: Record<string, { schema: { required: string[]; properties: Record<string, unknown> } }> } };
    const schema = signup.requestBody.content['application/json'].schema;
    expect(schema.required.sort()).to.deep.equal(['accepted_tos', 'email']);
    expect(schema.properties).to.have.keys('email', 'accepted_tos', 'name', 'detail', 'phone_number', 'address', 'webhook_method', 'webhook_uri');
    expect(paths['/auth/login'].servers).to.deep.equal([{ url: 'http://127.0.0.1:8080' }]);
  });
});
