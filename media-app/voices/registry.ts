/** The adapter of each cloud voice. */
import type { VendorTtsType } from '../../core/speech/voices';
import { cartesia } from './cartesia';
import { deepgram } from './deepgram';
import { elevenlabs } from './elevenlabs';
import { openai } from './openai';
import { azure } from './azure';
import { lmnt } from './lmnt';
import { aws } from './aws';
import { google } from './google';
import { rime } from './rime';
import { playht } from './playht';
import type { VendorVoice } from './vendor';

export const VENDOR_VOICES: Readonly<Record<VendorTtsType, VendorVoice>> = { elevenlabs, cartesia, deepgram, openai, azure, lmnt, aws, google, rime, playht };
