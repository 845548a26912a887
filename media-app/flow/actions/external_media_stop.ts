import { SubsystemMissing } from './subsystem-missing';

/** external_media_stop: its subsystem is not built yet (see SubsystemMissing). */
export class ExternalMediaStop extends SubsystemMissing {}
