/**
 * The media-app side of the agent workspace: fills `services.cases` so the case_create action can
 * open contact cases on this node.
 */
import type { Subsystem } from '../../media-app/subsystem';
import { caseService } from './cases';

export const subsystem: Subsystem = {
  name: 'workspace',
  async start(ctx) {
    ctx.services.cases = caseService(ctx.deps.db);
    return {
      async stop() {
        delete ctx.services.cases;
      },
    };
  },
};
