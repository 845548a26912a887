// A customer with an IP trunk for 127.0.0.1 and a virtual number whose flow answers, talks, hangs up.
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { repos } from '../../core/repos';
import { testDb } from '../../testkit/db';

export async function talkingNumber(number: string, text: string): Promise<{ customerId: string }> {
  const db = await testDb();
  const tag = `${Date.now()}${Math.floor(Math.random() * 1e6)}`;
  const cid = (await repos(db).customers.create({ email: `tn${tag}@example.test`, status: 'active', name: 'tn' })).id;
  await trunksRepo(db).create(cid, `tn${tag}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
  const flow = await flowsRepo(db).create({
    customer_id: cid,
    actions: parseActions([{ type: 'answer' }, { type: 'talk', option: { text, language: 'en-US' } }, { type: 'hangup' }]),
  } as never);
  await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
  return { customerId: cid };
}
