/**
 * Runs a flow against a scripted virtual call and prints the timeline as JSON.
 *
 *   npx tsx scripts/flow-simulate.ts FLOW.json [SCRIPT.json] [--compact] [--no-http]
 *
 * FLOW.json: a flow ({"actions": [...], "on_complete_flow_id"?}) or a bare action array.
 * SCRIPT.json: the virtual call (core/flow/sim-script.ts); omitted = a silent caller.
 * --no-http: send no HTTP, as the API's simulations do (fetch, webhook_send answered from the script's `http`).
 * Exit status 0 on a simulation, 2 on an invalid flow or script (the error envelope is printed).
 */
import { readFileSync } from 'node:fs';
import { isApiError } from '../core/errors';
import { simulate } from '../media-app/flow/simulator/simulate';

async function main(): Promise<number> {
  const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const compact = process.argv.includes('--compact');
  if (args.length < 1) {
    process.stderr.write('usage: flow-simulate.ts FLOW.json [SCRIPT.json] [--compact] [--no-http]\n');
    return 2;
  }
  const flowJson = JSON.parse(readFileSync(args[0]!, 'utf8')) as unknown;
  const flow = Array.isArray(flowJson) ? { actions: flowJson } : (flowJson as { actions: unknown });
  const script = args[1] ? (JSON.parse(readFileSync(args[1], 'utf8')) as unknown) : {};
  try {
    const result = await simulate(flow, script, { sendHttp: !process.argv.includes('--no-http') });
    process.stdout.write(JSON.stringify(result, null, compact ? 0 : 2) + '\n');
    return 0;
  } catch (e) {
    if (isApiError(e)) {
      process.stdout.write(JSON.stringify(e.toEnvelope('simulate'), null, 2) + '\n');
      return 2;
    }
    throw e;
  }
}

main().then(
  (code) => process.exit(code),
  (e: Error) => {
    process.stderr.write(`${e.stack ?? e.message}\n`);
    process.exit(1);
  },
);
