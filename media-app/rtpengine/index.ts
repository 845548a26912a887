/** Media through rtpengine (its ng protocol) for legs whose SDP needs SRTP, DTLS or ICE. */
export { MediaRelay, type RelayStatus } from './relay';
export { RelayLeg, type RelayLegEvents } from './relay-leg';
export { RtpengineClient, NgError, type RtpengineHealth, type RtpengineClientEvents } from './client';
export { sdpNeeds, satisfies, farProfileFor, type FarProfile, type SdpNeeds } from './sdp';
