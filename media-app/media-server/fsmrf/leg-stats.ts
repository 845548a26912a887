/**
 * The switch's figures of a leg's RTP (FsmrfCallEndpoint.getStats) from `uuid_dump <uuid> json` after
 * uuid_set_media_stats: FreeSWITCH's set_stats (switch_core_media.c) has written the rtp_audio_* variables.
 * Read here rather than through fsmrf's getChannelVariables, whose parser takes every rtp_audio_* value
 * as an integer (parseInt): rtp_audio_in_mos "4.29" would read as 4. The jitter is FreeSWITCH's
 * rtp_audio_in_jitter_max_variance (check_jitter: the highest value, ms², of a variance of the interval
 * between packets' arrivals that runs over the whole leg), as its root: a spread of arrivals in ms, the
 * worst of the leg so far, never a figure of one period (call quality reports it in the summary only,
 * core/quality/leg.ts sampleSwitch). FreeSWITCH exports nothing finer: set_stats writes only the lowest
 * and highest of that variance (its current value and standard deviation are not variables).
 */
import type { SwitchRtpCounts } from '../endpoint';
import { replyText } from './esl-arg';

/** The dump's channel variables (uuid_dump json: one object of header names and string values). */
function variables(dump: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(dump);
  } catch {
    throw new Error(`getStats: uuid_dump answered ${replyText(dump)}`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error(`getStats: uuid_dump answered ${replyText(dump)}`);
  return v as Record<string, unknown>;
}

/**
 * SwitchRtpCounts from the dump. A counter or figure the switch did not report fails the read by name
 * rather than reading as 0; the codec is null when the switch names none, the packet time 0.
 */
export function switchRtpCounts(dump: string): SwitchRtpCounts {
  const vars = variables(dump);
  const stat = (name: string): number => {
    const v = vars[`variable_rtp_audio_${name}`];
    const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
    if (!Number.isFinite(n)) throw new Error(`getStats: the switch reported no rtp_audio_${name}`);
    return n;
  };
  const codec = vars.variable_rtp_use_codec_name;
  const ptime = Number(vars.variable_rtp_use_codec_ptime);
  return {
    source: 'switch',
    packetsReceived: stat('in_packet_count'),
    lost: stat('in_flaw_total'),
    qualityPercentage: stat('in_quality_percentage'),
    mos: stat('in_mos'),
    interarrivalJitterMs: Math.sqrt(Math.max(0, stat('in_jitter_max_variance'))),
    packetsSent: stat('out_packet_count'),
    octetsSent: stat('out_media_bytes'),
    codec: typeof codec === 'string' && codec !== '' ? codec : null,
    ptimeMs: Number.isFinite(ptime) ? ptime : 0,
  };
}
