import { expect } from 'chai';
import request from 'supertest';
import { ActiveflowManager } from '../../media-app/flow/manager';
import { InMemoryActiveflowStore, InMemoryFlowStore } from '../../media-app/flow/stores';
import { nullEmitter } from '../../media-app/flow/events';
import { realClock } from '../../media-app/kit/clock';
import { egressPolicyFor } from '../../core/net';
import { PolicyHttp } from '../../media-app/kit/http';
import { DEFAULT_LIMITS } from '../../media-app/flow/limits';
import type { FlowServices } from '../../media-app/flow/services';
import { parseActions } from '../../core/flow';
import { caseService } from '../../core/workspace/cases';
import { EMPTY_UUID, newId } from '../../core/ids';
import { conversationFor, expectError, type Rig, type Team, bearer, useRig } from './support';

describe('contact cases: opened by case_create, worked through the agent API', function () {
  this.timeout(60_000);
  let rig: Rig;
  let tm: Team;
  useRig((r, t) => ((rig = r), (tm = t)));

  /** Runs actions through the real flow runner on a conversation reference. */
  async function runFlow(actions: unknown[], referenceId: string, services: FlowServices) {
    const manager = new ActiveflowManager({
      store: new InMemoryActiveflowStore(),
      emitter: nullEmitter,
      flows: new InMemoryFlowStore(),
      clock: realClock,
      http: new PolicyHttp(egressPolicyFor({})),
      limits: DEFAULT_LIMITS,
      services,
    });
    const s = await manager.start({ customer_id: tm.f.customer.id, actions: parseActions(actions), reference_type: 'conversation', reference_id: referenceId });
    return { record: await s.done, vars: s.vars };
  }

  it('case_create opens an unowned case on the conversation; an agent takes it, notes it and closes it', async () => {
    const conv = await conversationFor(rig, tm.f.customer.id, null);
    const { record, vars } = await runFlow([{ type: 'case_create', option: { name: 'Refund', detail: 'order 42', note: 'opened by the IVR', sync: true } }], conv.id, {
      cases: caseService(rig.t.ctx.db),
    });
    expect(record.end_reason, record.error).to.equal('finished');
    const caseId = vars.get('svc.contact_case.id');
    expect(caseId).to.match(/^[0-9a-f-]{36}$/);

    const a = bearer(tm.a.token);
    const b = bearer(tm.b.token);
    const got = await request(rig.t.app).get(`/v1.0/service_agents/contact_cases/${caseId}`).set(a);
    expect(got.status).to.equal(200);
    expect(got.body).to.include({ status: 'open', name: 'Refund', detail: 'order 42', reference_type: 'conversation', reference_id: conv.id, owner_id: '00000000-0000-0000-0000-000000000000' });
    expect(got.body.peer).to.deep.equal(conv.peer);
    expect(got.body.activeflow_id).to.equal(record.id);
    // Unowned: visible, but notes and close need the owner; taking it for someone else is refused.
    expectError(await request(rig.t.app).post(`/v1.0/service_agents/contact_cases/${caseId}/notes`).set(a).send({ text: 'x' }), 404, 'RESOURCE_NOT_FOUND');
    expectError(await request(rig.t.app).post(`/v1.0/service_agents/contact_cases/${caseId}/assign`).set(a).send({ owner_id: tm.b.id }), 403, 'PERMISSION_DENIED');
    expectError(await request(rig.t.app).post(`/v1.0/service_agents/contact_cases/${caseId}/assign`).set(a).send({}), 400, 'INVALID_ARGUMENT');
    expectError(await request(rig.t.app).post(`/v1.0/service_agents/contact_cases/${caseId}/assign`).set(a).send({ owner_id: 'nope' }), 400, 'INVALID_ARGUMENT');

    const taken = await request(rig.t.app).post(`/v1.0/service_agents/contact_cases/${caseId}/assign`).set(a).send({ owner_id: tm.a.id });
    expect(taken.body).to.include({ owner_type: 'agent', owner_id: tm.a.id });
    // Now it is a's: b no longer sees it at all.
    expectError(await request(rig.t.app).get(`/v1.0/service_agents/contact_cases/${caseId}`).set(b), 404, 'RESOURCE_NOT_FOUND');
    expectError(await request(rig.t.app).post(`/v1.0/service_agents/contact_cases/${caseId}/assign`).set(b).send({ owner_id: tm.b.id }), 404, 'RESOURCE_NOT_FOUND');

    const note = await request(rig.t.app).post(`/v1.0/service-agents/contact_cases/${caseId}/notes`).set(a).send({ text: 'called back' });
    expect(note.body).to.include({ author_type: 'agent', author_id: tm.a.id, text: 'called back', case_id: caseId });
    expectError(await request(rig.t.app).post(`/v1.0/service_agents/contact_cases/${caseId}/notes`).set(a).send({ text: '' }), 400, 'INVALID_ARGUMENT');
    const notes = await request(rig.t.app).get(`/v1.0/service_agents/contact_cases/${caseId}/notes`).set(a);
    expect(notes.body.result.map((n: { author_type: string; text: string }) => `${n.author_type}:${n.text}`)).to.have.members(['system:opened by the IVR', 'agent:called back']);

    const closed = await request(rig.t.app).post(`/v1.0/service_agents/contact_cases/${caseId}/close`).set(a);
    expect(closed.body).to.include({ status: 'closed', closed_by_type: 'agent', closed_by_id: tm.a.id, closed_reason: 'agent_closed' });
    expect(closed.body.closed_at).to.be.a('string');
    expectError(await request(rig.t.app).post(`/v1.0/service_agents/contact_cases/${caseId}/close`).set(a), 409, 'STATE_INVALID');
    expectError(await request(rig.t.app).post(`/v1.0/service_agents/contact_cases/${caseId}/assign`).set(a).send({ owner_id: tm.a.id }), 409, 'STATE_INVALID');

    // Managers: the whole list, filters, continue of a closed case.
    const q = { accesskey: tm.f.accesskey };
    const all = await request(rig.t.app)
      .get('/v1.0/contact_cases')
      .query({ ...q, status: 'closed' });
    expect(all.body.result.map((c: { id: string }) => c.id)).to.include(caseId);
    expectError(
      await request(rig.t.app)
        .get('/v1.0/contact_cases')
        .query({ ...q, status: 'pending' }),
      400,
      'INVALID_REQUEST_PARAMETER',
    );
    const cont = await request(rig.t.app).post(`/v1.0/contact_cases/${caseId}/continue`).query(q);
    expect(cont.body).to.include({ status: 'open', previous_case_id: caseId, owner_id: tm.a.id });
    expectError(await request(rig.t.app).post(`/v1.0/contact_cases/${cont.body.id}/continue`).query(q), 409, 'STATE_INVALID');
    expectError(await request(rig.t.app).get(`/v1.0/contact_cases/${newId()}`).query(q), 404, 'RESOURCE_NOT_FOUND');
    expectError(await request(rig.t.app).get('/v1.0/contact_cases').set(a), 403, 'PERMISSION_DENIED');
    expectError(await request(rig.t.app).put(`/v1.0/contact_cases/${caseId}`).query(q).send({ contact_id: newId() }), 400, 'INVALID_ARGUMENT');
  });

  it("unset references, timestamps and a system note's author answer in the reference's form, never null", async () => {
    const conv = await conversationFor(rig, tm.f.customer.id, null);
    const { vars } = await runFlow([{ type: 'case_create', option: { note: 'by the flow', sync: true } }], conv.id, { cases: caseService(rig.t.ctx.db) });
    const id = String(vars.get('svc.contact_case.id'));
    const q = { accesskey: tm.f.accesskey };
    const unset = { contact_id: EMPTY_UUID, closed_by_id: EMPTY_UUID, previous_case_id: EMPTY_UUID, closed_at: '9999-01-01T00:00:00.000000Z', closed_by_type: '', closed_reason: '' };
    expect((await request(rig.t.app).get(`/v1.0/contact_cases/${id}`).query(q)).body).to.include(unset);
    const listed = (
      await request(rig.t.app)
        .get('/v1.0/contact_cases')
        .query({ ...q, reference_id: conv.id })
    ).body.result;
    expect(listed.find((c: { id: string }) => c.id === id)).to.include(unset);
    const notes = (await request(rig.t.app).get(`/v1.0/contact_cases/${id}/notes`).query(q)).body.result;
    expect(notes[0]).to.include({ author_type: 'system', author_id: EMPTY_UUID, tm_delete: '9999-01-01T00:00:00.000000Z' });
    // a system note sent back with the empty UUID as its author is taken; a real author is not
    const sys = await request(rig.t.app).post(`/v1.0/contact_cases/${id}/notes`).query(q).send({ author_type: 'system', author_id: EMPTY_UUID, text: 'echoed' });
    expect(sys.status).to.equal(200);
    expect(sys.body).to.include({ author_type: 'system', author_id: EMPTY_UUID });
    expectError(await request(rig.t.app).post(`/v1.0/contact_cases/${id}/notes`).query(q).send({ author_type: 'system', author_id: tm.a.id, text: 'x' }), 400, 'INVALID_ARGUMENT');
    // contact_id: a contact sets it; null and the empty UUID both detach it
    const contact = await request(rig.t.app).post('/v1.0/contacts').query(q).send({ first_name: 'Case' });
    expect((await request(rig.t.app).put(`/v1.0/contact_cases/${id}`).query(q).send({ contact_id: contact.body.id })).body.contact_id).to.equal(contact.body.id);
    expect((await request(rig.t.app).put(`/v1.0/contact_cases/${id}`).query(q).send({ contact_id: null })).body.contact_id).to.equal(EMPTY_UUID);
    await request(rig.t.app).put(`/v1.0/contact_cases/${id}`).query(q).send({ contact_id: contact.body.id });
    expect((await request(rig.t.app).put(`/v1.0/contact_cases/${id}`).query(q).send({ contact_id: EMPTY_UUID })).body.contact_id).to.equal(EMPTY_UUID);
    const closed = await request(rig.t.app).post(`/v1.0/contact_cases/${id}/close`).query(q);
    expect(closed.body.closed_at)
      .to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/)
      .and.not.equal(unset.closed_at);
    expect(closed.body.contact_id).to.equal(EMPTY_UUID);
    // the empty UUID as a filter finds the cases without a contact
    const without = (
      await request(rig.t.app)
        .get('/v1.0/contact_cases')
        .query({ ...q, contact_id: EMPTY_UUID })
    ).body.result;
    expect(without.map((c: { id: string }) => c.id)).to.include(id);
    expect(
      (
        await request(rig.t.app)
          .get('/v1.0/contact_cases')
          .query({ ...q, contact_id: contact.body.id })
      ).body.result,
    ).to.deep.equal([]);
  });

  it('an unowned case shows in unresolved; without the workspace subsystem case_create fails the activeflow clearly', async () => {
    const conv = await conversationFor(rig, tm.f.customer.id, null);
    await runFlow(
      [
        { type: 'case_create', option: { name: 'async one' } },
        { type: 'sleep', option: { duration: 200 } },
      ],
      conv.id,
      { cases: caseService(rig.t.ctx.db) },
    );
    const un = await request(rig.t.app).get('/v1.0/contact_cases/unresolved').query({ accesskey: tm.f.accesskey });
    expect(un.body.result.map((c: { name: string }) => c.name)).to.include('async one');
    const { record } = await runFlow([{ type: 'case_create', option: {} }], conv.id, {});
    expect(record.end_reason).to.equal('error');
    expect(record.error).to.match(/case_create needs the workspace subsystem/);
  });
});
