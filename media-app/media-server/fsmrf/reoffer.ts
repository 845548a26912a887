/**
 * A re-offer of ours on an fsmrf leg (README.md beside, "Hold on fsmrf"): the switch's SDP as it stands
 * (fsmrf's `local.sdp`: the switch's answer or offer, its address, port and the codecs it negotiated)
 * sent to the party again, its o= session version raised past every one the party was given, as RFC 3264
 * §8 asks of a changed SDP. The party's answer then goes to the switch through fsmrf's `modify` (a
 * re-INVITE with it), which answers it as RFC 3264 §6.1 says: a recvonly answer (the party held with
 * our sendonly) gets sendonly, so the switch keeps sending and no longer receives.
 */

const ORIGIN = /^o=(\S+) (\S+) (\d+) (.*)$/m;

/** The o= line's session version, or null when the SDP has none that reads as a number. */
export function sdpVersion(sdp: string): bigint | null {
  const m = ORIGIN.exec(sdp);
  return m ? BigInt(m[3]!) : null;
}

/** `sdp` with its o= session version set to `version` (the rest of the SDP unchanged). */
export function withVersion(sdp: string, version: bigint): string {
  if (!ORIGIN.test(sdp)) throw new Error('the SDP has no o= line');
  return sdp.replace(ORIGIN, (_all, user: string, session: string, _v: string, rest: string) => `o=${user} ${session} ${version} ${rest}`);
}

/** The highest o= version the party was given on one leg, and the re-offers made past it. */
export class PartyVersions {
  private last = -1n;

  /** An SDP of the switch the party may be given (an answer, the first offer): its version is counted. */
  saw(sdp: string | null | undefined): void {
    const v = sdp ? sdpVersion(sdp) : null;
    if (v !== null && v > this.last) this.last = v;
  }

  /** The switch's SDP as a re-offer: its version past the switch's own and every one the party was given. */
  reoffer(switchSdp: string | null | undefined): string {
    if (!switchSdp) throw new Error('the switch has no SDP for this leg yet (nothing negotiated to re-offer)');
    const own = sdpVersion(switchSdp);
    if (own === null) throw new Error("the switch's SDP has no o= line");
    const next = (own > this.last ? own : this.last) + 1n;
    this.last = next;
    return withVersion(switchSdp, next);
  }
}
