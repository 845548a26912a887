/**
 * The ITU-T G.107 E-model, simplified as VoIP monitors commonly do (pure functions, no state):
 *
 *   R = R0 − Is − Id − Ie-eff + A   with G.107's default values: R0 − Is = 93.2, A = 0
 *   Ie-eff = Ie + (95 − Ie) · Ppl / (Ppl / BurstR + Bpl)       (G.107 §7.2, BurstR = 1: random loss)
 *   Id ≈ 0.024·d + 0.11·(d − 177.3)·H(d − 177.3)               (Cole & Rosenbluth's fit of G.107's Id for
 *                                                               echo-free paths, d = one-way delay in ms)
 *   MOS = 1 + 0.035R + R(R − 60)(100 − R)·7·10⁻⁶ for 0 < R < 100 (G.107 Annex B), 1 below, 4.5 above
 *
 * Codec values (Ie, Bpl) on the narrowband scale: G.711 with packet loss concealment Ie 0, Bpl 25.1
 * (ITU-T G.113 Appendix I; our G.711 conceals). G.113 gives no narrowband values for G.722 and Opus:
 * both carry at least G.711's band, so Ie 0, and their concealment (spandsp's, the jitter buffer's)
 * is taken as G.711's (Bpl 25.1), which makes the score neither reward nor punish the wider band.
 */

export type QualityCodec = 'PCMU' | 'PCMA' | 'G722' | 'opus';

export interface CodecImpairment {
  /** equipment impairment factor */
  ie: number;
  /** packet-loss robustness factor */
  bpl: number;
  /** look-ahead of the encoder, ms (added to the packetisation time in the one-way delay) */
  lookaheadMs: number;
}

export const CODEC_IMPAIRMENT: Readonly<Record<QualityCodec, CodecImpairment>> = {
  PCMU: { ie: 0, bpl: 25.1, lookaheadMs: 0 },
  PCMA: { ie: 0, bpl: 25.1, lookaheadMs: 0 },
  G722: { ie: 0, bpl: 25.1, lookaheadMs: 1.5 },
  opus: { ie: 0, bpl: 25.1, lookaheadMs: 6.5 },
};

/** R0 − Is with G.107's default parameter values (the R of a perfect narrowband connection). */
export const R_DEFAULT = 93.2;

/** A codec name as negotiated (any case) → its impairment row; unknown codecs count as G.711. */
export function impairmentOf(codec: string): CodecImpairment {
  const c = codec.toLowerCase();
  if (c === 'g722') return CODEC_IMPAIRMENT.G722;
  if (c === 'opus') return CODEC_IMPAIRMENT.opus;
  return CODEC_IMPAIRMENT.PCMU;
}

/** Effective equipment impairment for `lossPct` % random packet loss (G.107 §7.2, BurstR 1). */
export function ieEff(ie: number, bpl: number, lossPct: number, burstR = 1): number {
  const ppl = Math.min(100, Math.max(0, lossPct));
  return ie + ((95 - ie) * ppl) / (ppl / burstR + bpl);
}

/** Delay impairment for a one-way mouth-to-ear delay in ms. */
export function delayImpairment(oneWayMs: number): number {
  const d = Math.max(0, oneWayMs);
  return 0.024 * d + (d > 177.3 ? 0.11 * (d - 177.3) : 0);
}

/** G.107 Annex B: R → MOS (conversational quality estimate). */
export function mosFromR(r: number): number {
  if (r <= 0) return 1;
  if (r >= 100) return 4.5;
  return 1 + 0.035 * r + r * (r - 60) * (100 - r) * 7e-6;
}

export interface EModelInput {
  codec: string;
  /** packets lost to the listener, % (network loss plus packets discarded as too late) */
  lossPct: number;
  /** one-way mouth-to-ear delay, ms (oneWayDelayMs builds it) */
  oneWayDelayMs: number;
}

export interface EModelResult {
  r: number;
  mos: number;
}

export function emodel(input: EModelInput): EModelResult {
  const c = impairmentOf(input.codec);
  const r = R_DEFAULT - delayImpairment(input.oneWayDelayMs) - ieEff(c.ie, c.bpl, input.lossPct);
  return { r, mos: mosFromR(r) };
}

/**
 * One-way delay as the E-model takes it: half the round trip (network), the receiver's jitter buffer
 * and the codec (packetisation plus look-ahead). `rttMs` null (no RTCP round trip known): network 0.
 */
export function oneWayDelayMs(o: { rttMs: number | null; jitterBufferMs: number; ptimeMs: number; codec: string }): number {
  return (o.rttMs ?? 0) / 2 + o.jitterBufferMs + o.ptimeMs + impairmentOf(o.codec).lookaheadMs;
}
