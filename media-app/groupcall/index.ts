/**
 * The groupcall subsystem: rings groupcalls (groupcall.start from control-api's POST /groupcalls and
 * POST /calls), hangs them up (groupcall.hangup), and lends its runner to transfers on the same node.
 */
import '../../core/groupcalls/commands';
import { groupcallJson, groupcallsRepo } from '../../core/repos/groupcalls';
import { publishResourceEvent } from '../../core/events/catalogue';
import type { CallFactory } from '../call/factory';
import type { Subsystem } from '../subsystem';
import { GroupcallRunner } from './runner';

const runners = new WeakMap<CallFactory, GroupcallRunner>();

/** The node's runner (one per call factory). */
export function runnerFor(factory: CallFactory): GroupcallRunner {
  let r = runners.get(factory);
  if (!r) runners.set(factory, (r = new GroupcallRunner(factory)));
  return r;
}

export const subsystem: Subsystem = {
  name: 'groupcalls',
  async start(ctx) {
    const runner = runnerFor(ctx.factory);
    ctx.commands.on('groupcall.start', (c) => runner.startCommand(c.groupcallId));
    ctx.commands.on('groupcall.hangup', async (c) => {
      const live = runner.get(c.groupcallId);
      if (live) return void (await live.hangup());
      // not ringing here (any more): make sure the row says so
      const repo = groupcallsRepo(ctx.deps.db);
      const t = await repo.transition(c.groupcallId, 'hangup');
      if (t.changed && t.row) await publishResourceEvent(ctx.deps.events, 'groupcall_hangup', groupcallJson(t.row) as never).catch(() => undefined);
    });
    return { stop: () => runner.hangupAll() };
  },
};
