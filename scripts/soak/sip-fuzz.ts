/**
 * Long form of the SIP input battery: N generated malformed messages (UDP + 10% TCP) against a real
 * SipStack, a liveness OPTIONS after every batch, a line per batch (heap, RSS, transactions in
 * flight, liveness ms), then the summary as JSON. Exit code 1 on any internal error, liveness
 * failure or stuck transaction.
 *
 *   node --expose-gc --import tsx scripts/soak/sip-fuzz.ts --count 100000 [--batch 1000] [--seed N]
 */
import { runSipFuzz } from '../../testkit/reliability/sip/fuzz';

const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};

async function main(): Promise<void> {
  const count = arg('count', 100_000);
  const batch = arg('batch', 1000);
  const seed = arg('seed', Date.now() & 0x7fffffff);
  console.log(`sip-fuzz: ${count} messages in batches of ${batch}, seed ${seed}`);
  const r = await runSipFuzz({
    count,
    batch,
    seed,
    tcpShare: 0.1,
    onBatch: (b) => {
      if ((b.sent / batch) % 10 === 0 || b.livenessMs < 0) console.log(`  sent ${b.sent}  heap ${b.heapMB} MB  rss ${b.rssMB} MB  tx ${b.transactions}  liveness ${b.livenessMs} ms`);
    },
  });
  console.log(JSON.stringify(r, null, 1));
  const ok = r.internalErrors.length === 0 && r.livenessFailures === 0 && r.transactionsAtEnd.server + r.transactionsAtEnd.client === 0;
  console.log(ok ? 'PASS' : 'FAIL');
  process.exitCode = ok ? 0 : 1;
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
