import { SubsystemMissing } from './subsystem-missing';

/** message_send: its subsystem is not built yet (see SubsystemMissing). */
export class MessageSend extends SubsystemMissing {}
