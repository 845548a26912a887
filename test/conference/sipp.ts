// sipp UAC scenarios for conference tests: the callers' audio is an RtpParty (its port in the SDP).
import { uacWaitsForBye } from '../../testkit/media-app/harness';

export { uacWaitsForBye };

/** INVITE, 200, ACK, then after `pauseMs` our own BYE (the party leaves by hanging up). */
export function uacHangsUpAfter(ruri: string, fromUser: string, rtpPort: number, pauseMs: number): string {
  return uacWaitsForBye(ruri, fromUser, rtpPort, { hangUpAfterMs: pauseMs });
}
