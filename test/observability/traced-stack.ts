// The stack the tracing suites share: an OTLP receiver, tracing exporting to it (every 100 ms), the call
// plane (MD5 digests, as the sipp phones answer) and a control-api on its Redis prefix, a customer.
import { startTracing, type Tracing } from '../../core/tracing';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { startPlatform, type Platform } from '../../testkit/media-app/harness';
import { OtlpReceiver } from '../support/otlp-receiver';

export interface TracedStack {
  otlp: OtlpReceiver;
  tracing: Tracing;
  p: Platform;
  t: TestApp;
  f: Fixture;
  /** The app, the platform, the tracing's export and the receiver, in that order. */
  close(): Promise<void>;
}

export async function startTracedStack(): Promise<TracedStack> {
  const otlp = await OtlpReceiver.start();
  const tracing = startTracing('openvoice-test', { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '100' })!;
  const p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', SIP_DIGEST_ALGORITHMS: 'MD5' });
  const t = await buildTestApp({ env: { EGRESS_ALLOW_CIDRS: '127.0.0.0/8', RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: p.config.redisKeyPrefix, DATA_DIR: p.config.dataDir } });
  const f = await createFixture(t.ctx);
  return {
    otlp,
    tracing,
    p,
    t,
    f,
    async close() {
      await t.close();
      await p.close();
      await tracing.shutdown();
      await otlp.close();
    },
  };
}
