/**
 * The INVITE's header a media server sets a channel's `media_timeout` (ms: RTP inactivity before it hangs
 * up) from, before its answer: media-app's fsmrf backend sends it (media-app/media-server/fsmrf/backend.ts),
 * the switch's mrf dialplan reads it (freeswitch/dialplan/mrf.xml), and so does our event-socket switch's
 * SIP face (esl/sip-face.ts, esl/media-timeout.ts).
 */
export const MEDIA_TIMEOUT_HEADER = 'X-Media-Timeout';
