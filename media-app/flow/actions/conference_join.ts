import { SubsystemMissing } from './subsystem-missing';

/** conference_join: its subsystem is not built yet (see SubsystemMissing). */
export class ConferenceJoin extends SubsystemMissing {}
