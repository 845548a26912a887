import { SubsystemMissing } from './subsystem-missing';

/** external_media_start: its subsystem is not built yet (see SubsystemMissing). */
export class ExternalMediaStart extends SubsystemMissing {}
