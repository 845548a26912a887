/**
 * The caller's leg cancels the agent's echo while ai_talk runs (docs/ai.md "Turn-taking"): libspeexdsp's
 * canceller in the media worker (CallEndpoint.echoCancel), before the VAD, the recogniser and the echo guard
 * hear the caller.
 */
import type { EchoCancelOptions } from '../../media-engine';
import type { CallEndpoint } from '../media-server/endpoint';

/**
 * A 500 ms tail (a speakerphone's 300 ms of echo plus the network, jitter buffer and tick between a frame
 * sent and its echo received: about 130 ms on loopback); no residual suppressor (it cost the recogniser
 * words said over the echo).
 */
export const AEC_OPTIONS: EchoCancelOptions = { tailMs: 500, residualDb: 0 };
let warned = false;

/** On for the session. Without the native module (scripts/build-native.sh) the guard works alone, said once per process. */
export async function startEchoCancel(ep: CallEndpoint): Promise<void> {
  await ep.echoCancel(AEC_OPTIONS).catch((e: Error & { code?: string }) => {
    if (e.code !== 'ERR_CODEC_UNAVAILABLE') throw e;
    if (!warned) process.emitWarning(`ai_talk: no echo cancellation, the echo guard alone (${e.message})`, 'EchoCancellationWarning');
    warned = true;
  });
}

/** Off when the session ends (the call may go on to a bridge or a conference). */
export function stopEchoCancel(ep: CallEndpoint): void {
  if (!ep.destroyed) void ep.echoCancel(null).catch(() => undefined);
}
