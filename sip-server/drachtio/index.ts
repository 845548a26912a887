/** The drachtio layer in one call: protocol server + engine on top of a started SipStack. */
import type { SipStack } from '../stack';
import type { Logger } from './context';
import { DrachtioEngine } from './engine';
import type { OutboundTarget } from './outbound';
import { DrachtioServer } from './server';
import { StackPort } from './stack-adapter';

export { DrachtioServer } from './server';
export { DrachtioEngine } from './engine';
export { parseOutboundTargets } from './outbound';
export type { OutboundTarget } from './outbound';

export interface DrachtioOptions {
  host: string;
  port: number;
  secret: string;
  outboundTargets?: OutboundTarget[];
  userAgent?: string;
  optionsAutoRespondUserAgent?: string;
  /** drachtio-server's behaviour: an application's dialogs outlive its connection (default: hung up) */
  keepOrphanedDialogs?: boolean;
  logger?: Logger;
}

export interface RunningDrachtio {
  server: DrachtioServer;
  engine: DrachtioEngine;
  /** the bound protocol port (useful when port 0 was asked for) */
  port: number;
  close(): Promise<void>;
}

export async function startDrachtio(stack: SipStack, opts: DrachtioOptions): Promise<RunningDrachtio> {
  const server = new DrachtioServer({ secret: opts.secret });
  const engine = new DrachtioEngine(server, new StackPort(stack), {
    outboundTargets: opts.outboundTargets,
    userAgent: opts.userAgent,
    optionsAutoRespondUserAgent: opts.optionsAutoRespondUserAgent,
    keepOrphanedDialogs: opts.keepOrphanedDialogs,
    proxyDialogIdleMs: stack.config.limits.proxyDialogIdleMs,
    logger: opts.logger,
  });
  const addr = await server.listen(opts.port, opts.host);
  if (opts.logger) {
    const log = opts.logger;
    server.on('authenticated', (c) => log.info({ app: c.remote, outbound: c.outbound, tags: [...c.tags] }, 'application connected'));
    server.on('rejected', (c, reason) => log.warn({ app: c.remote, reason }, 'application connection rejected'));
  }
  return {
    server,
    engine,
    port: addr.port,
    close: () => {
      engine.proxy.close();
      return server.close();
    },
  };
}
