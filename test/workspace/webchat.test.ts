import { expect } from 'chai';
import request from 'supertest';
import { newId } from '../../core/ids';
import { expectError, type Rig, type Team, bearer, useRig } from './support';

describe('webchat: widgets, boot, a visitor’s one session, messages, agent replies', function () {
  this.timeout(60_000);
  let rig: Rig;
  let tm: Team;
  useRig((r, t) => ((rig = r), (tm = t)));

  async function widget(body: Record<string, unknown> = {}) {
    const res = await request(rig.t.app)
      .post('/v1.0/webchat_widgets')
      .query({ accesskey: tm.f.accesskey })
      .send({ name: 'Support', ...body });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as { id: string; direct_hash: string };
  }

  async function boot(hash: string) {
    return request(rig.t.app).post('/auth/boot').send({ direct_hash: hash });
  }

  it('widget CRUD with bad input refused; the hash boots with the public display config and regeneration retires it', async () => {
    const q = { accesskey: tm.f.accesskey };
    const w = await widget({ theme_config: { primary_color: '#1a73e8', header_title: 'Hi', position: 'bottom_left' }, session_idle_timeout: 600 });
    expect(w.direct_hash).to.match(/^direct\.[0-9a-f]{32}$/);
    expectError(
      await request(rig.t.app)
        .post('/v1.0/webchat_widgets')
        .query(q)
        .send({ theme_config: { primary_color: 'blue' } }),
      400,
      'INVALID_ARGUMENT',
    );
    expectError(
      await request(rig.t.app)
        .post('/v1.0/webchat_widgets')
        .query(q)
        .send({ theme_config: { shadow: true } }),
      400,
      'INVALID_ARGUMENT',
    );
    expectError(await request(rig.t.app).post('/v1.0/webchat_widgets').query(q).send({ session_flow_id: newId() }), 400, 'INVALID_ARGUMENT');
    expectError(await request(rig.t.app).post('/v1.0/webchat_widgets').query(q).send({ session_idle_timeout: -1 }), 400, 'INVALID_ARGUMENT');
    expectError(await request(rig.t.app).get(`/v1.0/webchat_widgets/${newId()}`).query(q), 404, 'RESOURCE_NOT_FOUND');
    expectError(await request(rig.t.app).post('/v1.0/webchat_widgets').set(bearer(tm.a.token)).send({}), 403, 'PERMISSION_DENIED');

    const b = await boot(w.direct_hash);
    expect(b.status).to.equal(200);
    expect(b.body).to.include({ type: 'direct', resource_type: 'webchat_widget', resource_id: w.id, customer_id: tm.f.customer.id });
    expect(b.body.resource_data.public_display_config).to.deep.equal({ name: 'Support', theme_config: { primary_color: '#1a73e8', header_title: 'Hi', position: 'bottom_left' } });

    const upd = await request(rig.t.app).put(`/v1.0/webchat_widgets/${w.id}`).query(q).send({ name: 'Sales' });
    expect(upd.body.name).to.equal('Sales');
    expect(upd.body.theme_config.header_title).to.equal('Hi');
    const re = await request(rig.t.app).post(`/v1.0/webchat_widgets/${w.id}/direct_hash_regenerate`).query(q);
    expect(re.body.direct_hash)
      .to.match(/^direct\./)
      .and.not.equal(w.direct_hash);
    expect((await boot(w.direct_hash)).status).to.equal(400);
    expect((await boot(re.body.direct_hash)).status).to.equal(200);
    await request(rig.t.app).put(`/v1.0/webchat_widgets/${w.id}`).query(q).send({ status: 'inactive' });
    expect((await boot(re.body.direct_hash)).status).to.equal(400);
    const del = await request(rig.t.app).delete(`/v1.0/webchat_widgets/${w.id}`).query(q);
    expect(del.body.tm_delete).to.not.equal('9999-01-01 00:00:00.000000');
    expectError(await request(rig.t.app).get(`/v1.0/webchat_widgets/${w.id}`).query(q), 404, 'RESOURCE_NOT_FOUND');
  });

  it('a direct token creates exactly one session, sends messages, and is refused everything else', async () => {
    const w = await widget();
    const other = await widget();
    const booted = (await boot(w.direct_hash)).body as { token: string; allowed_resource_id: string };
    const v = bearer(booted.token);

    expectError(await request(rig.t.app).post('/v1.0/webchat_sessions').set(v).send({ widget_id: other.id }), 404, 'RESOURCE_NOT_FOUND');
    const s = await request(rig.t.app).post('/v1.0/webchat_sessions').set(v).send({ page_url: 'https://shop.example/p/1' });
    expect(s.status, JSON.stringify(s.body)).to.equal(200);
    expect(s.body).to.include({ id: booted.allowed_resource_id, widget_id: w.id, status: 'active', page_url: 'https://shop.example/p/1' });
    expect(s.body.peer).to.deep.equal({ type: 'web_session', target: s.body.id });
    expectError(await request(rig.t.app).post('/v1.0/webchat_sessions').set(v).send({}), 409, 'ALREADY_EXISTS');

    const m = await request(rig.t.app).post('/v1.0/webchat_messages').set(v).send({ text: 'hello, anyone?' });
    expect(m.body).to.include({ session_id: s.body.id, direction: 'inbound', text: 'hello, anyone?', widget_id: w.id });
    expectError(await request(rig.t.app).post('/v1.0/webchat_messages').set(v).send({ text: 'x', direction: 'outbound' }), 400, 'INVALID_ARGUMENT');
    expectError(await request(rig.t.app).post('/v1.0/webchat_messages').set(v).send({ text: '' }), 400, 'INVALID_ARGUMENT');
    expectError(await request(rig.t.app).post('/v1.0/webchat_messages').set(v).send({ text: 'x', session_id: newId() }), 404, 'RESOURCE_NOT_FOUND');
    const list = await request(rig.t.app).get('/v1.0/webchat_messages').set(v);
    expect(list.body.result.map((x: { text: string }) => x.text)).to.deep.equal(['hello, anyone?']);
    expect((await request(rig.t.app).get(`/v1.0/webchat_sessions/${s.body.id}`).set(v)).status).to.equal(200);

    // Everything else is refused.
    for (const path of ['/v1.0/calls', '/v1.0/webchat_widgets', '/v1.0/webchat_sessions', '/v1.0/conversations', '/v1.0/service_agents/me', `/v1.0/webchat_widgets/${w.id}`]) {
      expectError(await request(rig.t.app).get(path).set(v), 403, 'PERMISSION_DENIED');
    }
    expectError(await request(rig.t.app).delete(`/v1.0/webchat_sessions/${s.body.id}`).set(v), 403, 'PERMISSION_DENIED');
    expectError(await request(rig.t.app).get(`/v1.0/webchat_sessions/${newId()}`).set(v), 404, 'RESOURCE_NOT_FOUND');

    // The session is a conversation: a manager assigns it, the agent replies there, the visitor sees it.
    const q = { accesskey: tm.f.accesskey };
    const convs = await request(rig.t.app).get('/v1.0/conversations').query(q);
    const conv = convs.body.result.find((c: { peer: { target: string } }) => c.peer.target === s.body.id);
    expect(conv, 'the session’s conversation').to.not.equal(undefined);
    expect(conv.self).to.deep.equal({ type: 'webchat', target: w.id });
    await request(rig.t.app).put(`/v1.0/conversations/${conv.id}`).query(q).send({ owner_type: 'agent', owner_id: tm.a.id });
    const cm = await request(rig.t.app).get(`/v1.0/service_agents/conversations/${conv.id}/messages`).set(bearer(tm.a.token));
    expect(cm.body.result.map((x: { text: string; direction: string }) => `${x.direction}:${x.text}`)).to.deep.equal(['incoming:hello, anyone?']);
    const reply = await request(rig.t.app).post(`/v1.0/service_agents/conversations/${conv.id}/messages`).set(bearer(tm.a.token)).send({ text: 'Hi! How can I help?' });
    expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
    expect(reply.body).to.include({ direction: 'outgoing', text: 'Hi! How can I help?' });
    const seen = await request(rig.t.app).get('/v1.0/webchat_messages').set(v);
    const out = seen.body.result.find((x: { direction: string }) => x.direction === 'outbound');
    expect(out).to.include({ text: 'Hi! How can I help?', sender_id: tm.a.id });
    // Agent b does not answer this session.
    expectError(await request(rig.t.app).post('/v1.0/webchat_messages').set(bearer(tm.b.token)).send({ session_id: s.body.id, text: 'me too' }), 404, 'RESOURCE_NOT_FOUND');

    const end = await request(rig.t.app).post(`/v1.0/webchat_sessions/${s.body.id}/end`).set(v);
    expect(end.body.status).to.equal('ended');
    expectError(await request(rig.t.app).post(`/v1.0/webchat_sessions/${s.body.id}/end`).set(v), 409, 'STATE_INVALID');
    expectError(await request(rig.t.app).post('/v1.0/webchat_messages').set(v).send({ text: 'still there?' }), 409, 'STATE_INVALID');
    expectError(await request(rig.t.app).post(`/v1.0/service_agents/conversations/${conv.id}/messages`).set(bearer(tm.a.token)).send({ text: 'bye' }), 409, 'STATE_INVALID');
  });
});
