/**
 * sip-server's Prometheus /metrics (sip_* counters of metrics.ts and the process's default metrics)
 * on its own listener: SIP_METRICS_LISTEN=host:port (default 127.0.0.1:9465, `off` to disable).
 * No credentials: bind it to loopback or a private network (like control-api's METRICS_LISTEN).
 */
import { collectDefaultMetrics } from 'prom-client';
import { metricsListenFromEnv, startMetricsServer, type MetricsServer } from '../core/metrics-server';
import { sipRegistry } from './metrics';

export const DEFAULT_SIP_METRICS_LISTEN = '127.0.0.1:9465';

/** The address to bind, null when off; throws a one-line message naming the variable on a bad value. */
export function sipMetricsListen(env: NodeJS.ProcessEnv = process.env): { host: string; port: number } | null {
  return metricsListenFromEnv('SIP_METRICS_LISTEN', DEFAULT_SIP_METRICS_LISTEN, env);
}

let defaults = false;

export type SipMetricsListener = MetricsServer;

export async function startSipMetricsListener(at: { host: string; port: number }, opts: { defaultMetrics?: boolean } = {}): Promise<SipMetricsListener> {
  if (opts.defaultMetrics && !defaults) {
    defaults = true;
    collectDefaultMetrics({ register: sipRegistry });
  }
  return startMetricsServer(sipRegistry, at);
}
