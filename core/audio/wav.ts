/**
 * The canonical 44-byte PCM WAV header and a whole 16-bit file written at once: one writer for every
 * room that makes WAV files (media-engine's recorder and TTS cache, the switch's fork playout, the evals'
 * call tracks).
 */

/** A 44-byte canonical PCM WAV header for `dataBytes` of 16-bit audio. */
export function wavHeader(dataBytes: number, sampleRate = 8000, channels = 1): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'latin1');
  h.writeUInt32LE(36 + dataBytes, 4);
  h.write('WAVEfmt ', 8, 'latin1');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(channels, 22);
  h.writeUInt32LE(sampleRate, 24);
  h.writeUInt32LE(sampleRate * channels * 2, 28);
  h.writeUInt16LE(channels * 2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'latin1');
  h.writeUInt32LE(dataBytes, 40);
  return h;
}

/** A mono 16-bit PCM WAV file of `samples` at `sampleRate`: the header, then the samples little-endian. */
export function wavFile(samples: Int16Array, sampleRate: number): Buffer {
  const body = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) body.writeInt16LE(samples[i]!, i * 2);
  return Buffer.concat([wavHeader(body.length, sampleRate), body]);
}
