/**
 * The carrier of the chaos bench's bridged calls: a sipp UAS on a fixed loopback port (the provider's
 * hostname) that answers each INVITE, plays a minute of tone from its media port (so the caller on the
 * other side of the bridge hears audio) and waits for the BYE. One sipp per round.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodeG711 } from '../../../core/audio/g711';
import { SIPP_SDP, sipp, type SippResult } from '../../../testkit/media-app/harness';
import { ok200 } from '../../../testkit/media-app/sipp-steps';
import { pcmuPackets, rtpPcap } from '../../../testkit/rtp-pcap';
import { sippMediaPort } from '../../../testkit/ports';

/** A pcap of `seconds` of a 440 Hz tone (PCMU), written once per process. */
let tonePcap = '';
function tone(seconds: number): string {
  if (tonePcap) return tonePcap;
  const pcm = new Int16Array(8000 * seconds);
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
  tonePcap = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'chaos-tone-')), 'tone.pcap');
  fs.writeFileSync(tonePcap, rtpPcap(pcmuPackets(encodeG711('PCMU', pcm), true), { ssrc: 0x5eed }));
  return tonePcap;
}

const reply = (status: string, extra: string) => `<send><![CDATA[
SIP/2.0 ${status}
[last_Via:]
[last_From:]
[last_To:];tag=[pid]gw[call_number]
[last_Call-ID:]
[last_CSeq:]
${extra}
]]></send>`;

function scenario(byeTimeoutMs: number, pcap: string): string {
  const contact = 'Contact: <sip:[local_ip]:[local_port];transport=[transport]>';
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="chaos-gateway">
<recv request="INVITE" crlf="true"/>
${reply('180 Ringing', `${contact}\nContent-Length: 0\n`)}
${reply('200 OK', `${contact}\nContent-Type: application/sdp\nContent-Length: [len]\n\n${SIPP_SDP}`).replace('<send>', '<send retrans="500">')}
<recv request="ACK"/>
<nop><action><exec play_pcap_audio="${pcap}"/></action></nop>
<recv request="BYE" timeout="${byeTimeoutMs}"/>
${ok200}
</scenario>`;
}

/** The gateway for one round: `calls` calls at most, each held until its BYE (at most `byeTimeoutMs`). */
export async function startGateway(port: number, calls: number, byeTimeoutMs: number): Promise<{ done: Promise<SippResult> }> {
  const run = sipp(
    scenario(byeTimeoutMs, tone(90)),
    ['-i', '127.0.0.1', '-p', String(port), '-m', String(calls), '-l', String(calls), '-mi', '127.0.0.1', '-mp', String(await sippMediaPort()), '-timeout', `${Math.ceil(byeTimeoutMs / 1000) + 30}s`],
    {
      killAfterMs: byeTimeoutMs + 40_000,
    },
  );
  await run.port;
  // in an object: an async function returning the promise itself would wait for it
  return { done: run.done };
}
