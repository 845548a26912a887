// Waits on a call's rows until the call has hung up and its flow has ended: the last thing most call
// suites check (hangup reason and side, the flow's variables, executed actions, end reason or error).
import { callsRepo } from '../core/repos/calls';
import { testDb } from './db';
import { until } from './media-app/harness';

/** The call row once its status is `hangup` (`timeoutMs`, 10 s unless told). */
export async function hungUpCall(callId: string, timeoutMs = 10_000, what = 'hangup') {
  const db = await testDb();
  return until(
    async () => {
      const c = await callsRepo(db).get(callId);
      return c?.status === 'hangup' ? c : null;
    },
    timeoutMs,
    what,
  );
}

/** The customer's one call row, once it is the only one and hung up (`timeoutMs`, 10 s unless told). */
export async function onlyCallHungUp(customerId: string, timeoutMs = 10_000) {
  const db = await testDb();
  return until(
    async () => {
      const rows = await db('calls').where({ customer_id: customerId });
      return rows.length === 1 && rows[0]!.status === 'hangup' ? rows[0]! : null;
    },
    timeoutMs,
    'call row in hangup',
  );
}

/** The customer's two legs, [the incoming master, the outgoing leg], once both hung up (`timeoutMs`, 10 s unless told). */
export async function bothLegsHungUp(customerId: string, timeoutMs = 10_000) {
  const db = await testDb();
  const rows = await until(
    async () => {
      const r = await db('calls').where({ customer_id: customerId }).orderBy('tm_create');
      return r.length === 2 && r.every((c) => c.status === 'hangup') ? r : null;
    },
    timeoutMs,
    'both legs hung up',
  );
  return rows[0]!.direction === 'incoming' ? [rows[0]!, rows[1]!] : [rows[1]!, rows[0]!];
}

/** The activeflow once its status is `ended` (`timeoutMs`, 10 s unless told). */
export async function endedActiveflow(activeflowId: string, timeoutMs = 10_000) {
  const db = await testDb();
  return until(
    async () => {
      const a = await db('activeflows').where({ id: activeflowId }).first();
      return a?.status === 'ended' ? a : null;
    },
    timeoutMs,
    'activeflow ended',
  );
}

/** The activeflow of the call `callId` once it ended (20 s: the call row may not be there yet). */
export async function endedFlowOfCall(callId: string) {
  const db = await testDb();
  return until(
    async () => {
      const c = await db('calls').where({ id: callId }).first();
      const a = c && (await db('activeflows').where({ id: c.activeflow_id }).first());
      return a?.status === 'ended' ? a : null;
    },
    20_000,
    'activeflow ended',
  );
}

/** The customer's (first) hung-up call once there is one (`callMs`), and its activeflow once ended (`flowMs`). */
export async function hungUpCallFlow(customerId: string, callMs = 10_000, flowMs = 10_000) {
  const db = await testDb();
  const call = await until(async () => (await db('calls').where({ customer_id: customerId, status: 'hangup' }))[0], callMs, 'call hangup');
  return { call, af: await endedActiveflow(call.activeflow_id, flowMs) };
}
