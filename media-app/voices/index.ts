/**
 * Cloud voices (docs/ai.md "Voices"): one adapter per vendor, and the speaker that plays them into a
 * call with an optional fallback voice.
 */
export { VENDOR_VOICES } from './registry';
export { VoiceError, type VendorVoice, type VoiceRequest, type VoiceErrorCode } from './vendor';
export { Speaker, type VoiceChoice, type SpeakerDeps, type Spoken } from './speaker';
