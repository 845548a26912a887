import { SubsystemMissing } from './subsystem-missing';

/** transcribe_start: its subsystem is not built yet (see SubsystemMissing). */
export class TranscribeStart extends SubsystemMissing {}
