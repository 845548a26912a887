/**
 * A call's SIP ladder: the Call-IDs of the call and its chained legs (call_sip_ids, the rows'
 * sip_call_id), and the messages sip-server captured for them (core/sip/capture-store.ts).
 */
import type { Knex } from 'knex';
import type { Redis } from 'ioredis';
import { callSipIdsRepo } from '../../core/repos/call-sip-ids';
import { readCaptured, type CapturedMessage } from '../../core/sip/capture-store';
import { notFound } from '../../core/errors';
import { callsRepo } from '../../core/repos/calls';
import { readRtpCaptures, type CapturedDatagram } from '../../core/media/rtp-capture';

export interface LadderDeps {
  db: Knex;
  redis: Redis;
  prefix: string;
}

/** The captured messages of a customer's call and its legs; 404 CALL_NOT_FOUND for any other call. */
export async function callLadder(deps: LadderDeps, customerId: string, callId: string): Promise<CapturedMessage[]> {
  const sipCallIds = await callSipIdsRepo(deps.db).of(await callLegIds(deps, customerId, callId));
  return readCaptured(deps.redis, deps.prefix, sipCallIds);
}

/** The call's id and its legs' (the customer's own); 404 CALL_NOT_FOUND for any other call. */
export async function callLegIds(deps: LadderDeps, customerId: string, callId: string): Promise<string[]> {
  const calls = callsRepo(deps.db);
  const call = await calls.legsOf(customerId, callId);
  if (!call) throw notFound('CALL_NOT_FOUND', 'call not found');
  const related = [call.master_call_id, ...(call.chained_call_ids ?? [])].filter((id) => id && !/^0{8}-/.test(id));
  // legs are the customer's own (a chained id of another customer is never followed)
  const legs = related.length ? await calls.idsOwnedAmong(customerId, related) : [];
  return [call.id, ...legs];
}

/** The call's SIP messages and the RTP/RTCP its legs' endpoints captured (RTP_CAPTURE on their nodes). */
export async function callPackets(deps: LadderDeps, customerId: string, callId: string): Promise<{ sip: CapturedMessage[]; media: CapturedDatagram[] }> {
  const ids = await callLegIds(deps, customerId, callId);
  const [sip, media] = await Promise.all([
    callSipIdsRepo(deps.db)
      .of(ids)
      .then((sipIds) => readCaptured(deps.redis, deps.prefix, sipIds)),
    readRtpCaptures(deps.redis, deps.prefix, ids),
  ]);
  return { sip, media };
}

const isoUs = (us: number): string => {
  const d = new Date(Math.floor(us / 1000)).toISOString();
  return `${d.slice(0, 19)}.${String(us % 1_000_000).padStart(6, '0')}Z`;
};

/** "INVITE" for a request, "200 OK" for a response (its status line). */
function methodOf(raw: string): string {
  const line = raw.slice(0, Math.max(0, raw.indexOf('\r\n')) || raw.length);
  if (line.startsWith('SIP/2.0 ')) return line.slice(8).trim();
  return line.split(' ')[0] ?? '';
}

/** The reference's sip-analysis body (plus direction, transport and SIP Call-ID per message). */
export function sipAnalysisJson(messages: CapturedMessage[]) {
  return {
    sip_messages: messages.map((m) => ({
      timestamp: isoUs(m.us),
      method: methodOf(m.raw),
      src_ip: m.srcIp,
      src_port: m.srcPort,
      dst_ip: m.dstIp,
      dst_port: m.dstPort,
      direction: m.direction === 'in' ? 'incoming' : 'outgoing',
      transport: m.transport,
      sip_call_id: m.sipCallId,
      raw: m.raw,
    })),
    rtcp_stats: null,
  };
}
