// The Media Streams agent the evals tests run (testkit/evals/agent-apps.ts streamsAgent) over a real
// WebSocket on loopback: bad input from the platform's side (a media message without media) never ends
// the process, and a line espeak-ng cannot voice goes into the agent's log, not an unhandled rejection.
import { expect } from 'chai';
import { WebSocket } from 'ws';
import { streamsAgent, type StreamsAgent } from '../../testkit/evals/agent-apps';
import { until } from '../../testkit/media-app/harness';

const brain = { greeting: 'hello there', answer: () => 'yes', digit: (d: string) => `you pressed ${d}` };

async function platformSide(agent: StreamsAgent): Promise<{ send(m: unknown): void; close(): void }> {
  const ws = new WebSocket(agent.app.url);
  ws.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { send: (m) => ws.send(JSON.stringify(m)), close: () => ws.close() };
}

describe('evals agent apps: the Media Streams agent survives what it is sent', function () {
  this.timeout(20_000);

  it('a media message without media (or with null media) is silence: the agent goes on and answers a digit', async () => {
    const agent = await streamsAgent(brain);
    try {
      const p = await platformSide(agent);
      p.send({ event: 'start', streamSid: 'MZ1', start: { streamSid: 'MZ1' } });
      await until(() => agent.log.includes('say hello there'), 10_000, 'the greeting said');
      p.send({ event: 'media' });
      p.send({ event: 'media', media: null });
      p.send({ event: 'dtmf', dtmf: { digit: '5' } });
      await until(() => agent.log.includes('say you pressed 5'), 10_000, 'the digit answered');
      p.close();
    } finally {
      await agent.close();
    }
  });

  it('espeak-ng failing (not on PATH): the line goes into the log as failed, no unhandled rejection', async () => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    let agent: StreamsAgent | undefined;
    try {
      agent = await streamsAgent(brain);
      const p = await platformSide(agent);
      p.send({ event: 'start', streamSid: 'MZ2', start: { streamSid: 'MZ2' } });
      const failed = await until(() => agent!.log.find((l) => l.startsWith('say failed hello there: ')), 10_000, 'the failed greeting logged');
      expect(failed).to.match(/ENOENT/);
      expect(agent.log.filter((l) => l.startsWith('say hello'))).to.deep.equal([]);
      p.close();
    } finally {
      process.env.PATH = path;
      await agent?.close();
    }
  });
});
