/**
 * The command line of a soak run by hand (`npx tsx scripts/soak/<name>.ts --opt N`): its number options
 * and its end. A soak's sipp parties and platform children may keep the event loop alive past main(),
 * so the end kills every sipp and exits.
 */
import { killAllSipp } from '../../testkit/media-app/harness';

/** The number after `--name` on the command line, or `def`. */
export function numberArg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
}

/**
 * Runs `main`: a failure is printed and makes the exit code 1; then every sipp is killed and the process
 * ends, at once or after `exitAfterMs` unless it ended by itself before (an unref'ed timer).
 */
export function runMain(main: () => Promise<void>, exitAfterMs = 0): void {
  main()
    .catch((e) => {
      console.error(e);
      process.exitCode = 1;
    })
    .finally(() => {
      killAllSipp();
      if (exitAfterMs > 0) setTimeout(() => process.exit(), exitAfterMs).unref();
      else process.exit();
    });
}
