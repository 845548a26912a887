/**
 * The soak's AI calls (issue 52; testkit/reliability/soak.ts): a stand-in of OpenAI's Realtime API on
 * loopback (testkit/ai/realtime-server.ts, on a port of this shard's slice), an AI with
 * engine_model openai-realtime.gpt-realtime pointed at it and a flow answer → ai_talk → hangup, both
 * made through the REST API as a user would (the platform's processes allow loopback in
 * EGRESS_ALLOW_CIDRS and trust the stand-in's certificate, as test/ai/realtime.test.ts does), and waves
 * of callers into it. Each caller is an AiPhone: it sends its own 20 ms RTP stream, says an espeak-ng
 * sentence every few seconds (the stand-in's VAD hears it and answers with a tone) and counts the
 * voiced packets it hears. The caller hangs up; an AI call the platform ends first is unplanned.
 */
import dgram from 'node:dgram';
import { encodeG711, G711_TABLES } from '../../core/audio/g711';
import { speechSamples } from '../ai/echo-phone';
import { startRealtimeServer, type RealtimeScript, type RealtimeServer } from '../ai/realtime-server';
import { sippCalls, uacWaitsForBye } from '../media-app/harness';
import { freePort } from '../ports';
import type { CallCounts, Drivers } from './soak';
import { duration, every } from './soak-waves';

export interface AiCallCounts extends CallCounts {
  /** answered calls whose caller heard the agent (at least HEARD_MS of voiced audio) */
  heard: number;
  /** the caller's utterances the stand-in's VAD heard (speech_started), over all calls */
  turns: number;
}

export const AI_NUMBER = '+899200000003';
const KEY = 'sk-soak-realtime-stand-in';
/** what a caller must hear of the agent for its call to count as heard */
const HEARD_MS = 500;
const SILENCE = 0xff;

/** The agent: a 440 Hz greeting, a 660 Hz answer to each of the caller's utterances; never a function call (the caller ends the call). */
const SCRIPT: RealtimeScript = {
  greeting: { say: 'Hello, this is the soak desk.', ms: 1500, hz: 440 },
  turn: () => ({ heard: 'I would like to check my order', reply: { say: 'Your order is on its way.', ms: 1500, hz: 660 } }),
  afterCall: () => null,
};

/** The stand-in on a port of this shard's slice (testkit/ports.ts); env: what the platform's processes need to reach it. */
export async function startAiStandIn(): Promise<{ rt: RealtimeServer; env: Record<string, string> }> {
  const rt = await startRealtimeServer(KEY, SCRIPT, await freePort());
  return { rt, env: { EGRESS_ALLOW_CIDRS: '127.0.0.0/8', OPENAI_REALTIME_CA_FILE: rt.cert.certPath } };
}

/** The AI, its flow and the number, through the API; ai_talk's duration (its session cap) `durationS`. */
/** A POST to the platform's API with an access key: the body of the 200 answer, or an error with the answer. */
export function apiPost(apiUrl: string, accesskey: string): (what: string, body: unknown) => Promise<{ id: string }> {
  return async (what, body) => {
    const res = await fetch(`${apiUrl}/${what}?accesskey=${accesskey}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const json = (await res.json()) as { id: string };
    if (res.status !== 200) throw new Error(`POST /${what}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
}

export async function createAiNumber(apiUrl: string, accesskey: string, rt: RealtimeServer, durationS: number): Promise<void> {
  const post = apiPost(apiUrl, accesskey);
  const ai = await post('ais', {
    name: 'soak desk',
    init_prompt: 'You answer questions about orders.',
    engine_model: 'openai-realtime.gpt-realtime',
    engine_url: rt.url,
    engine_key: KEY,
    tts_voice_id: 'marin',
    vad_config: { stop_secs: 0.6 },
  });
  const actions = [{ type: 'answer' }, { type: 'ai_talk', option: { assistance_type: 'ai', assistance_id: ai.id, duration: durationS } }, { type: 'hangup' }];
  const flow = await post('flows', { name: 'soak ai', actions });
  await post('numbers', { number: AI_NUMBER, call_flow_id: flow.id });
}

/**
 * A caller's phone: once the platform's first packet tells it where to send, its own 20 ms µ-law stream
 * (silence, and `speech` said 3 s in and every `everyMs` after); counts the voiced packets it receives.
 */
export class AiPhone {
  private readonly sock = dgram.createSocket('udp4');
  port = 0;
  voiced = 0;
  private to: { host: string; port: number } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private tick = 0;
  private seq = 1;
  private readonly ssrc = Math.floor(Math.random() * 0xffffffff);

  private constructor(
    private readonly speech: Buffer,
    private readonly everyMs: number,
  ) {}

  static async open(speech: Buffer, everyMs: number): Promise<AiPhone> {
    const p = new AiPhone(speech, everyMs);
    p.sock.on('error', () => undefined);
    await new Promise<void>((r) => p.sock.bind(0, '127.0.0.1', r));
    p.port = p.sock.address().port;
    p.sock.on('message', (buf, from) => p.onPacket(buf, from.address, from.port));
    return p;
  }

  private onPacket(buf: Buffer, host: string, port: number): void {
    if (buf.length < 12 || (buf[0]! & 0xc0) !== 0x80 || (buf[1]! & 0x7f) !== 0) return;
    const payload = buf.subarray(12 + (buf[0]! & 0x0f) * 4);
    let sum = 0;
    for (const b of payload) sum += Math.abs(G711_TABLES.muDecode[b]!);
    if (payload.length && sum / payload.length > 300) this.voiced++;
    this.to = { host, port };
    this.timer ??= setInterval(() => this.send(), 20);
  }

  private send(): void {
    const frames = this.speech.length / 160;
    const cycle = this.everyMs / 20;
    const at = this.tick - 150; // 3 s in
    const i = at >= 0 ? at % cycle : -1;
    const pkt = Buffer.alloc(172, SILENCE);
    pkt[0] = 0x80;
    pkt[1] = 0;
    pkt.writeUInt16BE(this.seq++ & 0xffff, 2);
    pkt.writeUInt32BE((this.tick * 160) >>> 0, 4);
    pkt.writeUInt32BE(this.ssrc >>> 0, 8);
    if (i >= 0 && i < frames) this.speech.copy(pkt, 12, i * 160, (i + 1) * 160);
    this.tick++;
    if (this.to) this.sock.send(pkt, this.to.port, this.to.host);
  }

  heard(): boolean {
    return this.voiced * 20 >= HEARD_MS;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.sock.close();
  }
}

/** `text` spoken by espeak-ng as µ-law, padded to whole 20 ms frames. */
export function speechUlaw(text: string): Buffer {
  const x = encodeG711('PCMU', speechSamples(text));
  const out = Buffer.alloc(Math.ceil(x.length / 160) * 160, SILENCE);
  out.set(x);
  return out;
}

/** Waves of AI calls until `d.end`, each wave one sipp whose calls each have an AiPhone; counted into `into`. */
export function aiWaves(d: Drivers, speech: Buffer, rt: RealtimeServer, into: AiCallCounts): Promise<void> {
  const target = `127.0.0.1:${d.pp.sipPort}`;
  return every(d.o.aiWaveSeconds, d.end, () => {
    const cap = (d.end - Date.now()) / 1000 - 2;
    if (cap < Math.min(5, d.o.minCallSeconds) || d.o.aiCallsPerWave < 1) return null;
    const holdMs = Math.round(duration(d.o, cap) * 1000);
    return (async () => {
      const phones = await Promise.all(Array.from({ length: d.o.aiCallsPerWave }, () => AiPhone.open(speech, 8000)));
      try {
        const scenario = uacWaitsForBye(`${AI_NUMBER}@${target}`, 'soak-ai', '[field0]', { hangUpAfterMs: holdMs });
        const r = await sippCalls(
          scenario,
          target,
          phones.map((p) => [p.port]),
          { timeoutMs: holdMs + 40_000, rate: 5 },
        ).done;
        const answered = into.answered;
        d.rec.wave(r, 'ai', into, d.o.log);
        // which phone carried which call is sipp's; the wave's phones that heard the agent, at most its answered calls
        into.heard += Math.min(into.answered - answered, phones.filter((p) => p.heard()).length);
        into.turns = rt.speechStartedAt.length;
      } finally {
        for (const p of phones) p.close();
      }
    })();
  });
}
