import { FlowTask, type Outcome } from './base';

/** Ends the flow. */
export class Stop extends FlowTask {
  async exec(): Promise<Outcome> {
    return { kind: 'end', reason: 'stop_action' };
  }
}
