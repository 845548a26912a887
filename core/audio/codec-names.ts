/** The audio codecs the media engine speaks, by the names SDP and the API write them. */
export type CodecName = 'PCMU' | 'PCMA' | 'G722' | 'opus';

export const CODEC_NAMES: readonly CodecName[] = ['PCMU', 'PCMA', 'G722', 'opus'];
