// A pcap of one RTP stream (PCMU, 20 ms packets) for sipp's play_pcap_audio, made from samples.
import fs from 'node:fs';
import { pcmuPackets, rtpPcap } from '../../testkit/rtp-pcap';

function linearToUlaw(sample: number): number {
  const BIAS = 0x84;
  let s = Math.max(-32635, Math.min(32635, sample));
  const sign = s < 0 ? 0x80 : 0;
  if (s < 0) s = -s;
  s += BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (s >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

/** Writes `samples` (8 kHz 16-bit mono) as an Ethernet/IPv4/UDP/RTP pcap, one packet per 20 ms (a last partial packet is dropped). */
export function writeRtpPcap(file: string, samples: Int16Array): void {
  const ulaw = new Uint8Array(Math.floor(samples.length / 160) * 160);
  for (let i = 0; i < ulaw.length; i++) ulaw[i] = linearToUlaw(samples[i]!);
  fs.writeFileSync(file, rtpPcap(pcmuPackets(ulaw, true), { ssrc: 0x5eed1234, ipChecksum: true }));
}
