// The commands control-api sends media-app (core/commands/protocol.ts) over a real Redis and BullMQ:
// the sender (CommandBus) refuses a command outside the closed union before anything is enqueued, and
// media-app's consumer (CommandHandler) fails a job that carries one, with the reason, not retried,
// running nothing and logging no value of the payload.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { Queue, QueueEvents, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import { ApiError, serviceUnavailable } from '../../core/errors';
import { CommandBus } from '../../core/commands/bus';
import { CommandRefusedError, checkCommand, type Command } from '../../core/commands/protocol';
import { CommandHandler } from '../../media-app/commands';
import type { CallFactory } from '../../media-app/call/factory';

/** What a wrong producer could put in (the type system would refuse it; the run-time check must too). */
const untyped = (c: Record<string, unknown>): Command => c as unknown as Command;

describe('commands control-api → media-app (closed union, checked on both ends)', function () {
  this.timeout(20_000);
  const keyPrefix = `tcmd${process.pid}_${randomBytes(4).toString('hex')}:`;
  const queueName = `commands-test-${randomBytes(3).toString('hex')}`;
  let redis: Redis;
  let workerRedis: Redis;
  let bus: CommandBus;
  let queue: Queue;
  let events: QueueEvents;
  let worker: Worker;
  const ran: Command[] = [];
  const logLines: string[] = [];

  before(async () => {
    const url = process.env.TEST_REDIS_URL;
    if (!url) throw new Error('TEST_REDIS_URL is not set: run `source .data/env`');
    redis = new Redis(url, { maxRetriesPerRequest: 2 });
    workerRedis = new Redis(url, { maxRetriesPerRequest: null });
    bus = new CommandBus({ redis, keyPrefix });
    queue = bus.queue(queueName);
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        logLines.push(chunk.toString());
        done();
      },
    });
    // the subsystem commands below need no call factory; a built-in one would (and is never sent here)
    const noFactory: CallFactory = Object.create(null);
    const handler = new CommandHandler(noFactory, pino({ level: 'info' }, sink));
    handler.on('call.silence', async (c) => void ran.push(c));
    handler.on('call.talk', async (c) => void ran.push(c));
    // a definitive refusal (the tidy helper's race: a second start of a conference's recording)
    handler.on('conference.recording_start', async (c) => {
      ran.push(c);
      throw new ApiError('RECORDING_ALREADY_ACTIVE', 'a recording of this conference is already running');
    });
    // a passing outage (storage or Redis unreachable): worth a retry
    handler.on('conference.refresh', async (c) => {
      ran.push(c);
      throw serviceUnavailable();
    });
    events = new QueueEvents(queueName, { connection: workerRedis.duplicate(), prefix: bus.bullPrefix });
    await events.waitUntilReady();
    worker = new Worker(queueName, (job: Job<unknown>) => handler.handle(job.data), { connection: workerRedis, prefix: bus.bullPrefix });
    await worker.waitUntilReady();
  });

  after(async () => {
    await worker?.close();
    await events?.close();
    await queue?.obliterate({ force: true }).catch(() => undefined);
    await bus?.close();
    redis?.disconnect();
    workerRedis?.disconnect();
  });

  beforeEach(() => {
    ran.length = 0;
    logLines.length = 0;
  });

  /** Resolves with the job's outcome once the worker is done with it. */
  function outcome(jobId: string): Promise<{ done: true } | { failed: string }> {
    return new Promise((resolve) => {
      const onDone = ({ jobId: id }: { jobId: string }) => id === jobId && finish({ done: true });
      const onFailed = ({ jobId: id, failedReason }: { jobId: string; failedReason: string }) => id === jobId && finish({ failed: failedReason });
      const finish = (r: { done: true } | { failed: string }) => {
        events.off('completed', onDone);
        events.off('failed', onFailed);
        resolve(r);
      };
      events.on('completed', onDone);
      events.on('failed', onFailed);
    });
  }

  /** Puts raw job data on the queue, as a producer that skips the bus would, with the bus's retry policy. */
  async function rawJob(command: Record<string, unknown>): Promise<{ id: string; result: Promise<{ done: true } | { failed: string }> }> {
    const id = `raw-${randomBytes(4).toString('hex')}`;
    const result = outcome(id);
    await queue.add(String(command.type), { commandId: id, issuedAt: new Date().toISOString(), command }, { jobId: id, attempts: 3, backoff: { type: 'fixed', delay: 50 } });
    return { id, result };
  }

  it('a valid command goes through Redis and BullMQ and runs once', async () => {
    const result = outcome('valid-1');
    const env = await bus.enqueue(queueName, { type: 'call.silence', callId: 'call-A', on: true }, 'valid-1');
    expect(env.command).to.deep.equal({ type: 'call.silence', callId: 'call-A', on: true });
    expect(await result).to.deep.equal({ done: true });
    expect(ran).to.deep.equal([{ type: 'call.silence', callId: 'call-A', on: true }]);
  });

  it('the sender refuses an unknown command type and enqueues nothing', async () => {
    const before = await queue.count();
    const err = await bus.enqueue(queueName, untyped({ type: 'call.explode', callId: 'call-A' }), 'unknown-1').then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(CommandRefusedError);
    expect((err as Error).message).to.equal('command refused: unknown command type "call.explode"');
    expect(await queue.getJob('unknown-1')).to.equal(undefined);
    expect(await queue.count()).to.equal(before);
  });

  it('the sender refuses a malformed payload (wrong type, missing field, extra field) and enqueues nothing', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ type: 'call.mute', callId: 'call-A', direction: 'sideways', on: true }, 'malformed call.mute: direction: invalid_value'],
      [{ type: 'call.silence', callId: 'call-A' }, 'malformed call.silence: on: invalid_type'],
      [{ type: 'call.hangup', callId: 'call-A', cause: 'x' }, 'malformed call.hangup: (command): unrecognized_keys: cause'],
      [{ type: 'call.originate', callIds: [], customerId: 'c' }, 'malformed call.originate: callIds: too_small'],
    ];
    for (const [i, [command, reason]] of cases.entries()) {
      const err = await bus.enqueue(queueName, untyped(command), `malformed-${i}`).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, JSON.stringify(command)).to.be.instanceOf(CommandRefusedError);
      expect((err as Error).message).to.equal(`command refused: ${reason}`);
      expect(await queue.getJob(`malformed-${i}`)).to.equal(undefined);
    }
    // toCallOwner checks before it looks the owner up (no owner here: a valid command answers null)
    const err = await bus.toCallOwner(untyped({ type: 'call.hold', callId: 'call-A', on: 'yes' }) as Extract<Command, { callId: string }>).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(CommandRefusedError);
    expect(await bus.toCallOwner({ type: 'call.hold', callId: 'call-A', on: true })).to.equal(null);
  });

  it('the consumer fails a job with an unknown command type, at once, and runs nothing', async () => {
    const { id, result } = await rawJob({ type: 'call.explode', callId: 'call-A' });
    expect(await result).to.deep.equal({ failed: 'command refused: unknown command type "call.explode"' });
    const job = await queue.getJob(id);
    expect(job?.attemptsMade, 'not retried').to.equal(1);
    expect(ran).to.deep.equal([]);
  });

  it('the consumer fails a job with a malformed payload, logs why without its values, and runs nothing', async () => {
    const { id, result } = await rawJob({ type: 'call.talk', callId: 'call-A', text: 'my PIN is 4471', language: 'en-US', provider: 'espeak', voiceId: 7 });
    expect(await result).to.deep.equal({ failed: 'command refused: malformed call.talk: voiceId: invalid_type' });
    expect((await queue.getJob(id))?.attemptsMade).to.equal(1);
    expect(ran).to.deep.equal([]);
    const refused = logLines.filter((l) => l.includes('command refused'));
    expect(refused).to.have.length(1);
    expect(refused[0]).to.include('voiceId: invalid_type').and.include(id);
    expect(logLines.join('')).to.not.include('4471');
  });

  it('a command its handler refuses with an ApiError fails at once, not retried: the refusal would only repeat', async () => {
    const opts = { format: 'wav', end_of_silence: 0, end_of_key: '', duration: 0, on_end_flow_id: 'f' };
    const { id, result } = await rawJob({ type: 'conference.recording_start', conferenceId: 'k', recordingId: 'r', options: opts });
    expect(await result).to.deep.equal({ failed: 'RECORDING_ALREADY_ACTIVE: a recording of this conference is already running' });
    expect((await queue.getJob(id))?.attemptsMade, 'not retried').to.equal(1);
    expect(ran.map((c) => c.type)).to.deep.equal(['conference.recording_start']);
  });

  it('a command failing with a 5xx ApiError (SERVICE_UNAVAILABLE) is retried as the bus says', async () => {
    const { id, result } = await rawJob({ type: 'conference.refresh', conferenceId: 'k' });
    expect(((await result) as { failed: string }).failed).to.match(/unavailable/i);
    expect((await queue.getJob(id))?.attemptsMade, 'all three attempts').to.equal(3);
    expect(ran.map((c) => c.type)).to.deep.equal(['conference.refresh', 'conference.refresh', 'conference.refresh']);
  });

  it('the consumer fails a job whose envelope is malformed', async () => {
    const id = `raw-env-${randomBytes(4).toString('hex')}`;
    const result = outcome(id);
    await queue.add('call.silence', { commandId: id, command: { type: 'call.silence', callId: 'call-A', on: true } }, { jobId: id, attempts: 3 });
    expect(await result).to.deep.equal({ failed: 'command refused: malformed command envelope: issuedAt: invalid_type' });
    expect(ran).to.deep.equal([]);
  });

  it('every command of the union has a checked payload: a valid one of each kind passes', () => {
    const opts = { format: 'wav', end_of_silence: 0, end_of_key: '', duration: 0, on_end_flow_id: 'f' } as const;
    const valid: Command[] = [
      { type: 'call.originate', callIds: ['a'], customerId: 'c' },
      { type: 'call.recording_start', callId: 'a', recordingId: 'r', options: opts },
      { type: 'conference.recording_start', conferenceId: 'k', recordingId: 'r', options: opts },
      { type: 'transcribe.start', transcribeId: 't', callId: 'a' },
      { type: 'transcribe.start', transcribeId: 't', callId: 'a', phrases: ['yes'] },
      { type: 'speaking.say', speakingId: 's', seq: 3, text: 'hello' },
      { type: 'activeflow.continue', activeflowId: 'f', actionId: 'x' },
    ];
    for (const c of valid) expect(checkCommand(c), JSON.stringify(c)).to.deep.equal({ ok: true, value: c });
    expect(checkCommand(untyped({ type: 'call.recording_start', callId: 'a', recordingId: 'r', options: { ...opts, format: 'mp3' } })).ok).to.equal(false);
    expect(checkCommand(untyped({ type: 'speaking.say', speakingId: 's', seq: 1.5, text: 'x' })).ok).to.equal(false);
    expect(checkCommand(null)).to.deep.equal({ ok: false, reason: 'a command is an object' });
    expect(checkCommand(untyped({ type: 'x'.repeat(500) }))).to.deep.equal({ ok: false, reason: `unknown command type "${'x'.repeat(64)}"` });
  });
});
