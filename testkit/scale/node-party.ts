// A party with a tone of its own calling a number straight at one node of a cluster (its call lives
// on that node), and the call row it made: the cross-node suites (test/scale/conference-xnode,
// dequeue-xnode) place their parties this way.
import type { Knex } from 'knex';
import { sipp, uacWaitsForBye, type SippResult } from '../media-app/harness';
import { RtpParty } from '../conference/party';
import type { ClusterNode } from './cluster';

/** The caller id of the party with tone `freq`: how its call row is found again. */
const callerOf = (freq: number) => `+1555000${freq}`;

/**
 * A party (its tone `freq`, kept in `parties` to be closed after the suite) dialling `number` straight
 * to `node`: it waits for the platform's BYE (up to 120 s), or with `hangUpAfterMs` hangs up itself
 * that long after its ACK.
 */
export async function dialNode(parties: RtpParty[], number: string, node: ClusterNode, freq: number, hangUpAfterMs = 0): Promise<{ p: RtpParty; done: Promise<SippResult> }> {
  const p = await RtpParty.open(freq);
  parties.push(p);
  const ruri = `${number}@127.0.0.1:${node.sipPort}`;
  const scenario = uacWaitsForBye(ruri, callerOf(freq), p.port, hangUpAfterMs ? { hangUpAfterMs } : { byeTimeoutMs: 120_000 });
  const run = sipp(scenario, [`127.0.0.1:${node.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '150s'], { killAfterMs: 160_000 });
  return { p, done: run.done };
}

export interface NodePartyCall {
  id: string;
  node_id: string;
  status: string;
  activeflow_id: string;
}

/** The newest call of `customerId` from the party with tone `freq` (dialNode), if it made one yet. */
export async function callOfParty(db: Knex, customerId: string, freq: number): Promise<NodePartyCall | undefined> {
  return (await db('calls')
    .where({ customer_id: customerId })
    .whereRaw(`source->>'target' = ?`, [callerOf(freq)])
    .orderBy('tm_create', 'desc')
    .first()) as NodePartyCall | undefined;
}
