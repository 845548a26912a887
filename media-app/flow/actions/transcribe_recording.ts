import { SubsystemMissing } from './subsystem-missing';

/** transcribe_recording: its subsystem is not built yet (see SubsystemMissing). */
export class TranscribeRecording extends SubsystemMissing {}
