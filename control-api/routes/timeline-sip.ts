/**
 * A call's SIP ladder from the messages sip-server captured (sip-server/capture/):
 * /timelines/calls/{call_id}/sip-analysis (JSON, the reference's shape) and /pcap (a pcap file of
 * the same messages). The call and its chained legs, each with all of its Call-IDs. Another
 * customer's call is 404 CALL_NOT_FOUND; a call with nothing captured (capture off, retention past)
 * has an empty ladder and a pcap of no packets.
 */
import { z } from 'zod';
import { defineRoute, uuid } from '../route';
import { callLadder, callPackets, sipAnalysisJson } from '../timelines/ladder';
import { buildPcap } from '../timelines/pcap';
import { customerFileHeaders } from '../customer-file';

const tag = 'Timeline';
const params = z.object({ call_id: uuid() });
const message = z.object({
  timestamp: z.string(),
  method: z.string(),
  src_ip: z.string(),
  src_port: z.number(),
  dst_ip: z.string(),
  dst_port: z.number(),
  direction: z.enum(['incoming', 'outgoing']),
  transport: z.string(),
  sip_call_id: z.string(),
  raw: z.string(),
});

export const routes = [
  defineRoute({
    method: 'get',
    path: '/timelines/calls/:call_id/sip-analysis',
    tag,
    permission: 'manager',
    params,
    summary: 'The SIP messages of a call and its legs as the SIP server sent and received them',
    description: 'In the order sent or received; rtcp_stats is null (no RTCP figures are captured).',
    response: z.object({ sip_messages: z.array(message), rtcp_stats: z.null() }),
    handler: async ({ ctx, auth, params: p }) => sipAnalysisJson(await callLadder({ db: ctx.db, redis: ctx.redis, prefix: ctx.config.redisKeyPrefix }, auth.customerId, p.call_id)),
  }),
  defineRoute({
    method: 'get',
    path: '/timelines/calls/:call_id/pcap',
    tag,
    permission: 'manager',
    params,
    summary: 'A pcap file of the SIP messages of a call and its legs (and their RTP/RTCP when captured)',
    description:
      'libpcap format, raw IP link type; IP and UDP/TCP headers synthesized from the captured addresses. With RTP_CAPTURE on the media nodes, the RTP and RTCP ' +
      "the legs' endpoints received and sent (the first RTP_CAPTURE_MAX_PACKETS per leg; RTP cut after its header in `headers` mode), in time order with the SIP messages.",
    response: z.any(),
    handler: async ({ ctx, auth, params: p, res }) => {
      const { sip, media } = await callPackets({ db: ctx.db, redis: ctx.redis, prefix: ctx.config.redisKeyPrefix }, auth.customerId, p.call_id);
      // the captured SIP messages are bytes callers chose
      customerFileHeaders(res, { filename: `call-${p.call_id}.pcap`, contentType: 'application/octet-stream' });
      res.send(buildPcap(sip, media));
      return undefined;
    },
  }),
];
