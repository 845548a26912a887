/**
 * Twilio-style SIDs for this platform's ids: two letters and the UUID's 32 hex digits, lower case.
 * `AC` a customer (AccountSid), `CA` a call (CallSid), `RE` a recording, `CF` a conference, `QU` a queue,
 * `PN` a number, `SK` an access key (API key SID), `TR` a transcription (a Transcribe), `VX` a ConversationRelay session, `NO` an alert (Alerts, Notifications). A SID maps back to exactly one UUID; anything else is null.
 */
export const SID_PREFIXES = ['AC', 'CA', 'RE', 'CF', 'QU', 'PN', 'SK', 'MZ', 'TR', 'VX', 'NO'] as const;
export type SidPrefix = (typeof SID_PREFIXES)[number];

const HEX32 = /^[0-9a-f]{32}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `toSid('CA', '2f1c…-…')` → `CA2f1c…`; throws on a value that is not a UUID (a bug, not input). */
export function toSid(prefix: SidPrefix, uuid: string): string {
  const u = uuid.toLowerCase();
  if (!UUID.test(u)) throw new Error(`toSid: not a UUID: ${uuid}`);
  return prefix + u.replace(/-/g, '');
}

/** The UUID a SID of that prefix names, or null when the text is not such a SID (customer input). */
export function fromSid(prefix: SidPrefix, sid: unknown): string | null {
  if (typeof sid !== 'string' || sid.length !== 34 || !sid.startsWith(prefix)) return null;
  const hex = sid.slice(2).toLowerCase();
  if (!HEX32.test(hex)) return null;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export const accountSid = (customerId: string): string => toSid('AC', customerId);
export const callSid = (callId: string): string => toSid('CA', callId);

/**
 * Twilio's RecordingUrl: the Recording resource without an extension, under the platform's public
 * URL (`.wav`, `.mp3` and `.json` are its media and metadata; docs/twilio.md "Recording media").
 */
export const recordingUrl = (publicUrl: string, customerId: string, recordingId: string): string =>
  `${publicUrl.replace(/\/$/, '')}/2010-04-01/Accounts/${accountSid(customerId)}/Recordings/${toSid('RE', recordingId)}`;
