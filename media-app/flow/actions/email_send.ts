import { SubsystemMissing } from './subsystem-missing';

/** email_send: its subsystem is not built yet (see SubsystemMissing). */
export class EmailSend extends SubsystemMissing {}
