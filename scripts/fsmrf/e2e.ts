/**
 * The end-to-end check of issue 55: unmodified drachtio-srf and drachtio-fsmrf (from npm), through
 * their public API only, against this platform's sip-server and the media engine's event socket
 * (esl/), with a real SIP phone (baresip) calling in. Prints one line per step, PASS or FAIL with what
 * it measured, and exits 1 when any step failed (the steps after a failure are SKIPped: each needs the
 * ones before). esl/README.md "End to end" says how to run it.
 *
 *   npx tsx scripts/fsmrf/e2e.ts [--drachtio host:port] [--drachtio-secret s] [--sip host:port]
 *                                [--esl host:port] [--esl-password p] [--dir d]
 *
 * Defaults: DRACHTIO_HOST/PORT/SECRET (127.0.0.1:9022, cymru), SIP 127.0.0.1:SIP_PORT (5060),
 * ESL_LISTEN / ESL_PASSWORD, a fresh directory under the system's temporary directory (kept on failure).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { STEPS, type E2eContext, type E2eOptions, type SrfLike } from './steps';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- drachtio-srf's constructor, driven through SrfLike
const Srf = require('drachtio-srf') as new () => SrfLike;

function hostPort(v: string, what: string): { host: string; port: number } {
  const m = /^([^:\s]+):(\d{1,5})$/.exec(v.trim());
  if (!m) throw new Error(`${what}: want host:port, got '${v}'`);
  return { host: m[1]!, port: Number(m[2]) };
}

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv): E2eOptions {
  const args = new Map<string, string>();
  for (let i = 0; i < argv.length; i += 2) {
    const k = argv[i]!;
    if (!k.startsWith('--') || argv[i + 1] === undefined) throw new Error(`usage: --name value pairs, got '${k}'`);
    args.set(k.slice(2), argv[i + 1]!);
  }
  const known = ['drachtio', 'drachtio-secret', 'sip', 'esl', 'esl-password', 'dir'];
  for (const k of args.keys()) if (!known.includes(k)) throw new Error(`unknown option --${k} (known: ${known.map((x) => `--${x}`).join(' ')})`);
  const password = args.get('esl-password') ?? env.ESL_PASSWORD;
  if (!password) throw new Error('the event socket password: --esl-password or ESL_PASSWORD');
  const esl = args.get('esl') ?? env.ESL_LISTEN;
  if (!esl) throw new Error('the event socket: --esl host:port or ESL_LISTEN');
  return {
    drachtio: {
      ...hostPort(args.get('drachtio') ?? `${env.DRACHTIO_HOST || '127.0.0.1'}:${env.DRACHTIO_PORT || '9022'}`, '--drachtio'),
      secret: args.get('drachtio-secret') ?? env.DRACHTIO_SECRET ?? 'cymru',
    },
    sip: args.get('sip') ?? `127.0.0.1:${env.SIP_PORT || '5060'}`,
    esl: { ...hostPort(esl, '--esl'), password },
    dir: path.resolve(args.get('dir') ?? fs.mkdtempSync(path.join(os.tmpdir(), 'fsmrf-e2e-'))),
  };
}

/** Runs the steps in order; the lines it printed, and whether all passed. */
export async function runSteps(ctx: E2eContext, print: (line: string) => void): Promise<boolean> {
  let ok = true;
  for (const [name, step] of STEPS) {
    if (!ok) {
      print(`SKIP ${name}`);
      continue;
    }
    try {
      print(`PASS ${name}: ${await step(ctx)}`);
    } catch (e) {
      ok = false;
      print(`FAIL ${name}: ${(e as Error).message}`);
    }
  }
  return ok;
}

async function close(ctx: E2eContext): Promise<void> {
  ctx.ms?.disconnect();
  try {
    ctx.srf.disconnect();
  } catch {
    /* never connected */
  }
  await ctx.sink?.close();
  await ctx.phone?.dispose();
}

async function main(): Promise<void> {
  let opts: E2eOptions;
  try {
    opts = parseOptions(process.argv.slice(2), process.env);
  } catch (e) {
    console.error((e as Error).message);
    process.exit(2);
  }
  fs.mkdirSync(opts.dir, { recursive: true });
  const ctx: E2eContext = { opts, srf: new Srf(), others: [] };
  const t0 = performance.now();
  const ok = await runSteps(ctx, (line) => console.log(line));
  await close(ctx);
  console.log(`${ok ? 'PASS' : 'FAIL'} fsmrf end to end in ${((performance.now() - t0) / 1000).toFixed(1)} s${ok ? '' : `; files kept in ${opts.dir}`}`);
  if (ok) fs.rmSync(opts.dir, { recursive: true, force: true });
  process.exit(ok ? 0 : 1);
}

if (require.main === module) void main();
