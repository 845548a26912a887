/**
 * Conferences on a media-app node. For other subsystems (the conference media_stream WebSocket):
 *
 *   const conf = ctx.services.conferences?.mixOf(conferenceId);   // undefined: not hosted on this node
 *   const fork = await conf.forkAudioStart({ onFrame(frame) { ... } }); // 160-sample 8 kHz frames of the whole mix
 *   fork.inject(samples);   // every participant hears it
 *   await fork.stop();
 *
 * Look the service up when a stream starts (subsystems start in list order). The node hosting a
 * conference is in Redis (core/conferences/commands.ts conferenceHost); send work there.
 */
export { subsystem } from './subsystem';
export { ConferenceHost, ConferenceError } from './host';
export type { ConferenceService, JoinRequest } from './host';
export type { LeaveReason } from './room';
export { conferenceHost, conferenceNodeKey } from '../../core/conferences/commands';
