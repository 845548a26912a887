// Direct tokens confined to their one resource (issue 13, item 5). The only resource type that
// issues direct tokens today is webchat_widget (control-api/auth/direct-registry.ts: the webchat
// resolver; ai and ai_team are bootable types without a resolver). A visitor's token may create its
// one session (allowed_resource_id), read and end it, and send and read its messages; every other
// operation of the OpenAPI document, and the same operations on another visitor's session, answer
// 401/403/404 in the envelope. Token forgery, an old scope_version and WebSocket topics too.
import { expect } from 'chai';
import request from 'supertest';
import { signToken } from '../../core/credentials';
import { newId } from '../../core/ids';
import { TEST_JWT_SECRET, createFixture, type Fixture } from '../../testkit/api';
import { startRig, type Rig } from '../workspace/support';
import { envelopeProblem } from './api/envelope';
import { parseTopic, refusal } from '../../control-api/ws/topics';
import type { AuthContext } from '../../control-api/context';

type Json = Record<string, any>;
const METHODS = ['get', 'post', 'put', 'delete', 'patch'] as const;
const PUBLIC = new Set(['GET /recordingfiles/{id}', 'GET /storagefiles/{id}']);

describe('reliability: direct tokens are confined to their one resource', function () {
  this.timeout(90_000);
  let rig: Rig;
  let f: Fixture;
  let other: Fixture;
  let doc: Json;
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  before(async () => {
    rig = await startRig();
    f = await createFixture(rig.t.ctx);
    other = await createFixture(rig.t.ctx);
    doc = (await request(rig.t.app).get('/v1.0/openapi.json')).body;
  });
  after(async () => rig.close());

  const widget = async (fx: Fixture) => {
    const r = await request(rig.t.app).post('/v1.0/webchat_widgets').query({ accesskey: fx.accesskey }).send({ name: 'w' });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body as { id: string; direct_hash: string };
  };
  /** A visitor: boots the widget's hash, opens its session, sends one message. */
  const visitor = async (w: { direct_hash: string }, text: string) => {
    const b = await request(rig.t.app).post('/auth/boot').send({ direct_hash: w.direct_hash });
    expect(b.status, JSON.stringify(b.body)).to.equal(200);
    const token = b.body.token as string;
    const s = await request(rig.t.app).post('/v1.0/webchat_sessions').set(bearer(token)).send({});
    expect(s.status, JSON.stringify(s.body)).to.equal(200);
    expect(s.body.id).to.equal(b.body.allowed_resource_id);
    const m = await request(rig.t.app).post('/v1.0/webchat_messages').set(bearer(token)).send({ text });
    expect(m.status, JSON.stringify(m.body)).to.equal(200);
    return { token, boot: b.body as Json, session: s.body.id as string, message: m.body.id as string };
  };

  it('its own session and messages work; another visitor’s (same widget, other widget, other customer) answer 404', async () => {
    const w1 = await widget(f);
    const w2 = await widget(f);
    const wx = await widget(other);
    const me = await visitor(w1, 'mine');
    const twin = await visitor(w1, 'same widget, other visitor');
    const sibling = await visitor(w2, 'other widget');
    const stranger = await visitor(wx, 'other customer');
    const v = bearer(me.token);
    expect((await request(rig.t.app).get(`/v1.0/webchat_sessions/${me.session}`).set(v)).status).to.equal(200);
    expect((await request(rig.t.app).get(`/v1.0/webchat_messages/${me.message}`).set(v)).status).to.be.oneOf([200, 403]);
    const mine = await request(rig.t.app).get('/v1.0/webchat_messages').set(v);
    expect(mine.body.result.map((m: Json) => m.text)).to.deep.equal(['mine']);
    for (const o of [twin, sibling, stranger]) {
      const probes = [
        request(rig.t.app).get(`/v1.0/webchat_sessions/${o.session}`).set(v),
        request(rig.t.app).post(`/v1.0/webchat_sessions/${o.session}/end`).set(v),
        request(rig.t.app).get(`/v1.0/webchat_messages/${o.message}`).set(v),
        request(rig.t.app).get('/v1.0/webchat_messages').query({ session_id: o.session }).set(v),
        request(rig.t.app).post('/v1.0/webchat_messages').set(v).send({ session_id: o.session, text: 'hijack' }),
      ];
      const names = ['GET session', 'POST session end', 'GET message', 'GET messages?session_id', 'POST message'];
      for (const [i, r] of (await Promise.all(probes)).entries()) {
        const asked = `${names[i]} of another visitor`;
        if (r.status === 200) {
          // a list filter naming another session must still show only the token's own messages
          expect(
            r.body.result?.map((m: Json) => m.text),
            asked,
          ).to.deep.equal(['mine']);
          continue;
        }
        expect(r.status, `${asked}: ${JSON.stringify(r.body)}`).to.be.oneOf([401, 403, 404]);
        expect(envelopeProblem(r), asked).to.equal(undefined);
      }
      // and the other visitor's session is untouched
      const still = await request(rig.t.app).get(`/v1.0/webchat_sessions/${o.session}`).set(bearer(o.token));
      expect(still.body.status).to.equal('active');
      const theirs = await request(rig.t.app).get('/v1.0/webchat_messages').set(bearer(o.token));
      expect(theirs.body.result.map((m: Json) => m.text)).to.not.include('hijack');
    }
    // a second session for the same token is refused; refresh keeps the binding
    expect((await request(rig.t.app).post('/v1.0/webchat_sessions').set(v).send({})).status).to.equal(409);
    const refreshed = await request(rig.t.app).post('/auth/boot/refresh').set(v).send({});
    expect(refreshed.status, JSON.stringify(refreshed.body)).to.equal(200);
    expect(refreshed.body).to.include({ allowed_resource_id: me.boot.allowed_resource_id, resource_id: w1.id });
  });

  it('every other operation of the OpenAPI document answers 401/403/404 in the envelope', async () => {
    const w = await widget(f);
    const me = await visitor(w, 'hello');
    const v = bearer(me.token);
    // what the token may do, on its own resource: the six operations with direct access
    const allowed = new Set([
      'GET /webchat_sessions/{id}',
      'POST /webchat_sessions/{id}/end',
      'POST /webchat_sessions',
      'GET /webchat_messages',
      'POST /webchat_messages',
      'GET /webchat_messages/{id}',
    ]);
    const wrong: string[] = [];
    let tried = 0;
    // ids to put in paths: the token's own widget, its own session, and a resource of the customer
    const fill = (path: string, id: string) => path.replace(/\{[a-z_]+\}/g, id);
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      for (const m of METHODS) {
        if (!item[m]) continue;
        const op = `${m.toUpperCase()} ${path}`;
        if (allowed.has(op)) continue;
        for (const id of path.includes('{') ? [w.id, me.session, f.admin.id] : ['']) {
          const client = request(rig.t.app);
          const r = await client[m](`/v1.0${fill(path, id)}`)
            .set(v)
            .send(m === 'get' || m === 'delete' ? undefined : {});
          tried++;
          // the signed-URL downloads take no credential at all: a bad signature is 400, never the file
          const ok = PUBLIC.has(op) ? [400, 401, 403, 404] : [401, 403, 404];
          if (!ok.includes(r.status) || envelopeProblem(r)) wrong.push(`${op} (${id}): ${r.status} ${envelopeProblem(r) ?? ''}`);
        }
      }
    }
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
    expect(tried).to.be.greaterThan(300);
    if (process.env.REL_VERBOSE) console.log(`direct tokens: ${tried} requests to operations without direct access`);
    // the token still works for its own resource afterwards (nothing above changed it)
    expect((await request(rig.t.app).get(`/v1.0/webchat_sessions/${me.session}`).set(v)).body.status).to.equal('active');
    // the authentication group: no account operations with a visitor's token
    for (const [path, body] of [
      ['/auth/unregister', { password: 'x', confirmation_phrase: 'x' }],
      ['/auth/delegate', { customer_id: other.customer.id }],
    ] as const) {
      const r = await request(rig.t.app).post(path).set(v).send(body);
      expect(r.status, `${path}: ${r.status}`).to.be.oneOf([400, 401, 403, 404]);
    }
  });

  it('forged, outdated and expired direct tokens are refused; WebSocket topics only of its own session', async () => {
    const w = await widget(f);
    const me = await visitor(w, 'x');
    const claims = { typ: 'direct' as const, customer_id: f.customer.id, resource_type: 'webchat_widget', resource_id: w.id, allowed_resource_id: me.session, scope_version: 1 };
    const wrongSecret = (await signToken('s'.repeat(40), claims, 600)).token;
    const outdated = (await signToken(TEST_JWT_SECRET, { ...claims, scope_version: 0 }, 600)).token;
    const expired = (await signToken(TEST_JWT_SECRET, claims, -10)).token;
    const [h, , s] = me.token.split('.');
    const swapped = `${h}.${Buffer.from(JSON.stringify({ ...claims, allowed_resource_id: newId() })).toString('base64url')}.${s}`;
    for (const [name, tok] of Object.entries({ wrongSecret, outdated, expired, swapped })) {
      const r = await request(rig.t.app).get(`/v1.0/webchat_sessions/${me.session}`).set(bearer(tok));
      expect(r.status, name).to.equal(401);
      expect(envelopeProblem(r), name).to.equal(undefined);
    }
    const auth: AuthContext = { kind: 'direct', customerId: f.customer.id, resourceType: 'webchat_widget', resourceId: w.id, allowedResourceId: me.session, scopeVersion: 1, permission: 0 };
    const topic = (t: string) => refusal(parseTopic(t)!, auth);
    expect(topic(`customer_id:${f.customer.id}:webchat_session:${me.session}`)).to.equal(null);
    for (const t of [
      `customer_id:${f.customer.id}`,
      `customer_id:${f.customer.id}:webchat_session`,
      `customer_id:${f.customer.id}:webchat_session:*`,
      `customer_id:${f.customer.id}:webchat_session:${newId()}`,
      `customer_id:${other.customer.id}:webchat_session:${me.session}`,
      `agent_id:${f.admin.id}`,
      `customer_id:${f.customer.id}:call:${newId()}`,
    ])
      expect(topic(t), t).to.be.a('string');
  });
});
