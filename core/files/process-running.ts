/**
 * Whether process `pid` runs on this host (signal 0 asks without sending; EPERM is another user's process,
 * running): what tells a file a dead process left from one a live one still uses (media-engine's cache
 * temporaries, media-app's prompt directories). A pure leaf, as private-dir.ts.
 */
export function processRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
