import { Echo } from './echo';

/** Echo through the media stream path; DTMF is still received. */
export class StreamEcho extends Echo {
  protected override readonly stream: boolean = true;
}
