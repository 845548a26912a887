/** The `dtmf_mode` field of trunks and extensions (core/calls/dtmf-mode.ts). */
import { z } from 'zod';
import { DTMF_MODES } from '../../core/calls/dtmf-mode';

export const dtmfMode = z
  .enum(DTMF_MODES, { message: `must be one of ${DTMF_MODES.join(', ')}` })
  .describe(
    'How the platform sends DTMF to this party (digits_send, and digits relayed from the other leg of a bridged call). ' +
      'rfc4733 (default): telephone-events on the payload type its SDP negotiated, SIP INFO (application/dtmf-relay) when it offered no telephone-event; ' +
      'info: SIP INFO always; inband: tones in the audio. Digits it sends are taken in any of these forms.',
  );
