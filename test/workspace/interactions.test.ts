import { expect } from 'chai';
import request from 'supertest';
import { callsRepo, callJson } from '../../core/repos/calls';
import { conversationsRepo, conversationJson, conversationMessageJson } from '../../core/repos/conversations';
import { startEventStore } from '../../core/events/store';
import { publishResourceEvent } from '../../core/events/catalogue';
import { newId } from '../../core/ids';
import { until } from '../../testkit/media-app/harness';
import { startRig, team, conversationFor, expectError, type Rig, type Team } from './support';

type Row = {
  publisher: string;
  event_type: string;
  reference_id: string;
  direction: string;
  peer: { type: string; target: string };
  local: { target: string };
  customer_id: string;
  timestamp: string;
  data: { id: string };
};

describe('contact interactions and peer events (the events store seen from the remote party)', function () {
  this.timeout(60_000);
  let rig: Rig;
  let tm: Team;
  let other: Team;
  let store: { close(): Promise<void> };
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
  const peer = `+1555077${String(Date.now() % 10000).padStart(4, '0')}`;
  let contactId = '';
  let callA = '';
  let callB = '';
  let convA = '';
  let msgA = '';

  before(async () => {
    rig = await startRig();
    tm = await team(rig);
    other = await team(rig);
    store = await startEventStore(rig.t.ctx.db, rig.t.ctx.redis, { stream: rig.stream, group: `store-${newId()}` });
    const calls = callsRepo(rig.t.ctx.db);
    const cid = tm.f.customer.id;
    // An incoming call from the peer to agent a, an outgoing one from agent b to the peer.
    const a = await calls.create({
      customer_id: cid,
      source: { type: 'tel', target: peer },
      destination: { type: 'tel', target: '+15550001111' },
      direction: 'incoming',
      owner_type: 'agent',
      owner_id: tm.a.id,
    });
    const b = await calls.create({
      customer_id: cid,
      source: { type: 'tel', target: '+15550001111' },
      destination: { type: 'tel', target: peer },
      direction: 'outgoing',
      owner_type: 'agent',
      owner_id: tm.b.id,
    });
    callA = a.id;
    callB = b.id;
    await publishResourceEvent(rig.publisher, 'call_created', callJson(a));
    await publishResourceEvent(rig.publisher, 'call_hangup', callJson(b));
    // A's SMS conversation with the peer, and an incoming message on it.
    const conv = await conversationFor(rig, cid, tm.a.id);
    const repo = conversationsRepo(rig.t.ctx.db);
    const c = (await repo.update(conv.id, { peer: JSON.stringify({ type: 'tel', target: peer }) } as never)) ?? conv;
    convA = c.id;
    const m = await repo.addMessage({
      customer_id: cid,
      conversation_id: c.id,
      direction: 'incoming',
      status: 'done',
      reference_type: 'message',
      reference_id: newId(),
      source: { type: 'tel', target: peer },
      destination: c.self,
      text: 'hi',
    });
    msgA = m.id;
    await publishResourceEvent(rig.publisher, 'conversation_updated', conversationJson(c));
    await publishResourceEvent(rig.publisher, 'conversation_message_created', conversationMessageJson(m));
    // Another customer's call from the same number must never show up.
    const o = await calls.create({ customer_id: other.f.customer.id, source: { type: 'tel', target: peer }, destination: { type: 'tel', target: '+15550002222' }, direction: 'incoming' });
    await publishResourceEvent(rig.publisher, 'call_created', callJson(o));
    await until(async () => Number((await rig.t.ctx.db('events').whereIn('resource_id', [a.id, b.id, c.id, m.id, o.id]).count({ n: '*' }))[0]!.n) === 5, 10_000);
    contactId = (
      await request(rig.t.app)
        .post('/v1.0/contacts')
        .set(bearer(tm.f.token))
        .send({ first_name: 'Peer', addresses: [{ type: 'tel', target: peer }] })
    ).body.id;
  });
  after(async () => {
    await store?.close();
    await rig.close();
  });

  it('/contact_interactions by peer, contact or address: every event with that peer, projected peer/local', async () => {
    const byPeer = await request(rig.t.app).get('/v1.0/contact_interactions').set(bearer(tm.f.token)).query({ peer_type: 'tel', peer_target: peer });
    expect(byPeer.status, JSON.stringify(byPeer.body)).to.equal(200);
    const rows = byPeer.body.result as Row[];
    expect(rows.map((r) => `${r.publisher}:${r.reference_id}`)).to.have.members([`call:${callA}`, `call:${callB}`, `conversation:${convA}`, `conversation_message:${msgA}`]);
    const out = rows.find((r) => r.reference_id === callB)!;
    expect(out).to.include({ direction: 'outgoing', event_type: 'call_hangup', customer_id: tm.f.customer.id });
    expect(out.peer.target).to.equal(peer);
    expect(out.local.target).to.equal('+15550001111');
    expect(rows.find((r) => r.publisher === 'conversation')!.direction).to.equal('');
    expect(rows.every((r) => r.peer.target === peer && /Z$/.test(r.timestamp))).to.equal(true);

    const byContact = await request(rig.t.app).get('/v1.0/contact_interactions').set(bearer(tm.f.token)).query({ contact_id: contactId });
    expect(byContact.body.result).to.have.length(4);
    const addressId = (await request(rig.t.app).get(`/v1.0/contacts/${contactId}`).set(bearer(tm.f.token))).body.addresses[0].id;
    const byAddress = await request(rig.t.app).get('/v1.0/contact_interactions').set(bearer(tm.f.token)).query({ address_id: addressId, page_size: '2' });
    expect(byAddress.body.result).to.have.length(2);
    const next = await request(rig.t.app).get('/v1.0/contact_interactions').set(bearer(tm.f.token)).query({ address_id: addressId, page_size: '2', page_token: byAddress.body.next_page_token });
    expect(next.body.result).to.have.length(2);
    expect([...byAddress.body.result, ...next.body.result].map((r: Row) => r.data.id)).to.have.members([callA, callB, convA, msgA]);

    const pe = await request(rig.t.app).get('/v1.0/contact_peer_events').set(bearer(tm.f.token)).query({ contact_id: contactId });
    expect(pe.body.result).to.have.length(4);
  });

  it('refuses missing, double and unknown filters in the error envelope; another customer gets nothing or 404', async () => {
    const get = (path: string, query: Record<string, string>, token = tm.f.token) => request(rig.t.app).get(`/v1.0${path}`).set(bearer(token)).query(query);
    expectError(await get('/contact_interactions', {}), 400, 'MISSING_REQUEST_PARAMETER');
    expectError(await get('/contact_interactions', { peer_type: 'tel' }), 400, 'MISSING_REQUEST_PARAMETER');
    expectError(await get('/contact_interactions', { peer_type: 'tel', peer_target: peer, contact_id: contactId }), 400, 'INVALID_ARGUMENT');
    expectError(await get('/contact_interactions', { contact_id: 'nope' }), 400, 'INVALID_ID');
    expectError(await get('/contact_interactions', { contact_id: newId() }), 404, 'RESOURCE_NOT_FOUND');
    // address_id is not a filter of /contact_peer_events: ignored, so no filter is given.
    expectError(await get('/contact_peer_events', { address_id: newId() }), 400, 'MISSING_REQUEST_PARAMETER');
    expectError(await get('/contact_peer_events', {}), 400, 'MISSING_REQUEST_PARAMETER');
    expectError(await get('/contact_interactions', { contact_id: contactId }, other.f.token), 404, 'RESOURCE_NOT_FOUND');
    const theirs = await get('/contact_interactions', { peer_type: 'tel', peer_target: peer }, other.f.token);
    expect(theirs.body.result.map((r: Row) => r.customer_id)).to.deep.equal([other.f.customer.id]);
  });

  it('an agent sees only the interactions of its own calls and conversations', async () => {
    const sa = (token: string, path: string, query: Record<string, string>) => request(rig.t.app).get(`/v1.0/service_agents${path}`).set(bearer(token)).query(query);
    const a = await sa(tm.a.token, '/contact_interactions', { contact_id: contactId });
    expect(a.body.result.map((r: Row) => r.reference_id)).to.have.members([callA, convA, msgA]);
    const b = await sa(tm.b.token, '/contact_peer_events', { peer_type: 'tel', peer_target: peer });
    expect(b.body.result.map((r: Row) => r.reference_id)).to.deep.equal([callB]);
    // No filter: the last 30 days of the agent's own history.
    const recent = await sa(tm.b.token, '/contact_interactions', {});
    expect(recent.body.result.map((r: Row) => r.reference_id)).to.deep.equal([callB]);
    expectError(await sa(tm.b.token, '/contact_interactions', { since: '181d' }), 400, 'INVALID_REQUEST_PARAMETER');
    expectError(await sa(tm.b.token, '/contact_interactions', { since: 'week' }), 400, 'INVALID_REQUEST_PARAMETER');
    expectError(await sa(tm.b.token, '/contact_peer_events', {}), 400, 'MISSING_REQUEST_PARAMETER');
    expect((await sa(other.a.token, '/contact_interactions', { peer_type: 'tel', peer_target: peer })).body.result).to.deep.equal([]);
  });
});
