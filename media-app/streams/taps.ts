/**
 * Where a stream's audio comes from on this node: a media-engine fork of a live call's endpoint
 * (both parties mixed: what the caller says plus what the caller hears) or of a conference's whole
 * mix. Audio sent back is injected: the caller hears it, or every participant does.
 */
import type { Conference, ForkMix } from '../../media-engine';
import type { CallEndpoint } from '../media-server/endpoint';
import type { MediaFork } from '../media-server/tap';
import type { CallDeps } from '../call/deps';
import type { CallSession } from '../call/session';
import type { StreamTarget } from '../../core/streams/relay';
import { traceFork, type MediaSpan } from '../kit/media-trace';
import { hasOwnMix } from '../media-server/conference';
import { pcm16ToSamples, samplesToPcm16 } from '../../core/audio/pcm16';

export interface AudioTap {
  /** Plays PCM (8 kHz 16-bit LE mono, any length) into the call or conference. */
  inject(pcm: Buffer): void;
  stop(): Promise<void>;
  /** Drops the injected audio not played yet. */
  clear(): void;
  /** Resolves with a reason when the source goes away (hangup, conference destroyed). */
  readonly ended: Promise<string>;
}

export class TapError extends Error {
  constructor(
    /** unsupported: the node's media backend cannot give it (the relay's RELAY_CLOSE.unsupported) */
    readonly code: 'notFound' | 'notReady' | 'unsupported',
    message: string,
  ) {
    super(message);
  }
}

/** `span`: the tap's `media fork`, ended when it stops or its source goes away. */
function wrap(fork: MediaFork, source: Promise<string>, cleanup: () => void, span: MediaSpan): AudioTap {
  let stopped = false;
  // a fork over a connection of its own (the fsmrf backend's) may end by itself: the tap ends with it
  const ended = fork.ended ? Promise.race([source, fork.ended.then((why) => (why === 'stopped' ? source : `media fork ended: ${why}`))]) : source;
  void ended.then((why) => span.end(why));
  return {
    ended,
    inject(pcm) {
      if (!stopped && pcm.length >= 2) fork.inject(pcm16ToSamples(pcm));
    },
    clear() {
      if (!stopped) void fork.clearInjected().catch(() => undefined);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      cleanup();
      span.end('stopped');
      await fork.stop().catch(() => undefined);
    },
  };
}

/** `mix`: both parties mixed (default), or 'in', what the caller says (Twilio streams). */
export async function openCallTap(deps: Pick<CallDeps, 'calls'>, callId: string, onFrame: (pcm: Buffer) => void, mix: ForkMix = 'both'): Promise<AudioTap> {
  const call = deps.calls.get(callId) as CallSession | undefined;
  if (!call || call.isEnded) throw new TapError('notFound', 'the call is not live on this node');
  const ep: CallEndpoint | null = call.endpoint;
  if (!ep || ep.destroyed || call.status !== 'progressing') throw new TapError('notReady', `the call is ${call.status}, not progressing`);
  let onGone: () => void = () => undefined;
  const ended = new Promise<string>((resolve) => {
    onGone = () => resolve('call ended');
    ep.once('destroy', onGone);
    void call.done.then(onGone);
  });
  const span = traceFork('call', callId, mix);
  // a fork hands over frames of the tap's own (cloned from the worker; fsmrf: made per frame): wrapped, not copied
  const fork = await ep.forkAudioStart({ mix, onFrame: (f) => onFrame(samplesToPcm16(f)) }).catch((err: unknown) => {
    span.fail(err);
    throw err;
  });
  return wrap(fork, ended, () => ep.off('destroy', onGone), span);
}

/**
 * Why a conference's stream is refused on a backend that mixes rooms itself (the fsmrf backend: the
 * switch's conference). The engine's mixer gives the whole mix's frames and takes audio into it; a
 * switch's room gives neither: mod_audio_fork taps a channel, and its playback goes into that channel's
 * outgoing audio, never into a room's input (media-app/media-server/README.md, "Conferences"). At most
 * 123 bytes: it is the relay's close reason.
 */
export const CONFERENCE_STREAM_UNSUPPORTED = "a media stream of a conference is not available on the fsmrf media backend (the engine's mixer only)";

/** The conference's mixer on this node: media-engine names it by the conference id. */
export async function openConferenceTap(deps: Pick<CallDeps, 'media'>, conferenceId: string, onFrame: (pcm: Buffer) => void): Promise<AudioTap> {
  if (hasOwnMix(deps.media)) throw new TapError('unsupported', CONFERENCE_STREAM_UNSUPPORTED);
  const conf: Conference | undefined = deps.media.getConference(conferenceId);
  if (!conf || conf.destroyed) throw new TapError('notFound', 'the conference has no mixer on this node');
  let onGone: () => void = () => undefined;
  const ended = new Promise<string>((resolve) => {
    onGone = () => resolve('conference ended');
    conf.once('destroy', onGone);
  });
  const span = traceFork('conference', conferenceId, 'both');
  const fork = await conf.forkAudioStart({ onFrame: (f) => onFrame(samplesToPcm16(f)) }).catch((err: unknown) => {
    span.fail(err);
    throw err;
  });
  return wrap(fork, ended, () => conf.off('destroy', onGone), span);
}

export function openTap(deps: Pick<CallDeps, 'calls' | 'media'>, target: StreamTarget, id: string, onFrame: (pcm: Buffer) => void, mix: ForkMix = 'both'): Promise<AudioTap> {
  return target === 'call' ? openCallTap(deps, id, onFrame, mix) : openConferenceTap(deps, id, onFrame);
}
