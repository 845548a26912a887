/**
 * The covered operations, as scenarios a client of the reference would run: prerequisites first
 * (created through the API), then each resource's operations in order. Request bodies follow the
 * reference's request schemas (their required fields filled in). Scenarios run in this order and
 * share one state, so a later file may use what an earlier one kept (flows, tags, queues...).
 */
import type { Step } from '../steps';
import { basic } from './basic';
import { ai } from './ai';
import { lists } from './lists';
import { contacts } from './contacts';
import { comms } from './comms';
import { workspace } from './workspace';
import { accounts } from './accounts';
import { liveAgentCalls, liveCalls, liveRooms } from './live-calls';
import { liveCases } from './live-cases';
import { liveMessages } from './live-messages';
import { apicalls } from './apicalls';

// The caller's own password change runs after everything else: it ends the caller's session (docs/security.md "Sessions").
const { last, ...workspaceFirst } = workspace;
export const scenarios: Record<string, Step[]> = {
  ...basic,
  ...ai,
  ...contacts,
  ...comms,
  ...lists,
  ...workspaceFirst,
  ...accounts,
  ...liveCalls,
  ...liveRooms,
  ...liveCases,
  ...liveAgentCalls,
  ...liveMessages,
  ...apicalls,
  last,
};
