// The set-up the call-quality suites share (quality, quality-jitter-backends, rtp-pcap): a number of the
// stack's customer that a sipp caller dials over a loopback trunk, and a phone (a real media-engine
// endpoint) whose RTP reaches the platform through the lossy relay (testkit/lossy-relay/): sipp signals
// with the relay's far side in its SDP, the phone sends to the relay's near side.
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { MediaServer, type Endpoint } from '../../media-engine';
import type { LossyRelay } from '../../testkit/lossy-relay';
import { trunkCaller } from '../../testkit/media-app/phones';
import { portBlock } from '../../testkit/ports';
import { loopbackTrunk } from '../../testkit/trunks';
import type { Stack } from '../xfer/support';

/**
 * A path is clean when no packet reached the relay later than this behind its stream's earliest: the
 * jitter buffer's initial depth (2 frames; media-engine/jitter/jitter-buffer.ts). A buffer that gave a
 * frame back after 10 calm seconds is one frame deep, so a packet 20-40 ms late may still be discarded:
 * the clean call's figures allow a discard or two. The relay runs on a thread of its own, off the test's
 * loop (where the platform runs), but a starved machine still stalls a sender (either engine's worker) or
 * the relay's thread: packets held as a network would hold them, which the platform rightly hears as
 * jitter and discards (MOS 2.53 in one 2 s period of a "clean" call on CI, when the relay shared the
 * test's loop). A suite's clean-call figures are judged only on a clean path (cleanPath).
 */
export const CLEAN_PATH_MS = 40;

/**
 * How late the relay passed the call's RTP each way, and whether each way was a clean path: `toPlatform`
 * for the figures the platform measures (`in`), `toPhone` for those the phone reports (`out`); `says` for
 * a test's output.
 */
export interface CleanPath {
  toPlatform: boolean;
  toPhone: boolean;
  says: string;
}

export function cleanPath(relay: LossyRelay): CleanPath {
  const toPlatform = relay.lateness.toFar.worstMs;
  const toPhone = relay.lateness.toNear.worstMs;
  return {
    toPlatform: toPlatform <= CLEAN_PATH_MS,
    toPhone: toPhone <= CLEAN_PATH_MS,
    says: `the relay passed packets up to ${toPlatform.toFixed(0)} ms late to the platform and ${toPhone.toFixed(0)} ms late to the phone (clean: ${CLEAN_PATH_MS} ms at most)`,
  };
}

/**
 * The judgements that hold only when the path's direction `way` was clean (cleanPath): run when it was,
 * else `what` is printed as not judged, with the path's lateness. A call's floors are judged apart, always.
 */
export function onCleanPath(path: CleanPath, way: 'toPlatform' | 'toPhone', what: string, judge: () => void): void {
  if (path[way]) judge();
  else console.log(`      (${what} not judged: ${path.says})`);
}

/** A PCMU offer for an endpoint that sends to 127.0.0.1:`port`. */
export const pcmuAt = (port: number): string =>
  ['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', `m=audio ${port} RTP/AVP 0`, 'a=rtpmap:0 PCMU/8000', 'a=ptime:20', 'a=sendrecv', ''].join('\r\n');

/**
 * The stack's customer gets a loopback trunk (its domain `trunk` and the time) and a number (`prefix`
 * and the time's last five digits) whose flow answers, waits `sleepMs` and hangs up. Returns the number.
 */
export async function answeringNumber(s: Stack, o: { trunk: string; prefix: string; sleepMs: number }): Promise<string> {
  const db = s.t.ctx.db;
  const customer_id = s.f.customer.id;
  await loopbackTrunk(db, customer_id, `${o.trunk}${Date.now()}`);
  const flow = await flowsRepo(db).create({
    customer_id,
    actions: parseActions([{ type: 'answer' }, { type: 'sleep', option: { duration: o.sleepMs } }, { type: 'hangup' }]),
  } as never);
  const number = `${o.prefix}${String(Date.now()).slice(-5)}`;
  await numbersRepo(db).create({ customer_id, number, type: 'virtual', call_flow_id: flow.id } as never);
  return number;
}

/** The engine the phones are endpoints of (destroyed by the suite). */
export const startPhones = (): Promise<MediaServer> => MediaServer.start({ rtpPorts: portBlock('engineRtp', 20, 2), workers: 1 });

/** A phone of `phones` sending PCMU to the relay's near side, the relay's near peer (destroyed by the caller; by itself if it cannot be set up). */
export async function phoneBehind(phones: MediaServer, relay: LossyRelay): Promise<Endpoint> {
  const phone = await phones.createEndpoint();
  try {
    await phone.modify(pcmuAt(relay.near.rtpPort));
    await relay.setNearPeer('127.0.0.1', phone.local.port);
  } catch (e) {
    await phone.destroy();
    throw e;
  }
  return phone;
}

/** sipp calls `number` with the relay's far side as its media (the platform sends there) and ends cleanly once hung up. */
export async function dialThrough(s: Stack, number: string, relay: LossyRelay): Promise<void> {
  const a = await (await trunkCaller(number, s.p.sipPort, relay.far.rtpPort, 30_000)).done;
  expect(a.code, a.errors + a.messages).to.equal(0);
}
