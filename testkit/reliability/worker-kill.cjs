// Preloaded (--require) into media-app by scripts/bench/chaos: on SIGUSR2 the first media worker
// thread ends at once (worker.terminate(): its JavaScript stops where it is, as WorkerHost.kill does
// in test/media-engine/worker-death.test.ts). A worker is a thread, so a signal from outside cannot
// kill it alone; this is the closest fault to "kill -9 of one media worker". Only with
// CHAOS_WORKER_KILL=1.
const wt = require('node:worker_threads');
if (wt.isMainThread && process.env.CHAOS_WORKER_KILL === '1') {
  const workers = [];
  const Original = wt.Worker;
  class Tracked extends Original {
    constructor(file, options) {
      super(file, options);
      if (String(file).includes('worker-main')) {
        workers.push(this);
        this.once('exit', () => workers.splice(workers.indexOf(this), 1));
      }
    }
  }
  wt.Worker = Tracked;
  process.on('SIGUSR2', () => {
    // the first worker (index 0) takes the first endpoint and, by least-legs placement, half of the rest
    const victim = workers[0];
    if (!victim) return;
    process.stdout.write(`CHAOS worker-kill: terminating media worker thread ${victim.threadId}\n`);
    void victim.terminate();
  });
}
