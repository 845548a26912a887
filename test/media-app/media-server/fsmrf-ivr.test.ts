// The IVR end to end (ivr-suite.ts: talk, digits, branch, an HTTP prompt, a recording, hangup) with
// media-app's calls on the fsmrf backend: sipp -> sip-server -> media-app, whose legs are channels of
// our switch (esl/) driven through drachtio-fsmrf over its event socket (MEDIA_SERVER=freeswitch://…).
import { ivrSuite } from '../ivr-suite';

ivrSuite('fsmrf', '+8991000017');
