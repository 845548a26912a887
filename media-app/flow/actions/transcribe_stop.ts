import { SubsystemMissing } from './subsystem-missing';

/** transcribe_stop: its subsystem is not built yet (see SubsystemMissing). */
export class TranscribeStop extends SubsystemMissing {}
