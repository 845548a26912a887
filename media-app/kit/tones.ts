/**
 * The tones media-app plays as FreeSWITCH's teletone scripts (mod_tone_stream, libteletone), which both
 * media backends play alike: the engine reads them (media-engine/dsp/teletone.ts) and so does a
 * FreeSWITCH, which would not know the engine's own names (`tone_stream://beep`, `ringback`).
 */

/** The beep before a recording or a voicemail: 1000 Hz for 250 ms (the engine's beep()). */
export const BEEP_TONE = 'tone_stream://%(250,0,1000)';

/** US ringback: 440 + 480 Hz, 2 s on, 4 s off, until stopped (the engine's ringback('us'), FreeSWITCH's us-ring). */
export const RINGBACK_TONE = 'tone_stream://%(2000,4000,440,480);loops=-1';
