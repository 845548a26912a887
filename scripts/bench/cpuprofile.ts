/**
 * A V8 `.cpuprofile` (from `node --cpu-prof`) as profile-top.ts and profile-stalls.ts read it: the file
 * named on the command line, its nodes by id, a frame's label, and a numeric `--name` option.
 */
import fs from 'node:fs';

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** The profile named by the first argument (`usage` printed and exit 2 without one) and its nodes by id. */
export function readProfile(usage: string): { p: Profile; byId: Map<number, ProfileNode> } {
  const file = process.argv[2];
  if (!file) {
    console.error(`usage: ${usage}`);
    process.exit(2);
  }
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  return { p, byId: new Map(p.nodes.map((n) => [n.id, n])) };
}

/** `--name N` on the command line, else `def`. */
export function numberArg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
}

/** A frame as `function file:line`, the path from the checkout (or node_modules) on. */
export function frameLabel(n: ProfileNode): string {
  const f = n.callFrame;
  return `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(wt-[^/]+|main|node_modules)\//, '')}:${f.lineNumber + 1}`;
}
