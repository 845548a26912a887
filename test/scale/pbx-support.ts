// Phones of the cross-node PBX tests (park, pickup, supervise on a cluster: testkit/scale/cluster.ts):
// the PBX tests' sipp phones (test/pbx/support.ts, each with a tone of its own) registered and dialling
// through a chosen node, and a raw PBX leg (signed or not) sent to a node as another node would.
import { expect } from 'chai';
import { freePort } from '../../testkit/ports';
import { RtpParty } from '../../testkit/conference/party';
import { createExtension, killAllSipp, registerOnly, sipp, uacWaitsForBye, until, type SippResult } from '../../testkit/media-app/harness';
import { Cluster, type ClusterNode } from '../../testkit/scale/cluster';
import { createFixture, type Fixture } from '../../testkit/api';
import { truncateAll } from '../../testkit/db';
import { extensionsRepo } from '../../core/repos/extensions';
import type { CallRow } from '../../core/repos/calls';
import { sippArgs, type Phone } from '../pbx/support';
import type { XnodeBackend } from './backends';

/** An extension of the customer whose phone is registered through `node` at a port of its own. */
export async function nodePhone(c: Cluster, node: ClusterNode, customerId: string, freq: number, groups: string[] = []): Promise<Phone> {
  const e = await createExtension(customerId);
  if (groups.length) await extensionsRepo(c.db).update(e.ext.id, { pickup_groups: groups });
  const port = await freePort();
  const reg = await sipp(registerOnly(e.ext.username, e.domain), [`127.0.0.1:${node.sipPort}`, '-i', '127.0.0.1', '-p', String(port), '-m', '1', '-au', e.ext.username, '-ap', e.password]).done;
  expect(reg.code, reg.errors).to.equal(0);
  return { user: e.ext.username, domain: e.domain, password: e.password, extension: e.ext.extension, id: e.ext.id, port, audio: await RtpParty.open(freq) };
}

/** Runs a scenario as the phone's caller side, sent to `node` (the call lives there). */
export async function callVia(node: ClusterNode, p: Phone, scenario: string): Promise<{ done: Promise<SippResult> }> {
  const port = await freePort();
  return sipp(scenario, [`127.0.0.1:${node.sipPort}`, ...(await sippArgs(port)), '-au', p.user, '-ap', p.password], { killAfterMs: 100_000 });
}

/** Sends a PBX leg INVITE (`user` its Request-URI user, `header` its X-Openvoice-Pbx-Leg) to `port`; passes when refused with `status`. */
export async function legRefused(port: number, user: string, header: string | null, status: number): Promise<SippResult> {
  const scenario = uacWaitsForBye(`${user}@127.0.0.1:${port}`, 'node', 9, { expectStatus: status });
  const withHeader = header === null ? scenario : scenario.replace('Max-Forwards: 70\n', `Max-Forwards: 70\nX-Openvoice-Pbx-Leg: ${header}\n`);
  return sipp(withHeader, [`127.0.0.1:${port}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 20_000 }).done;
}

/** The customer's call matching `pick` once it has `status`. */
export function clusterCall(c: Cluster, customerId: string, pick: (r: CallRow) => boolean, status: string, what: string, timeoutMs = 30_000): Promise<CallRow> {
  return until(
    async () => {
      const rows = (await c.db('calls').where({ customer_id: customerId }).orderBy('tm_create', 'desc')) as CallRow[];
      return rows.find((r) => pick(r) && r.status === status) ?? null;
    },
    timeoutMs,
    what,
  );
}

/**
 * Mocha hooks of the cross-node PBX suites: a two-node cluster (on `mediaServer`) and a customer on it,
 * handed to `set` once up; the phones the suite adds to the returned list have their audio closed after
 * it, with the cluster.
 */
export function usePbxCluster(set: (s: { c: Cluster; f: Fixture; cid: string }) => void, mediaServer: XnodeBackend = 'embedded'): Phone[] {
  const phones: Phone[] = [];
  let c: Cluster | undefined;
  before(async () => {
    await truncateAll();
    c = await Cluster.start({ nodes: 2, mediaServer });
    const f = await createFixture(c.apis[0]!.ctx);
    set({ c, f, cid: f.customer.id });
  });
  after(async () => {
    killAllSipp();
    for (const p of phones) p.audio.close();
    await c?.close();
  });
  return phones;
}
