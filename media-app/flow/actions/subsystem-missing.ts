import { ACTION_SPECS } from '../../../core/flow';
import { FlowTask, type Outcome } from './base';

/**
 * Actions whose subsystem is not running in this process (the flow simulator, a test that starts
 * without it; every media-app node runs them all). They end the activeflow with an error naming what
 * is missing, never pretending to have run.
 */
export class SubsystemMissing extends FlowTask {
  async exec(): Promise<Outcome> {
    const subsystem = ACTION_SPECS[this.action.type].subsystem ?? 'required';
    return { kind: 'fail', message: `action ${this.action.type} needs the ${subsystem} subsystem, which is not available on this server yet` };
  }
}
