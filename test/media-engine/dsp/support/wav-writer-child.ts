// Child process for the crash test: records a known pattern forever until killed.
import { WavWriter } from '../../../../media-engine/audio/wav';

const path = process.argv[2];
const w = new WavWriter(path, { flushIntervalMs: 100 });
const frame = new Int16Array(160);
let n = 0;
setInterval(() => {
  for (let k = 0; k < 5; k++) {
    for (let i = 0; i < 160; i++) frame[i] = ((n * 160 + i) % 2000) - 1000; // sawtooth, sample-exact
    w.write(frame);
    n++;
  }
  if (n === 50) process.stdout.write('ready\n');
}, 5);
