/**
 * Opening contact cases from flows (the case_create action). The case takes the activeflow's
 * reference (a call or a conversation), its remote party as `peer` and our side as `local`; an
 * optional first note is written by the system. Flow actions reach it as `ctx.services.cases`
 * (media-app/workspace/subsystem.ts).
 */
import type { Db } from '../db/knex';
import { callsRepo } from '../repos/calls';
import { conversationsRepo } from '../repos/conversations';
import { contactCasesRepo, type CaseAddress, type ContactCaseRow } from '../repos/contact-cases';

export interface OpenCase {
  customerId: string;
  activeflowId: string;
  referenceType: string;
  referenceId: string;
  name?: string;
  detail?: string;
  note?: string;
}

export interface CaseService {
  open(input: OpenCase): Promise<ContactCaseRow>;
}

function addr(a: unknown): CaseAddress | undefined {
  return a && typeof a === 'object' && typeof (a as CaseAddress).type === 'string' ? (a as CaseAddress) : undefined;
}

/** The remote party and our side of a reference, when it is a call or a conversation we know. */
async function endpointsOf(db: Db, customerId: string, type: string, id: string): Promise<{ peer?: CaseAddress; local?: CaseAddress }> {
  if (type === 'call') {
    const c = await callsRepo(db).getOwned(customerId, id);
    if (!c) return {};
    return c.direction === 'incoming' ? { peer: addr(c.source), local: addr(c.destination) } : { peer: addr(c.destination), local: addr(c.source) };
  }
  if (type === 'conversation') {
    const c = await conversationsRepo(db).getOwned(customerId, id);
    if (!c) return {};
    return { peer: addr(c.peer), local: addr(c.self) };
  }
  return {};
}

export function caseService(db: Db): CaseService {
  return {
    async open(input) {
      const ends = await endpointsOf(db, input.customerId, input.referenceType, input.referenceId);
      return db.transaction(async (trx) => {
        const repo = contactCasesRepo(trx);
        const c = await repo.create({
          customer_id: input.customerId,
          reference_type: input.referenceType,
          reference_id: input.referenceId,
          activeflow_id: input.activeflowId,
          ...ends,
          name: input.name,
          detail: input.detail,
        });
        if (input.note) await repo.addNote(c, { type: 'system', id: null }, input.note);
        return c;
      });
    },
  };
}
