// Run by srf-debug.test.ts in a child process (DEBUG is read when `debug` loads): connects media-app's
// drachtio-srf to sip-server at DRACHTIO_PORT with DRACHTIO_TEST_SECRET, prints `connected`, disconnects.
import { connectSrf, disconnectSrf } from '../../media-app/kit/srf';

connectSrf({ host: '127.0.0.1', port: Number(process.env.DRACHTIO_PORT), secret: process.env.DRACHTIO_TEST_SECRET!, timeoutMs: 5000 }).then(
  (srf) => {
    console.log('connected');
    disconnectSrf(srf);
    process.exit(0);
  },
  (e: unknown) => {
    console.log(`failed: ${(e as Error).message}`);
    process.exit(1);
  },
);
