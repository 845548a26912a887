import request from 'supertest';
import { startHarness } from '../harness';
describe('dbg', () => { it('x', async () => {
  const h = await startHarness();
  const r = await request(h.app).post('/auth/unregister').set('Authorization','Bearer abc.def.ghi').send({ confirmation_phrase: 'DELETE' });
  console.log(r.status, r.text, r.headers);
  await h.close();
});});
