/**
 * The figures of a round of scripts/bench/ai/turn-taking.ts (what it measured, per call and per turn) and
 * their lines in the report.
 */

export const pct = (xs: number[], p: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
};

/** One round's figures: latencies in ms, counts of turns, the load and CPU beside them. */
export interface Figures {
  calls: number;
  latency: number[];
  /** the same, of the turns after the first (every call placed and set up: no call set-ups beside them) */
  laterLatency: number[];
  /** caller stops → agent audio less the stand-ins' own stages (LLM first token, first synthesis): what the platform answers for, its wait included */
  lessVendors: number[];
  own: number[];
  /** caller stops → agent audio at the phone minus the stand-ins' times and the end-of-turn wait (as the platform measured them) */
  phoneShare: number[];
  stopDelay: number[];
  echoTurns: number;
  selfInterruptions: number;
  backchannels: number;
  backchannelCuts: number;
  stops: number;
  stopCuts: number;
  foreignWords: number;
  rtp: { received: number; lost: number };
  load: [number, number];
  /** calls sipp did not end cleanly, and why */
  failures: string[];
  /** the platform's stages of the answered turns (aimessage metadata.latency), ms */
  stages: Record<'end_of_turn_wait_ms' | 'llm_first_token_ms' | 'tts_first_byte_ms', number[]>;
  /** this process's event-loop delay p99 (the phones and stand-ins), ms */
  benchLoopP99: number;
  /** each turn's question through the stages: said, recognised (a caller aimessage), answered by the LLM (the reply's aimessage), its first audio sent (first_rtp_ms), heard at the phone */
  funnel: { said: number; recognised: number; replied: number; sent: number; heard: number };
  /** the questions not recognised: how many had a pause of ≥ 100 ms in the platform's packets at the phone, and how many a stall of ≥ 60 ms of this process's event loop while said */
  unrecognised: { count: number; packetPause: number; phoneStall: number };
  /** CPU used during the round, % of one core: the platform process, this process (the phones), the stand-ins' process */
  cpu: { platform: number; bench: number; standIns: number };
}

export const fmt = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : 'n/a');

/** The round's figures as the report's lines (`turns`: each call's turns). */
export function figureLines(f: Figures, turns: number): string[] {
  return [
    `- caller stops → agent audio: p50 ${fmt(pct(f.latency, 50))} ms, p95 ${fmt(pct(f.latency, 95))} ms (${f.latency.length} of ${f.calls * turns} turns answered)`,
    `- the same after each call's first turn (a call's first reply is its first of the LLM and the voice: connections made): p50 ${fmt(pct(f.laterLatency, 50))} ms, p95 ${fmt(pct(f.laterLatency, 95))} ms (${f.laterLatency.length} turns)`,
    `- the same less the stand-ins' own stages (LLM first token, first synthesis: the vendors' time, which grows as they share the cores): p50 ${fmt(pct(f.lessVendors, 50))} ms, p95 ${fmt(pct(f.lessVendors, 95))} ms`,
    `- platform's own share (first_rtp − end-of-turn wait − LLM first token − first sentence synthesis): p50 ${fmt(pct(f.own, 50))} ms, p99 ${fmt(pct(f.own, 99))} ms (${f.own.length} replies)`,
    `- the same share seen from the phone (caller stops → agent audio − the same three; adds the caller's audio's way in: RTP, the engine's phase, the hop to the API thread): p50 ${fmt(pct(f.phoneShare, 50))} ms, p99 ${fmt(pct(f.phoneShare, 99))} ms`,
    `- the platform's stages, p50/p95 ms: end-of-turn wait ${fmt(pct(f.stages.end_of_turn_wait_ms, 50))}/${fmt(pct(f.stages.end_of_turn_wait_ms, 95))}, LLM first token ${fmt(pct(f.stages.llm_first_token_ms, 50))}/${fmt(pct(f.stages.llm_first_token_ms, 95))}, first synthesis ${fmt(pct(f.stages.tts_first_byte_ms, 50))}/${fmt(pct(f.stages.tts_first_byte_ms, 95))}`,
    `- self-interruptions: ${f.selfInterruptions} of ${f.echoTurns} turns without an interjection cut; caller turns with words never said: ${f.foreignWords}`,
    `- backchannels that cut the reply: ${f.backchannelCuts} of ${f.backchannels} (${fmt((100 * f.backchannelCuts) / Math.max(1, f.backchannels))} %)`,
    `- stop words that cut the reply: ${f.stopCuts} of ${f.stops} (${fmt((100 * f.stopCuts) / Math.max(1, f.stops))} %)`,
    `- end of the stop word → agent's last audio: p50 ${fmt(pct(f.stopDelay, 50))} ms, p95 ${fmt(pct(f.stopDelay, 95))} ms`,
    `- RTP to the phones: ${f.rtp.lost} lost of ${f.rtp.lost + f.rtp.received} (${((100 * f.rtp.lost) / Math.max(1, f.rtp.lost + f.rtp.received)).toFixed(2)} %)`,
    `- calls that failed: ${f.failures.length} of ${f.calls}${f.failures.length ? ` (first: ${f.failures[0]!.replace(/\s+/g, ' ').slice(0, 160)})` : ''}`,
    `- turns through the stages: ${f.funnel.said} questions said, ${f.funnel.recognised} recognised (caller aimessage), ${f.funnel.replied} answered by the LLM (reply aimessage), ${f.funnel.sent} with first audio sent (first_rtp_ms), ${f.funnel.heard} heard at the phone`,
    `- questions not recognised: ${f.unrecognised.count}; of them ${f.unrecognised.packetPause} with a pause of ≥ 100 ms in the platform's packets at the phone while it spoke, ${f.unrecognised.phoneStall} with the phones' event loop stalled ≥ 60 ms meanwhile`,
    `- CPU during the round (% of one core): platform process ${f.cpu.platform.toFixed(0)} %, the phones' process ${f.cpu.bench.toFixed(0)} %, the stand-ins' process ${f.cpu.standIns.toFixed(0)} %`,
    `- 1-min load during the round: ${f.load[0].toFixed(1)}–${f.load[1].toFixed(1)}; the phones' event-loop delay p99 ${f.benchLoopP99.toFixed(0)} ms (the platform and the stand-ins run in processes of their own)`,
  ];
}
