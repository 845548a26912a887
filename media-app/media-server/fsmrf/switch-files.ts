/**
 * A leg's prompt files as the switch reads them: the switch never fetches a customer's URL, media-app
 * does, through its egress policy, into the directory shared with the switch (shared-prompts.ts), and
 * gives the switch that file; what was fetched for one command goes when the command settles.
 */
import { eslArg } from './esl-arg';
import type { HeldPrompt, SharedPrompts } from './shared-prompts';

const isUrl = (f: string) => /^https?:\/\//i.test(f);

/**
 * Runs `run` with each group of `groups` as files the switch reads (an http(s) URL fetched, checked by
 * `eslArg` as `<op> file`, others as given); the fetched files are released once `run` settles: played,
 * stopped or failed. With no shared directory an http(s) prompt is refused.
 */
export async function withSwitchFiles<T>(prompts: SharedPrompts | null, op: string, groups: string[][], run: (files: string[][]) => Promise<T>): Promise<T> {
  if (!prompts && groups.some((g) => g.some(isUrl))) throw new Error(`${op}: an http(s) prompt needs the directory shared with the switch (FsmrfBackend.promptsIn)`);
  const held: HeldPrompt[] = [];
  try {
    const files: string[][] = [];
    for (const group of groups) {
      const out: string[] = [];
      for (const f of group) {
        const p = isUrl(f) ? await prompts!.hold(f) : null;
        if (p) held.push(p);
        out.push(p ? eslArg(`${op} file`, p.path) : f);
      }
      files.push(out);
    }
    return await run(files);
  } finally {
    for (const p of held) p.release();
  }
}
