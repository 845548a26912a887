/**
 * One LLM call through an AI's engine, through the real API: asks for a prompt proposal and waits
 * for it to finish (the security tests of engine URLs and keys use it).
 */
import { expect } from 'chai';
import request from 'supertest';
import type { Express } from 'express';
import { until } from '../../testkit/media-app/harness';

export async function proposalOutcome(app: Express, token: string, aiId: string): Promise<{ status: string; error: string }> {
  const auth = (r: request.Test) => r.set('Authorization', `Bearer ${token}`);
  const p = await auth(request(app).post('/v1.0/aipromptproposals')).send({ ai_id: aiId });
  expect(p.status, JSON.stringify(p.body)).to.equal(202);
  return until(
    async () => {
      const r = (await auth(request(app).get(`/v1.0/aipromptproposals/${p.body.id}`))).body as { status: string; error: string };
      return r.status !== 'progressing' ? r : null;
    },
    20_000,
    'proposal finished',
  );
}
