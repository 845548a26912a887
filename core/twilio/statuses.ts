/**
 * Twilio's Call and Conference statuses: what the Twilio-compatible API shows for our calls and
 * conferences (control-api/twilio/call-json.ts twilioStatus, conferences.ts twilioConferenceStatus)
 * and what its lists filter on (core/repos/twilio-lists.ts).
 */
export const TWILIO_CALL_STATUSES = ['queued', 'ringing', 'in-progress', 'completed', 'busy', 'failed', 'no-answer', 'canceled'] as const;
export type TwilioCallStatus = (typeof TWILIO_CALL_STATUSES)[number];

export const TWILIO_CONFERENCE_STATUSES = ['init', 'in-progress', 'completed'] as const;
export type TwilioConferenceStatus = (typeof TWILIO_CONFERENCE_STATUSES)[number];
