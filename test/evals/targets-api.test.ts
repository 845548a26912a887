// Targets other than a number (issue 56, docs/evals.md "Agent kinds"): a flow or an AI configuration
// cannot be dialled through the SIP edge yet (the chosen way, a temporary number per run, is not
// built), so the API refuses them with a 400 that names target.type and says what can be a target.
import { expect } from 'chai';
import request from 'supertest';
import { useTestApp, type TestApp, type Fixture } from '../../testkit/api';

describe('eval scenario targets: only a number today', () => {
  let t: TestApp;
  let f: Fixture;
  useTestApp((s) => ({ t, f } = s));

  it('a flow or an AI target is refused naming target.type, saying a number is the only target', async () => {
    for (const type of ['flow', 'ai']) {
      const r = await request(t.app)
        .post('/v1.0/eval_scenarios')
        .set('Authorization', `Bearer ${f.token}`)
        .send({ name: 'x', target: { type, target: '6a0e4c2b-1d2f-4b7e-9a3c-2f1e0d9c8b7a' }, caller: { turns: [{ wait_ms: 100 }] }, checks: [] })
        .expect(400);
      expect(r.body.error.status).to.equal('INVALID_ARGUMENT');
      expect(r.body.error.details, JSON.stringify(r.body.error)).to.deep.include({ field: 'target.type', issue: `only a number can be a target today, not "${type}"` });
    }
  });
});
