// Calls for the security tests: a customer with a trunk trusted by its loopback address, numbers whose
// flow we choose, and a sipp call into one of them (with any From header) that resolves once the
// platform hung up and the call's activeflow ended.
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { repos } from '../../core/repos';
import { testDb } from '../../testkit/db';
import { sippMediaPort } from '../../testkit/ports';
import { RtpSink, sipp, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';

export interface EndedFlow {
  status: string;
  end_reason: string;
  error: string;
  executed_actions: { type: string }[];
}

let seq = 0;

/** A customer whose trunk is trusted by 127.0.0.1 (one per test process: the trunk is found by source address). */
export async function trunkCustomer(): Promise<string> {
  const db = await testDb();
  const cid = (await repos(db).customers.create({ email: `sec${process.pid}-${++seq}@example.test`, status: 'active', name: 'sec' })).id;
  await trunksRepo(db).create(cid, `sec${process.pid}x${seq}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
  return cid;
}

/** Gives `number` to the customer with a flow of `actions` (stored as they are: run-time checks are under test). */
export async function numberWithFlow(customerId: string, number: string, actions: unknown[]): Promise<void> {
  const db = await testDb();
  const flow = await flowsRepo(db).create({ customer_id: customerId, actions: parseActions(actions) } as never);
  await numbersRepo(db).create({ customer_id: customerId, number, type: 'virtual', call_flow_id: flow.id });
}

/** sipp calls `number` (From replaced when given) and waits for the platform's BYE; resolves the ended activeflow. */
export async function callNumber(p: Platform, customerId: string, number: string, from?: string): Promise<EndedFlow> {
  const sink = await RtpSink.open();
  try {
    let scenario = uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, 'caller', sink.port);
    if (from) scenario = scenario.replace(/From: "Trunk Caller" <sip:caller@\[local_ip\]:\[local_port\]>/, `From: ${from}`);
    const r = await sipp(scenario, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 30_000 }).done;
    expect(r.code, r.errors + r.messages).to.equal(0);
  } finally {
    sink.close();
  }
  const db = await testDb();
  return until(
    async () => {
      const call = await db('calls').where({ customer_id: customerId }).whereRaw("destination->>'target' = ?", [number]).orderBy('tm_create', 'desc').first();
      const af = call ? ((await db('activeflows').where({ id: call.activeflow_id }).first()) as EndedFlow | undefined) : undefined;
      return af?.status === 'ended' ? af : null;
    },
    15_000,
    `the activeflow of the call to ${number} ended`,
  );
}
