// GET /ais/{id}/participants and /aicalls/{id}/participants: the AI an aicall was started with and the
// team members that answered in it, from the rows the AI session writes (aicalls, aimessages).
import { expect } from 'chai';
import { as } from '../resources/support';
import { useParties } from './support';
import { aisRepo } from '../../../core/repos/ais';
import { aicallsRepo } from '../../../core/repos/ai-calls';
import { clock } from '../../../core/clock';
import { newId } from '../../../core/ids';

describe('AI participants', function () {
  this.timeout(20000);
  const pt = useParties();

  it('lists who took part, each from its first turn; paginated; deleted calls and other customers excluded', async () => {
    const db = pt.h.t.ctx.db;
    const ais = aisRepo(db);
    const calls = aicallsRepo(db);
    const greeter = await ais.create(pt.a.customerId, { name: 'greeter' });
    const expert = await ais.create(pt.a.customerId, { name: 'expert' });
    clock.setNow(new Date('2026-01-01T10:00:00Z'));
    const solo = await calls.create(pt.a.customerId, { assistance_type: 'ai', assistance_id: greeter.id, reference_type: 'conversation' });
    clock.setNow(new Date('2026-01-01T11:00:00Z'));
    const team = await calls.create(pt.a.customerId, { assistance_type: 'team', assistance_id: newId(), reference_type: 'conversation' });
    const turn = (aiId: string, at: string) => {
      clock.setNow(new Date(at));
      return calls.addMessage({ customer_id: pt.a.customerId, aicall_id: team.id, active_ai_id: aiId, role: 'assistant', content: 'x', direction: 'outgoing' });
    };
    await turn(greeter.id, '2026-01-01T11:00:01Z');
    await turn(expert.id, '2026-01-01T11:00:05Z');
    await turn(greeter.id, '2026-01-01T11:00:09Z');
    clock.setNow(new Date('2026-01-01T12:00:00Z'));
    const gone = await calls.create(pt.a.customerId, { assistance_type: 'ai', assistance_id: greeter.id, reference_type: 'conversation' });
    await calls.softDelete(pt.a.customerId, gone.id);
    clock.reset();

    const byAi = await as(pt.h, pt.a.agent).get(`/v1.0/ais/${greeter.id}/participants`);
    expect(byAi.status).to.equal(200);
    expect(byAi.body.result).to.deep.equal([
      { ai_id: greeter.id, aicall_id: team.id, tm_create: '2026-01-01 11:00:01.000000' },
      { ai_id: greeter.id, aicall_id: solo.id, tm_create: '2026-01-01 10:00:00.000000' },
    ]);
    const byCall = await as(pt.h, pt.a.agent).get(`/v1.0/aicalls/${team.id}/participants`);
    expect(byCall.body.result.map((p: { ai_id: string }) => p.ai_id)).to.deep.equal([expert.id, greeter.id]);
    const first = await as(pt.h, pt.a.agent).get(`/v1.0/aicalls/${team.id}/participants`).query({ page_size: '1' });
    expect(first.body.result.map((p: { ai_id: string }) => p.ai_id)).to.deep.equal([expert.id]);
    const second = await as(pt.h, pt.a.agent).get(`/v1.0/aicalls/${team.id}/participants`).query({ page_size: '1', page_token: first.body.next_page_token });
    expect(second.body.result.map((p: { ai_id: string }) => p.ai_id)).to.deep.equal([greeter.id]);
    expect(second.body.next_page_token).to.equal('');

    expect((await as(pt.h, pt.other.admin).get(`/v1.0/ais/${greeter.id}/participants`)).body.error.reason).to.equal('AI_NOT_FOUND');
    expect((await as(pt.h, pt.other.admin).get(`/v1.0/aicalls/${team.id}/participants`)).status).to.equal(404);
    expect((await as(pt.h, pt.a.agent).get(`/v1.0/aicalls/${gone.id}/participants`)).status).to.equal(404);
    expect((await as(pt.h, pt.a.agent).get('/v1.0/ais/nope/participants')).body.error.reason).to.equal('INVALID_ID');
    expect((await as(pt.h, pt.a.agent).get(`/v1.0/ais/${greeter.id}/participants`).query({ page_size: 'x' })).body.error.reason).to.equal('INVALID_REQUEST_PARAMETER');
  });
});
