/**
 * The media port (media-app/media-server/README.md): what media-app's calls use of a media server,
 * as one typed surface. The embedded engine (media-engine's MediaServer) satisfies it unchanged; the
 * fsmrf backend (./fsmrf/) implements the part a FreeSWITCH event socket can do and refuses the rest
 * with MediaBackendUnsupported, never a silent no-op.
 */
import type { Conference, CreateEndpointOptions } from '../../media-engine';
import type { CallEndpoint } from './endpoint';

/** createEndpoint's options: the engine's, `near` naming a leg of the call code (or a conference mix). */
export type CallEndpointOptions = Omit<CreateEndpointOptions, 'near'> & { near?: CallEndpoint | Conference };

/** The media server surface the call core depends on (CallDeps.media). */
export interface MediaPort {
  /** A leg's endpoint (the embedded engine's Endpoint, or the fsmrf backend's FsmrfCallEndpoint). */
  createEndpoint(opts?: CallEndpointOptions): Promise<CallEndpoint>;
  /** The embedded engine's conference mix (`near`: an endpoint whose worker should host it). */
  createConference(name?: string, opts?: { near?: CallEndpoint }): Promise<Conference>;
  getConference(name: string): Conference | undefined;
}

/** Which backend a refusal came from, as its message names it. */
export type MediaBackendName = 'embedded' | 'fsmrf';

/**
 * A feature this media backend cannot give (the AI voice taps, echo cancellation, VAD, … need the
 * embedded engine's own taps). The flow reports it: the action fails with this message as its reason.
 */
export class MediaBackendUnsupported extends Error {
  readonly code = 'media_backend_unsupported';
  constructor(
    readonly backend: MediaBackendName,
    readonly feature: string,
  ) {
    super(`${feature} is not available on the ${backend} media backend (MEDIA_SERVER=freeswitch://…): it needs the embedded engine's own media taps`);
    this.name = 'MediaBackendUnsupported';
  }
}
