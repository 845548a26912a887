// Voicemail fixtures the PBX suites share: a customer with a trunk trusted by address (sipp calls in
// as it), a number whose flow runs given actions, an extension with a box, and a sipp phone that
// registers as the extension and then waits for NOTIFYs on its port.
import { parseActions } from '../../core/flow';
import { addBalance, ensureBillingAccount } from '../../core/billing';
import { repos } from '../../core/repos';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { extensionsRepo } from '../../core/repos/extensions';
import { voicemailBoxesRepo, type BoxInput, type VoicemailBoxRow } from '../../core/voicemail/boxes';
import { testDb } from '../db';
import { createExtension } from '../media-app/harness';
import { ok200 } from '../media-app/sipp-steps';

let seq = 0;

/** A funded customer whose trunk is 127.0.0.1 (sipp calls in through it). */
export async function pbxCustomer(): Promise<string> {
  const db = await testDb();
  const cid = (await repos(db).customers.create({ email: `vm${process.pid}-${++seq}-${Date.now()}@example.test`, status: 'active', name: 'vm' })).id;
  await trunksRepo(db).create(cid, `vm${process.pid}x${++seq}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
  await addBalance(db, (await ensureBillingAccount(db, cid)).id, 1_000_000_000, `vm-topup:${cid}`);
  return cid;
}

/** The number `number` of the customer runs these actions. */
export async function numberWithFlow(cid: string, number: string, actions: unknown[]): Promise<void> {
  const db = await testDb();
  const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions(actions) });
  await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
}

/** An extension of the customer (unsolicited MWI on) with its box. */
export async function extensionWithBox(cid: string, box: BoxInput & { number: string; pin: string }) {
  const db = await testDb();
  const e = await createExtension(cid);
  const ext = (await extensionsRepo(db).update(e.ext.id, { mwi_unsolicited: true }))!;
  const b = await voicemailBoxesRepo(db).create(cid, { ...box, extension_id: ext.id });
  if (typeof b === 'string') throw new Error(`box: ${b}`);
  return { ...e, ext, box: b as VoicemailBoxRow };
}

/** A phone's port after registerOnly: it answers `count` NOTIFYs with 200 (run with -p on that port). */
export function notifyReceiver(count: number, timeoutMs: number): string {
  const one = `<recv request="NOTIFY" timeout="${timeoutMs}"/>\n${ok200}`;
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="mwi-phone">
${Array.from({ length: count }, () => one).join('\n')}
</scenario>`;
}
