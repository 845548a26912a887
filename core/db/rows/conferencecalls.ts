/** Row types of core/repos/conferencecalls.ts's tables, declared apart so core/db/tables.ts imports no repository. */
import type { ConferencecallStatus } from '../../conferences/model';

export interface ConferencecallRow {
  id: string;
  customer_id: string;
  activeflow_id: string;
  conference_id: string;
  reference_type: 'call';
  reference_id: string;
  status: ConferencecallStatus;
  /** The room ends when this participant leaves (endConferenceOnExit). */
  end_on_exit: boolean;
  /** The Participant's Label (Twilio), '' when none. */
  label: string;
  /** false: waits (out of the mix) until the room has started (startConferenceOnEnter="false"). */
  start_on_enter: boolean;
  /** Twilio's beep for this participant: '', 'true', 'false', 'onEnter', 'onExit'. */
  beep: string;
  /** The call this participant coaches (only that participant hears it); null: none. */
  coach_call_id: string | null;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
