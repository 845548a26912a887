// An agent's browser SIP credential: POST /v1.0/service_agents/me/sip_credentials issues it (bound to
// the agent's extension), the registrar (real sip-server + media-app on loopback) accepts it for that
// extension's AOR alongside the extension's own password, and refuses it after sign-out (DELETE),
// agent deletion, removal of the extension address, expiry, or for another extension; and when the
// login session that issued it ends (sign-out of that session, a password change, an account freeze).
import { expect } from 'chai';
import request from 'supertest';
import { randomBytes } from 'node:crypto';
import { clock } from '../../core/clock';
import { Permission } from '../../core/permissions';
import { buildTestApp, createAgent, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { truncateAll } from '../../testkit/db';
import { createExtension, startPlatform, UdpSip, type Platform } from '../../testkit/media-app/harness';
import { authorization, rawRegister } from '../media-app/digest-client';
import { freezeCustomer, recoverCustomer } from '../../control-api/customers/lifecycle';

describe('webphone: agent browser SIP credential', function () {
  this.timeout(60_000);
  const prefix = `twp${process.pid}_${randomBytes(4).toString('hex')}:`;
  let p: Platform;
  let t: TestApp;
  let f: Fixture;
  let u: UdpSip;

  before(async () => {
    await truncateAll();
    p = await startPlatform({ REDIS_KEY_PREFIX: prefix, REGISTRAR_LOCKOUT_FAILURES: '100', SIP_DIGEST_ALGORITHMS: 'MD5' });
    t = await buildTestApp({ env: { REDIS_KEY_PREFIX: prefix, SIP_WSS_PUBLIC_URL: 'wss://127.0.0.1:7443', WEB_SIP_CREDENTIAL_TTL_SEC: '3600' } });
    f = await createFixture(t.ctx);
  });
  after(async () => {
    clock.reset();
    await t?.close();
    await p?.close();
  });
  beforeEach(async () => {
    u = await UdpSip.open();
  });
  afterEach(() => u.close());

  /** An agent of the fixture's customer with the given extension addresses. */
  async function agentWith(extensions: string[]) {
    const a = await createAgent(t.ctx, f.customer.id, Permission.CustomerAgent);
    await t.ctx.repos.agents.update(a.agent.id, { addresses: extensions.map((e) => ({ type: 'extension', target: e })) });
    return a;
  }

  /** REGISTER as `user@domain` answering the challenge with `authUser`/`password`; the final status. */
  async function register(user: string, domain: string, authUser: string, password: string): Promise<number> {
    const c = await u.request(rawRegister(u, user, domain), p.sipPort);
    if (c.status !== 401) return c.status;
    const chal = c.headers.find(([k]) => k === 'www-authenticate')![1];
    return (await u.request(rawRegister(u, user, domain, authorization(chal, authUser, password, `sip:${domain}`)), p.sipPort)).status;
  }

  const issue = (token: string, body: object = {}) => request(t.app).post('/v1.0/service_agents/me/sip_credentials').set('Authorization', `Bearer ${token}`).send(body);

  it("issues a credential bound to the agent's extension; the registrar accepts it next to the extension password", async () => {
    const { ext, domain, password } = await createExtension(f.customer.id);
    const a = await agentWith([ext.extension]);
    const res = await issue(a.token);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const c = res.body as Record<string, string>;
    expect(c.username).to.match(/^web-[0-9a-f]{24}$/);
    expect(c.password).to.have.length.greaterThan(20);
    expect(c.uri).to.equal(`sip:${ext.username}@${domain}`);
    expect(c.extension_id).to.equal(ext.id);
    expect(c.ws_url).to.equal('wss://127.0.0.1:7443');
    const ttl = (Date.parse(c.expire!) - Date.now()) / 1000;
    expect(ttl).to.be.within(3500, 3601);

    expect(await register(ext.username, domain, c.username!, c.password!)).to.equal(200);
    expect(await register(ext.username, domain, ext.username, password)).to.equal(200);
    expect(await register(ext.username, domain, c.username!, c.password! + 'x')).to.equal(403);
    // the other alias spelling works too
    const alias = await request(t.app).post('/v1.0/service-agents/me/sip_credentials').set('Authorization', `Bearer ${a.token}`).send({});
    expect(alias.status).to.equal(200);
  });

  it("refuses the credential for another extension's address-of-record", async () => {
    const mine = await createExtension(f.customer.id);
    const other = await createExtension(f.customer.id);
    const a = await agentWith([mine.ext.extension]);
    const c = (await issue(a.token)).body as Record<string, string>;
    expect(await register(other.ext.username, other.domain, c.username!, c.password!)).to.equal(403);
  });

  it("picks the extension named by extension_id; 400 in the envelope when it is not one of the agent's", async () => {
    const e1 = await createExtension(f.customer.id);
    const e2 = await createExtension(f.customer.id);
    const stranger = await createExtension(f.customer.id);
    const a = await agentWith([e1.ext.extension, e2.ext.extension]);
    expect((await issue(a.token)).body.extension_id).to.equal(e1.ext.id);
    expect((await issue(a.token, { extension_id: e2.ext.id })).body.extension_id).to.equal(e2.ext.id);
    const bad = await issue(a.token, { extension_id: stranger.ext.id });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.reason).to.equal('INVALID_ARGUMENT');
    expect(bad.body.error.details[0].field).to.equal('extension_id');
    const notUuid = await issue(a.token, { extension_id: 'nope' });
    expect(notUuid.status).to.equal(400);
    const unknownField = await issue(a.token, { extension: e1.ext.extension });
    expect(unknownField.status).to.equal(400);
  });

  it('400 in the envelope when the agent has no extension among its addresses', async () => {
    const a = await agentWith([]);
    const res = await issue(a.token);
    expect(res.status).to.equal(400);
    expect(res.body.error.reason).to.equal('INVALID_ARGUMENT');
    expect(res.body.error.message).to.match(/no extension among its addresses/);
    // an extension address naming no extension
    const b = await agentWith(['no-such-ext']);
    expect((await issue(b.token)).status).to.equal(400);
  });

  it('is for login tokens only: an accesskey gets DIRECT_ACCESS_NOT_SUPPORTED, no credentials 401', async () => {
    const ak = await request(t.app).post('/v1.0/service_agents/me/sip_credentials').query({ accesskey: f.accesskey }).send({});
    expect(ak.status).to.equal(403);
    expect(ak.body.error.reason).to.equal('DIRECT_ACCESS_NOT_SUPPORTED');
    const none = await request(t.app).post('/v1.0/service_agents/me/sip_credentials').send({});
    expect(none.status).to.equal(401);
  });

  it('sign-out (DELETE) revokes every credential of the agent at once', async () => {
    const { ext, domain } = await createExtension(f.customer.id);
    const a = await agentWith([ext.extension]);
    const c1 = (await issue(a.token)).body as Record<string, string>;
    const c2 = (await issue(a.token)).body as Record<string, string>;
    expect(await register(ext.username, domain, c1.username!, c1.password!)).to.equal(200);
    const del = await request(t.app).delete('/v1.0/service_agents/me/sip_credentials').set('Authorization', `Bearer ${a.token}`);
    expect(del.status).to.equal(200);
    expect(del.body).to.deep.equal({ revoked: 2 });
    expect(await register(ext.username, domain, c1.username!, c1.password!)).to.equal(403);
    expect(await register(ext.username, domain, c2.username!, c2.password!)).to.equal(403);
  });

  it('ends when the agent is deleted or loses the extension address', async () => {
    const { ext, domain } = await createExtension(f.customer.id);
    const a = await agentWith([ext.extension]);
    const c = (await issue(a.token)).body as Record<string, string>;
    await t.ctx.repos.agents.update(a.agent.id, { addresses: [] });
    expect(await register(ext.username, domain, c.username!, c.password!)).to.equal(403);
    await t.ctx.repos.agents.update(a.agent.id, { addresses: [{ type: 'extension', target: ext.extension }] });
    expect(await register(ext.username, domain, c.username!, c.password!)).to.equal(200);
    const del = await request(t.app).delete(`/v1.0/agents/${a.agent.id}`).set('Authorization', `Bearer ${f.token}`);
    expect(del.status).to.equal(200);
    expect(await register(ext.username, domain, c.username!, c.password!)).to.equal(403);
  });

  it('ends with the login session that issued it: its sign-out, a password change, a freeze', async () => {
    const { ext, domain } = await createExtension(f.customer.id);
    const a = await agentWith([ext.extension]);
    let password = a.password;
    const login = async (): Promise<string> => {
      const res = await request(t.app).post('/auth/login').send({ username: a.agent.username, password });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body.token as string;
    };
    const credOf = async (token: string) => {
      const res = await issue(token);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const c = res.body as Record<string, string>;
      expect(await register(ext.username, domain, c.username!, c.password!)).to.equal(200);
      return c;
    };

    // sign-out of one session ends the credentials it issued, not those of the agent's other session
    const [s1, s2] = [await login(), await login()];
    const [c1, c2] = [await credOf(s1), await credOf(s2)];
    expect((await request(t.app).post('/auth/logout').set('Authorization', `Bearer ${s1}`)).status).to.equal(204);
    expect(await register(ext.username, domain, c1.username!, c1.password!), 'signed-out session').to.equal(403);
    expect(await register(ext.username, domain, c2.username!, c2.password!), 'other session').to.equal(200);

    // a password change ends every session of the agent, and every credential they issued
    password = 'a-new-password-1';
    const put = await request(t.app).put('/v1.0/service_agents/me/password').set('Authorization', `Bearer ${s2}`).send({ password });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(await register(ext.username, domain, c2.username!, c2.password!), 'after a password change').to.equal(403);

    // a freeze too, and recovering the account does not bring the old credentials back
    const c3 = await credOf(await login());
    expect(await freezeCustomer(t.ctx.db, f.customer.id)).to.not.equal(null);
    expect((await recoverCustomer(t.ctx.db, f.customer.id)).ok).to.equal(true);
    expect(await register(ext.username, domain, c3.username!, c3.password!), 'after a freeze').to.equal(403);
    await credOf(await login()); // a credential of a new session works
  });

  it('expires after WEB_SIP_CREDENTIAL_TTL_SEC', async () => {
    const { ext, domain } = await createExtension(f.customer.id);
    const a = await agentWith([ext.extension]);
    const c = (await issue(a.token)).body as Record<string, string>;
    expect(await register(ext.username, domain, c.username!, c.password!)).to.equal(200);
    clock.advance(3601_000);
    try {
      expect(await register(ext.username, domain, c.username!, c.password!)).to.equal(403);
    } finally {
      clock.reset();
    }
  });
});
