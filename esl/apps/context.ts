/**
 * What a channel application gets of its channel (sip-face.ts runs one at a time, in the order
 * sendmsg asked): the channel (variables, engine endpoint), its events, and the signal that the channel
 * hung up while the application ran (the application then stops waiting, its timers cancelled).
 */
import type { DtmfEvent } from '../../media-engine';
import type { Channel } from '../channel';
import type { ConferenceRooms } from '../conference/rooms';
import type { EventName } from '../events';

export interface AppContext {
  readonly channel: Channel;
  /** a channel event (the channel's headers, then `own`; a CUSTOM one with its subclass) to every connection subscribed to it */
  fire(name: EventName, own?: [string, string][], opts?: { subclass?: string; body?: string }): void;
  /** aborted when the channel hangs up */
  readonly signal: AbortSignal;
  /** a failure of ours after the application completed (the engine's): reported (EslServer's 'failed') */
  failed(err: Error): void;
  /** the switch's conferences (the `conference` application) */
  readonly conferences?: ConferenceRooms;
}

/**
 * A channel application: resolves with its Application-Response (FreeSWITCH's
 * `current_application_response`, `_none_` when the application sets none).
 */
export type App = (ctx: AppContext, data: string) => Promise<string>;

/**
 * The channel's digits while `fn` listens (an application reading them): returns the release. Digits
 * that come while no application listens are not kept: FreeSWITCH's outbound socket parks the
 * channel between applications and the park loop takes and drops them (switch_ivr_park).
 */
export function onDigits(ctx: AppContext, fn: (e: DtmfEvent) => void): () => void {
  const ep = ctx.channel.endpoint;
  ep.on('dtmf', fn);
  return () => ep.off('dtmf', fn);
}

/**
 * An application refusing its data the way FreeSWITCH does by hanging the channel up
 * (DESTINATION_OUT_OF_ORDER): a file it cannot open for writing, speech without an engine. Not a bug.
 */
export class AppRefused extends Error {}

/** A variable of the channel, or undefined. */
export const varOf = (ctx: AppContext, name: string): string | undefined => ctx.channel.variables.get(name);

/** Sets a channel variable; null or '' unsets it (switch_channel_set_variable: an empty value deletes). */
export function setVar(ctx: AppContext, name: string, value: string | null): void {
  if (value === null || value === '') ctx.channel.variables.delete(name);
  else ctx.channel.variables.set(name, value);
}
