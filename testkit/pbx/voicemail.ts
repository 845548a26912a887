// Voicemail fixtures the PBX suites share: a customer with a trunk trusted by address (sipp calls in
// as it), a number whose flow runs given actions, an extension with a box, a sipp phone that
// registers as the extension and then waits for NOTIFYs on its port, and an extension's phone that
// calls, plays a pcap (tones, RFC 4733 keys) once answered and waits for the platform's BYE.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseActions } from '../../core/flow';
import { newId } from '../../core/ids';
import { addBalance, ensureBillingAccount } from '../../core/billing';
import { repos } from '../../core/repos';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { extensionsRepo } from '../../core/repos/extensions';
import { voicemailBoxesRepo, type BoxInput, type VoicemailBoxRow } from '../../core/voicemail/boxes';
import { testDb } from '../db';
import { createExtension, register, sipp, uacWaitsForBye } from '../media-app/harness';
import { sippMediaPort } from '../ports';
import { ack, inviteWithDigest, ok200 } from '../media-app/sipp-steps';
import { loopbackSdp } from '../sdp';
import { callerPcap, ToneSink, type CallerEvent } from './audio';

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
/** A message of 1.5 s of a `hz` tone in box `boxId`, its WAV in `dataDir`'s recordings, left `agoMs` ago; returns its id. */
export async function toneMessage(dataDir: string, cid: string, boxId: string, hz: number, agoMs = 0): Promise<string> {
  const db = await testDb();
  const id = newId();
  const filename = `vm-${id}.wav`;
  const recDir = path.join(dataDir, 'recordings');
  fs.mkdirSync(recDir, { recursive: true });
  execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', path.join(recDir, filename), 'synth', '1.5', 'sine', String(hz), 'vol', '0.5']);
  await db('voicemail_messages').insert({ id, customer_id: cid, box_id: boxId, folder: 'new', caller_number: '+15550001111', filename, duration_ms: 1500, tm_create: new Date(Date.now() - agoMs) });
  return id;
}

/** Keys as RFC 4733 events from `atMs`, 300 ms apart. */
export const keyEvents = (atMs: number, s: string): CallerEvent[] => s.split('').map((digit, i) => ({ atMs: atMs + i * 300, digit }));

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

/** SDP of a phone that sends keys as RFC 4733 events and hears at `port` on loopback. */
export const sdpWithKeys = (port: number) => loopbackSdp(port, { events: '0-15' });

/**
 * An extension's phone (run with -au/-ap): registers, calls `target` with digest, plays `pcap` once
 * answered (its audio and keys), then waits `byeTimeoutMs` for the platform's BYE.
 */
export function keyingPhone(o: { user: string; domain: string; target: string; rtpPort: number; pcap: string; byeTimeoutMs: number }): string {
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="keying-phone">
${register(o.user, o.domain)}
${inviteWithDigest({ user: o.user, domain: o.domain, target: o.target, display: 'Desk', sdp: sdpWithKeys(o.rtpPort), firstCseq: 1, ackVia: 'new' })}
<recv response="180" optional="true"/>
<recv response="183" optional="true"/>
<recv response="200" rrs="true" timeout="30000"/>
${ack(2)}
<nop><action><exec play_pcap_audio="${o.pcap}"/></action></nop>
<recv request="BYE" timeout="${o.byeTimeoutMs}"/>
${ok200}
</scenario>`;
}

/**
 * A trunk caller (15557654321) dials `number` on the SIP port and leaves a message: a 6 s tone of `hz`
 * from `silenceMs` (4 s) after the answer, then '#' (the pcap written at `pcapPath`). Resolves with what it heard once
 * its call ended as sipp expects (the platform's BYE); rejects with sipp's errors otherwise.
 */
export async function leaveToneMessage(sipPort: number, number: string, pcapPath: string, hz: number, silenceMs = 4000): Promise<ToneSink> {
  const pcap = callerPcap(pcapPath, silenceMs + 7000, [
    { atMs: silenceMs, tone: { hz, ms: 6000 } },
    { atMs: silenceMs + 6500, digit: '#' },
  ]);
  const sink = await ToneSink.open();
  try {
    const steps = `<nop><action><exec play_pcap_audio="${pcap}"/></action></nop>`;
    const r = await sipp(
      uacWaitsForBye(`${number}@127.0.0.1:${sipPort}`, '15557654321', sink.port, { steps, byeTimeoutMs: 40_000 }),
      [`127.0.0.1:${sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
      { killAfterMs: 60_000 },
    ).done;
    if (r.code !== 0) throw new Error(`the caller leaving a message ended with ${r.code}: ${r.errors}${r.messages}`);
  } finally {
    sink.close();
  }
  return sink;
}
