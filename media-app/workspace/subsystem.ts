/**
 * The media-app side of the agent workspace: fills `services.cases` so the case_create action can
 * open contact cases on this node (core/workspace/cases.ts).
 */
import type { Subsystem } from '../subsystem';
import { caseService, type CaseService } from '../../core/workspace/cases';

declare module '../flow/services' {
  interface FlowServices {
    cases?: CaseService;
  }
}

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
