// Run by fsmrf-connect.test.ts in a child process (DEBUG is read when `debug` loads): connects the fsmrf
// backend to the event socket at ESL_PORT with the right password, then with a wrong one, printing what
// happened; the parent reads everything this process wrote.
import { FsmrfBackend } from '../../../media-app/media-server/fsmrf/backend';

async function main(): Promise<void> {
  const port = Number(process.env.ESL_PORT);
  const opts = { connectTimeoutMs: 3000 };
  const backend = await FsmrfBackend.connect({}, { host: '127.0.0.1', port, password: process.env.ESL_GOOD_PASSWORD! }, opts);
  console.log('connected');
  backend.close();
  const err = await FsmrfBackend.connect({}, { host: '127.0.0.1', port, password: process.env.ESL_BAD_PASSWORD! }, opts).then(
    (b) => (b.close(), null),
    (e: unknown) => e as Error,
  );
  console.log(`wrong password: ${err ? `${err.name}: ${err.message}` : 'connected'}`);
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.log(`failed: ${(e as Error).message}`);
    process.exit(1);
  },
);
