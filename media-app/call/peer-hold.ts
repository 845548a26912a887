/**
 * A party's phone puts the call on hold (RFC 3264 §8.4: its re-INVITE offers a=sendonly or a=inactive,
 * or RFC 2543's c=0.0.0.0) or takes it off (any other offer): the call it is bridged to, on this node,
 * hears the music on hold meanwhile (hold-music.ts; its media state's `peerHeld`), in place of the
 * holder's audio, and the holder again once it resumes. The session answers the re-INVITE itself
 * (sdp-exchange.ts); this only watches it (in-dialog.ts, 'modify') and acts once the answer was a 2xx.
 * The music also stops when the bridge closes or a transfer puts another party in either side's place.
 * A conference member's hold is the room's matter; a cross-node leg's far side is not a call of ours.
 */
import type { EventEmitter } from 'node:events';
import { sdpHoldMode } from '../../media-engine';
import type { SrfRequest, SrfResponse } from '../kit/srf';
import type { Bridge } from './bridge';
import { holdMusicOf } from './hold-music';
import { musicOf } from './media-state';
import { CallSession } from './session';

/** True when the offer holds (sendonly, inactive, c=0.0.0.0), false when it does not, null when it has no audio we can read. */
export function offerHolds(sdp: string): boolean | null {
  const mode = sdpHoldMode(sdp);
  return mode === null ? null : mode === 'holds';
}

/** Per held call: its changes, one at a time in the order the re-INVITEs came. */
const queues = new WeakMap<CallSession, Promise<void>>();
/** Bridges whose end already releases their sides' peer hold. */
const watched = new WeakSet<Bridge>();

/** The 'modify' watcher of a call's dialog (registered by the call-controls subsystem). */
export function watchPeerHold(holder: CallSession, req: SrfRequest, res: SrfResponse): void {
  const holds = req.body ? offerHolds(req.body) : null;
  if (holds === null) return;
  (res as unknown as EventEmitter).once('end', (r: { status?: number }) => {
    if (!r?.status || r.status < 200 || r.status > 299) return;
    const peer = holder.bridge?.other(holder);
    if (!(peer instanceof CallSession) || peer.isEnded) return;
    const next = (queues.get(peer) ?? Promise.resolve()).then(() => setPeerHeld(peer, holder.bridge, holds));
    queues.set(
      peer,
      next.catch((err: Error) => peer.deps.logger.info({ err: err.message, call: peer.id }, 'music on hold for the held party not applied')),
    );
  });
}

async function setPeerHeld(peer: CallSession, bridge: Bridge | null, held: boolean): Promise<void> {
  const m = peer.mediaState;
  if (peer.isEnded || m.flags.peerHeld === held) return;
  if (!held) return m.set({ peerHeld: false });
  // music already playing (its own hold, /moh) goes on; else the customer's or the node's
  const music = musicOf(m.flags) || (await holdMusicOf(peer));
  await m.set({ peerHeld: true, music });
  if (bridge && !watched.has(bridge)) {
    watched.add(bridge);
    const release = () => {
      for (const p of Object.values(bridge.parties)) if (p instanceof CallSession && p.mediaState.flags.peerHeld) void p.mediaState.set({ peerHeld: false }).catch(() => undefined);
    };
    bridge.once('closed', release);
    bridge.on('replaced', (old) => {
      if (old instanceof CallSession && old.mediaState.flags.peerHeld) void old.mediaState.set({ peerHeld: false }).catch(() => undefined);
      release();
    });
  }
}
