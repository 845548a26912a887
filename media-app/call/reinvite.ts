/**
 * A re-INVITE of ours on an answered call (RFC 3261 §14, RFC 3264 §8.4): the endpoint makes a fresh
 * offer, its direction is set (sendonly or inactive to hold the far end, sendrecv to resume), the
 * dialog carries it, and the far end's answer is applied to the endpoint, which then sends and
 * receives only what the negotiated direction allows. Everything goes through the call's in-dialog
 * path (CallDialog.modify), so a relayed leg takes the same way.
 */
import { EventEmitter } from 'node:events';
import type { CallSession } from './session';

export type OfferDirection = 'sendrecv' | 'sendonly' | 'inactive';

const DIRECTION_LINE = /^a=(sendrecv|sendonly|recvonly|inactive)\r?$/;

/** The SDP with `direction` on its audio stream (session-level direction lines removed). */
export function withDirection(sdp: string, direction: OfferDirection): string {
  const eol = sdp.includes('\r\n') ? '\r\n' : '\n';
  const lines = sdp.split(/\r?\n/);
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  const out: string[] = [];
  let inAudio = false;
  let placed = false;
  for (const line of lines) {
    if (line.startsWith('m=')) {
      if (inAudio && !placed) out.push(`a=${direction}`);
      inAudio = line.startsWith('m=audio');
      placed = false;
    }
    if (DIRECTION_LINE.test(line)) {
      if (inAudio && !placed) {
        out.push(`a=${direction}`);
        placed = true;
      }
      continue;
    }
    out.push(line);
  }
  if (inAudio && !placed) out.push(`a=${direction}`);
  return out.join(eol) + eol;
}

/**
 * Sends the re-INVITE and applies the answer. False when the call has no SIP dialog to carry one
 * (an internal call: both ends are endpoints of this platform); the caller acts on the media then.
 * A refused re-INVITE (e.g. 488, 491) leaves the media as negotiated before and rejects.
 */
export async function reinvite(call: CallSession, direction: OfferDirection): Promise<boolean> {
  const dialog = call.dialog;
  const ep = call.endpoint;
  if (!dialog || !ep || call.isEnded) throw new Error('the call is not up');
  if (!(dialog instanceof EventEmitter)) return false;
  const offer = withDirection(await ep.offer(), direction);
  let answer: string;
  try {
    answer = await dialog.modify(offer);
  } catch (err) {
    // our offer is void: the endpoint goes back to the last description the far end gave
    if (!ep.destroyed && dialog.remote.sdp) await ep.modify(dialog.remote.sdp).catch(() => undefined);
    throw err;
  }
  await ep.modify(answer);
  return true;
}
