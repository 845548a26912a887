// A pcap of one RTP stream (PCMU, 20 ms packets) for sipp's play_pcap_audio, made from samples.
import fs from 'node:fs';
import { encodeG711 } from '../../core/audio/g711';
import { pcmuPackets, rtpPcap } from '../../testkit/rtp-pcap';

/** Writes `samples` (8 kHz 16-bit mono) as an Ethernet/IPv4/UDP/RTP pcap, one packet per 20 ms (a last partial packet is dropped). */
export function writeRtpPcap(file: string, samples: Int16Array): void {
  const ulaw = encodeG711('PCMU', samples.subarray(0, Math.floor(samples.length / 160) * 160));
  fs.writeFileSync(file, rtpPcap(pcmuPackets(ulaw, true), { ssrc: 0x5eed1234, ipChecksum: true }));
}
