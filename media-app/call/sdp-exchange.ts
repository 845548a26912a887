/**
 * Offer/answer when the far end sends no SDP (RFC 3261 13.2.1, RFC 3264): a late-offer INVITE gets
 * our offer in the 200 and its answer arrives in the ACK; an SDP-less re-INVITE gets a fresh offer
 * of ours (Endpoint.offer) and, again, the answer in the ACK. The call's media path (its endpoint,
 * behind its rtpengine relay leg when it has one: media-path.ts) makes and applies each SDP.
 */
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { MediaPath } from './media-path';
import type { SrfRequest, SrfResponse } from '../kit/srf';
import type { CallDialog } from './session-types';
import { refuseOffer } from './media-refusal';

/** The ACK's SDP (the answer to our offer) applied to the media; resolves once done, or after `ms` / the dialog's end. */
export function applyAnswerFromAck(dialog: CallDialog, media: MediaPath, logger: Logger, ms = 32_000): Promise<void> {
  if (!(dialog instanceof EventEmitter)) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      dialog.off('ack', onAck);
      dialog.off('destroy', done);
      resolve();
    };
    const onAck = (ack: SrfRequest) => {
      if (!ack.body) {
        logger.info('ACK without the answer to our offer: media stays unset');
        return done();
      }
      media.applyAnswer(ack.body).then(done, (err: Error) => {
        logger.info({ err: err.message }, 'answer in the ACK refused');
        done();
      });
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    dialog.on('ack', onAck);
    dialog.on('destroy', done);
  });
}

/**
 * A re-INVITE (hold, codec change, a session refresh, or none: we offer) answered by the call's media;
 * `headers` go on the 2xx (the session timer's). The dialog keeps the SDP we answered as its own.
 */
export function answerReinvite(dialog: CallDialog, media: MediaPath | null, req: SrfRequest, res: SrfResponse, logger: Logger, headers: Record<string, string> = {}): void {
  if (!media) return void res.send(488);
  if (req.body) {
    media.answerOffer(req.body).then(
      (sdp) => {
        dialog.local.sdp = sdp;
        res.send(200, { body: sdp, headers });
      },
      (err: Error) => refuseOffer(res, err.message),
    );
    return;
  }
  media.offer().then(
    (sdp) => {
      void applyAnswerFromAck(dialog, media, logger);
      dialog.local.sdp = sdp;
      res.send(200, { body: sdp, headers: { ...headers, 'Content-Type': 'application/sdp' } });
    },
    () => res.send(488),
  );
}
