/**
 * The end-to-end script's steps, in order, each through drachtio-srf's and drachtio-fsmrf's public API
 * only, each returning what it measured (a step that fails throws with what it measured and why).
 * The phone is a real SIP softphone (baresip, its microphone a 600 Hz tone); the far ends the script
 * needs beside it are switch channels pointed at each other (createEndpoint + modify).
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import Mrf, { type Conference, type Endpoint, type MediaServer } from 'drachtio-fsmrf';
import { Baresip } from '../../testkit/baresip';
import { ForkSink, growingWavSamples, heardShare, level } from './measure';

/** drachtio-srf as the script drives it (its typings have no connect options). */
export interface SrfLike {
  connect(o: { host: string; port: number; secret: string }): void;
  on(e: string, f: (...a: any[]) => void): void;
  invite(f: (req: unknown, res: unknown) => void): void;
  disconnect(): void;
}

export interface E2eOptions {
  drachtio: { host: string; port: number; secret: string };
  /** the sip-server's SIP address, where the phone calls */
  sip: string;
  esl: { host: string; port: number; password: string };
  /** a directory the script and the switch share (same host): the prompt, the recordings */
  dir: string;
}

export interface E2eContext {
  opts: E2eOptions;
  srf: SrfLike;
  ms?: MediaServer;
  phone?: Baresip;
  caller?: Endpoint;
  /** the phone's dialog (connectCaller's): the application hangs the phone up with it */
  callerDialog?: { destroy(): Promise<unknown> };
  /** two switch channels sending to each other: `a` joins what is measured, `b` records what `a` hears */
  pair?: { a: Endpoint; b: Endpoint };
  others: Endpoint[];
  sink?: ForkSink;
}

const CALLER_HZ = 600;
const PROMPT_HZ = 440;
const ms = (t0: number) => `${Math.round(performance.now() - t0)} ms`;
const r2 = (x: number) => x.toFixed(2);
const need = <T>(v: T | undefined, what: string): T => {
  if (v === undefined) throw new Error(`${what} is missing (an earlier step failed)`);
  return v;
};

/** Polls `f` (a file the phone's dump grows: no event tells when); events are waited on (Baresip.event, ForkSink.untilSamples). */
async function waitFor<T>(f: () => T | null | undefined | false, timeoutMs: number, what: string): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function connect(ctx: E2eContext): Promise<string> {
  const t0 = performance.now();
  const { drachtio, esl } = ctx.opts;
  await new Promise<void>((resolve, reject) => {
    ctx.srf.on('connect', (err: Error | null) => (err ? reject(err) : resolve()));
    ctx.srf.on('error', (err: Error) => reject(new Error(`sip-server ${drachtio.host}:${drachtio.port}: ${err.message}`)));
    ctx.srf.connect(drachtio);
  });
  const t1 = performance.now();
  ctx.ms = await new Mrf(ctx.srf).connect({ address: esl.host, port: esl.port, secret: esl.password, listenAddress: '127.0.0.1', listenPort: 0 });
  return `sip-server in ${Math.round(t1 - t0)} ms, event socket in ${ms(t1)}; drachtio_mrf at ${ctx.ms.sip.ipv4.udp.address}`;
}

export async function connectCaller(ctx: E2eContext): Promise<string> {
  const m = need(ctx.ms, 'the media server');
  const mic = path.join(ctx.opts.dir, 'mic600.wav');
  execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', mic, 'synth', '300', 'sine', String(CALLER_HZ), 'vol', '0.4']);
  const t0 = performance.now();
  const connected = new Promise<Endpoint>((resolve, reject) => {
    ctx.srf.invite(
      (req, res) =>
        void m.connectCaller(req, res).then(({ endpoint, dialog }) => {
          ctx.callerDialog = dialog as E2eContext['callerDialog'];
          resolve(endpoint);
        }, reject),
    );
  });
  ctx.phone = await Baresip.start({ user: 'phone', domain: '127.0.0.1', password: 'unused', outboundProxy: `sip:${ctx.opts.sip}`, register: false }, mic);
  const phone = ctx.phone;
  await phone.dial(`sip:fsmrf-e2e@${ctx.opts.sip}`);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timed out after 15000 ms waiting for connectCaller')), 15_000)));
  const caller = await Promise.race([connected, late]).finally(() => clearTimeout(timer));
  ctx.caller = caller;
  await phone.event('CALL_ESTABLISHED', 10_000);
  return `the phone's call answered through connectCaller in ${ms(t0)} (channel ${caller.uuid})`;
}

export async function play(ctx: E2eContext): Promise<string> {
  const caller = need(ctx.caller, 'the caller');
  const phone = need(ctx.phone, 'the phone');
  const prompt = path.join(ctx.opts.dir, 'prompt440.wav');
  execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', prompt, 'synth', '2', 'sine', String(PROMPT_HZ), 'vol', '0.5']);
  const mark = growingWavSamples(phone.heardWav).length;
  const t0 = performance.now();
  const r = await caller.play(prompt);
  const took = ms(t0);
  // the phone's dump trails what it received by its jitter buffer: wait for the prompt's two seconds
  const heard = await waitFor(
    () => {
      const s = growingWavSamples(phone.heardWav).subarray(mark);
      return s.length >= 2 * 8000 ? s : null;
    },
    5000,
    "the prompt's two seconds at the phone",
  ).catch(() => growingWavSamples(phone.heardWav).subarray(mark));
  const share = heardShare(heard, PROMPT_HZ);
  const text = `the phone heard ${PROMPT_HZ} Hz at share ${r2(share)}; playback_ms ${r.playbackMilliseconds}, play took ${took}`;
  if (share < 0.5) throw new Error(text);
  return text;
}

export async function playCollect(ctx: E2eContext): Promise<string> {
  const caller = need(ctx.caller, 'the caller');
  const phone = need(ctx.phone, 'the phone');
  const t0 = performance.now();
  const result = caller.playCollect({ file: 'silence_stream://300', min: 3, max: 3, tries: 1, timeout: 8000, digitTimeout: 3000 });
  // digits count once the application reads them (the switch drops digits between applications): at its prompt's start
  caller.once('playback-start', () => void phone.command('sndcode', '123').catch(() => undefined));
  const r = await result;
  const text = `digits '${r.digits ?? ''}' from the phone (RFC 4733) in ${ms(t0)}`;
  if (r.digits !== '123') throw new Error(`${text}, wanted '123'`);
  return text;
}

/** A WAV the switch wrote, as samples (its header complete: the recording has ended). */
const wavSamples = (file: string) => growingWavSamples(file);

export async function record(ctx: E2eContext): Promise<string> {
  const caller = need(ctx.caller, 'the caller');
  const file = path.join(ctx.opts.dir, 'caller.wav');
  const r = await caller.record(file, { timeLimitSecs: 2 });
  const share = heardShare(wavSamples(file), CALLER_HZ);
  const text = `${file}: ${r.recordMilliseconds ?? '?'} ms, the phone's ${CALLER_HZ} Hz at share ${r2(share)}`;
  if (share < 0.5) throw new Error(text);
  return text;
}

/** What `b` receives for a second (what its partner `a` hears), through `b`'s record. */
async function heardByPair(ctx: E2eContext, name: string, secs = 1): Promise<Int16Array> {
  const { b } = need(ctx.pair, 'the pair of channels');
  const file = path.join(ctx.opts.dir, `${name}.wav`);
  await b.record(file, { timeLimitSecs: secs });
  return wavSamples(file);
}

export async function bridge(ctx: E2eContext): Promise<string> {
  const m = need(ctx.ms, 'the media server');
  const caller = need(ctx.caller, 'the caller');
  // two channels sending to each other: a 3pcc channel, one answering its offer, then the first told the answer
  const a = await m.createEndpoint();
  const b = await m.createEndpoint({ remoteSdp: a.local.sdp ?? null });
  await a.modify(b.local.sdp!);
  ctx.pair = { a, b };
  const t0 = performance.now();
  await caller.bridge(a);
  const took = ms(t0);
  const share = heardShare(await heardByPair(ctx, 'bridged'), CALLER_HZ);
  await caller.unbridge();
  const text = `bridged in ${took}; the other side heard the phone's ${CALLER_HZ} Hz at share ${r2(share)}`;
  if (share < 0.5) throw new Error(text);
  return text;
}

export async function conference(ctx: E2eContext): Promise<string> {
  const m = need(ctx.ms, 'the media server');
  const caller = need(ctx.caller, 'the caller');
  const { a } = need(ctx.pair, 'the pair of channels');
  const third = await m.createEndpoint();
  ctx.others.push(third);
  const conf: Conference = await m.createConference(`fsmrf-e2e-${process.pid}`);
  try {
    const joined = await Promise.all([caller.join(conf), a.join(conf), third.join(conf)]);
    const members = joined.map((j) => j.memberId);
    const before = heardShare(await heardByPair(ctx, 'conference-before'), CALLER_HZ);
    await conf.mute(String(members[0]));
    // what was in flight when the mute took (the mix's frame, the other side's jitter buffer: a few hundred
    // ms on a loaded machine) is not the mute's result: 2 s recorded (the switch's record takes whole
    // seconds), its first 0.5 s left out
    const heard = await heardByPair(ctx, 'conference-muted', 2);
    const after = heard.subarray(Math.floor(heard.length / 4));
    const afterShare = heardShare(after, CALLER_HZ);
    const text = `members ${members.join(', ')} (size ${await conf.getSize()} with fsmrf's control leg); the phone's ${CALLER_HZ} Hz in the mix at share ${r2(before)}, muted ${r2(afterShare)} (level ${Math.round(level(after))})`;
    if (before < 0.5 || afterShare > 0.1) throw new Error(text);
    return text;
  } finally {
    await conf.destroy();
  }
}

export async function forkAudio(ctx: E2eContext): Promise<string> {
  const caller = need(ctx.caller, 'the caller');
  const sink = (ctx.sink = await ForkSink.start());
  const t0 = performance.now();
  await caller.forkAudioStart({ wsUrl: sink.url, mixType: 'mono', sampling: '8000', metadata: { e2e: true } });
  const samples = await sink.untilSamples(8000, 5000).catch((e: Error) => {
    throw new Error(`a second of the caller's audio at the WebSocket server: ${e.message}`);
  });
  const took = ms(t0);
  await caller.forkAudioStop();
  const share = heardShare(samples, CALLER_HZ);
  const text = `the WebSocket server got metadata ${JSON.stringify(sink.texts[0] ?? null)} and a second of audio in ${took}; the phone's ${CALLER_HZ} Hz at share ${r2(share)}`;
  if (share < 0.5 || sink.texts[0] !== '{"e2e":true}') throw new Error(text);
  return text;
}

export async function destroy(ctx: E2eContext): Promise<string> {
  const m = need(ctx.ms, 'the media server');
  const caller = need(ctx.caller, 'the caller');
  const phone = need(ctx.phone, 'the phone');
  const t0 = performance.now();
  await Promise.all([caller, ...(ctx.pair ? [ctx.pair.a, ctx.pair.b] : []), ...ctx.others].map((e) => e.destroy()));
  // the switch's channel and the phone's call are two dialogs (fsmrf's connectCaller is a back-to-back): the phone's BYE is the application's
  await need(ctx.callerDialog, "the phone's dialog").destroy();
  await phone.event('CALL_CLOSED', 5000);
  const status = await m.api('status');
  const live = /^(\d+) session\(s\) - peak/m.exec(status)?.[1];
  const text = `every channel and the phone's call hung up in ${ms(t0)}; the switch reports ${live ?? '?'} live sessions`;
  if (live !== '0') throw new Error(text);
  return text;
}

/** The steps in order. */
export const STEPS: [string, (ctx: E2eContext) => Promise<string>][] = [
  ['connect', connect],
  ['connectCaller', connectCaller],
  ['play', play],
  ['playCollect', playCollect],
  ['record', record],
  ['bridge', bridge],
  ['conference', conference],
  ['forkAudioStart', forkAudio],
  ['destroy', destroy],
];
