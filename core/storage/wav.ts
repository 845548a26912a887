/**
 * Just enough WAV reading for playfile entries: duration from the header and a coarse peak
 * envelope (0..1) of 16-bit PCM. control-api does not import media-engine; this reads the same files.
 */
import fs from 'node:fs';

export interface WavSummary {
  filesize: number;
  duration: number;
  peaks: number[];
}

export function summarizeWav(file: string, buckets = 100): WavSummary | null {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch {
    return null;
  }
  const filesize = buf.length;
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') return { filesize, duration: 0, peaks: [] };
  let off = 12;
  let rate = 0;
  let channels = 0;
  let bits = 0;
  let format = 0;
  while (off + 8 <= buf.length) {
    const id = buf.toString('ascii', off, off + 4);
    const size = buf.readUInt32LE(off + 4);
    const body = off + 8;
    if (id === 'fmt ' && size >= 16) {
      format = buf.readUInt16LE(body);
      channels = buf.readUInt16LE(body + 2);
      rate = buf.readUInt32LE(body + 4);
      bits = buf.readUInt16LE(body + 14);
    } else if (id === 'data') {
      const end = Math.min(buf.length, body + size);
      const bytesPerFrame = (channels * bits) / 8;
      if (!rate || !bytesPerFrame) return { filesize, duration: 0, peaks: [] };
      const frames = Math.floor((end - body) / bytesPerFrame);
      const duration = frames / rate;
      if (format !== 1 || bits !== 16 || frames === 0) return { filesize, duration, peaks: [] };
      const n = Math.min(buckets, frames);
      const peaks = new Array<number>(n).fill(0);
      for (let i = 0; i < frames; i++) {
        const v = Math.abs(buf.readInt16LE(body + i * bytesPerFrame)) / 32768;
        const b = Math.floor((i * n) / frames);
        if (v > peaks[b]!) peaks[b] = v;
      }
      return { filesize, duration, peaks: peaks.map((p) => Math.round(p * 1000) / 1000) };
    }
    off = body + size + (size & 1);
  }
  return { filesize, duration: 0, peaks: [] };
}
