/**
 * The speech subsystem (docs/speech.md): speakings, transcription and recording transcription on
 * this node. Flow actions reach it as `ctx.services.speech`; control-api's commands
 * (core/commands/protocol.ts) arrive through the node's queue.
 */
import type { Subsystem } from '../subsystem';
import { SpeechService } from './service';
import { fastSayChannel, parseFastSay } from '../../core/speech/fast-say';

export { SpeechService, type TranscribeRequest } from './service';

declare module '../flow/services' {
  interface FlowServices {
    speech?: SpeechService;
  }
}

export const subsystem: Subsystem = {
  name: 'speech',
  async start(ctx) {
    const speech = new SpeechService(ctx.factory);
    ctx.services.speech = speech;
    ctx.commands.on('speaking.start', (c) => speech.startSpeaking(c.speakingId, c.referenceType, c.referenceId));
    ctx.commands.on('speaking.say', async (c) => speech.sayOn(c.speakingId, c.seq, c.text));
    ctx.commands.on('speaking.flush', (c) => speech.flushSpeaking(c.speakingId, c.upTo));
    ctx.commands.on('speaking.stop', (c) => speech.stopSpeaking(c.speakingId));
    ctx.commands.on('transcribe.start', (c) => speech.startTranscribe(c.transcribeId, c.callId, false, c.phrases));
    ctx.commands.on('transcribe.stop', (c) => speech.stopTranscribe(c.transcribeId));
    ctx.commands.on('transcribe.recording', (c) => speech.transcribeRecordingById(c.transcribeId));
    // says also come straight from control-api over pub/sub (core/speech/fast-say.ts), a queue hop sooner
    const sub = ctx.deps.redis.duplicate();
    sub.on('error', (err: Error) => ctx.logger.debug({ err: err.message }, 'fast say subscriber'));
    sub.on('message', (_channel: string, message: string) => {
      const say = parseFastSay(message);
      if (say) speech.sayOn(say.speakingId, say.seq, say.text);
    });
    await sub.subscribe(fastSayChannel(ctx.deps.config.redisKeyPrefix, ctx.nodeId)).catch((err: Error) => ctx.logger.warn({ err: err.message }, 'no fast say channel; says come by the queue'));
    return {
      async stop() {
        sub.disconnect();
        delete ctx.services.speech;
        await speech.stop();
      },
    };
  },
};
