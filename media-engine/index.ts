/**
 * media-engine: the real-time RTP media engine (the role FreeSWITCH plays), with an API shaped like
 * drachtio-fsmrf: MediaServer.start() -> createEndpoint() / createConference().
 */
export { MediaServer } from './media-server';
export type { MediaServerOptions, MediaServerEvents, CreateEndpointOptions, WorkerStats } from './media-server';
export type { WorkerRealtimeOptions, ScheduleChange } from './worker/realtime';
export { Endpoint } from './endpoint';
export type { PlaySpec } from './endpoint';
export type { PlayCollectOptions, PlayCollectResult, EndpointStats, EndpointEvents, EndpointEnd, EndpointEndReason, Recording } from './endpoint';
export { Conference } from './conference';
export type { ConferenceEvents, ConferenceEndReason } from './conference';
export { AudioFork } from './audio-fork';
export type { ForkOptions } from './audio-fork';
export type { ForkStats, ForkMix, InjectRate } from './fork';
export type { PlayResult, SynthesisReport } from './player';
export type { RecordOptions, RecordResult, RecordFile, RecordStopReason } from './recorder';
export type { DtmfEvent, DtmfForm } from './worker/leg';
export type { RxTimeoutEvent } from './worker/rx-watch';
export { SdpError, parseSdp } from './sdp/sdp';
export { sdpHoldMode, type SdpHoldMode } from './sdp/hold';
export type { NegotiatedMedia, Direction, AudioCodecName } from './sdp/sdp';
export { AUDIO_CODECS } from './sdp/formats';
export { codecAvailability, CODEC_NAMES, Resampler } from './codecs';
export { EchoCanceller, AEC_DEFAULT_TAIL_MS, type EchoCancellerOptions } from './dsp/echo-canceller';
export { QUIET_LINE_DBFS } from './dsp/frame';
/** tone_stream:// scripts as tones (the switch's conference play renders them: esl/conference/playback.ts). */
export { parseTeletone } from './dsp/teletone';
export { ToneSource, type ToneSpec } from './dsp/tones';
export type { EchoCancelOptions } from './worker/leg-aec';
/** G.711 µ-law per sample (Twilio Media Streams carry µ-law in JSON); whole-frame decode for the voice adapters. */
export { muLaw, decodeG711, encodeG711Range } from '../core/audio/g711';
/** 16-bit little-endian PCM ↔ samples (the fsmrf fork's frames and injected audio). */
export { LITTLE_ENDIAN, pcm16ToSamples, samplesToPcm16 } from '../core/audio/pcm16';
export type { AmdRequest, AmdResult, BeepResult, SpeechEvent, VadTapOptions } from './worker/leg-analysis';
/** The classifiers a leg runs on its caller's frames (AMD, the beep): the fsmrf backend feeds them a fork's frames. */
export { LegAnalysis, AnalysisError } from './worker/leg-analysis';
export type { TranscribeOptions, TranscribeDirection, Transcript } from './transcriber';
export type { RtcpReceived } from './worker/rtp-session';
export type { ReportBlock, VoipMetrics } from './rtp-packet/rtcp';
// what media-app (and control-api's checks) use besides the endpoints: files, speech in and out
export { readWav, parseWav, parseWavHeader, WavWriter } from './audio/wav';
/** A prompt URL fetched through the egress policy and converted to an 8 kHz WAV (the fsmrf backend's shared prompts). */
export { prepareAudio, playUrlFailure, type CacheBounds, type PrepareOptions, type PreparedAudio } from './sources';
export { wavFile } from '../core/audio/wav';
export { createSttProvider } from './stt';
export type { SttStream, TranscriptEvent } from './stt';
export { transcribeSamples, transcribeWavFile, type SamplesTranscription } from './stt/file';
export { configureTtsCache, createTtsProvider, EspeakProvider, espeakVoiceFor } from './tts';
export type { TtsProvider, EspeakStreamOptions } from './tts';
export { espeakPool } from './tts/espeak-pool';
export { LegTranscription, Transcriber, type OpenTranscriptionFork } from './transcriber';
/** A leg's RTP capture records (Endpoint.takeRtpCapture), for the platform's store and pcap. */
export { parseRtpCapture, RECORD_HEADER, type CapturedDatagram } from '../core/audio/capture-format';
