// Issue 54 item 3: the RecordingUrl a <Record> action and its recording status callback get is
// Twilio's Recording resource (`{PUBLIC_URL}/2010-04-01/Accounts/{AC}/Recordings/{RE}`, no extension),
// and a tutorial app downloads it as Twilio's tutorials do: `RecordingUrl + '.mp3'` (and `.wav`,
// `.json`) with the account's credentials (basic auth; without them 401). The MP3 is decoded by sox
// and has the recording's length. A real call (sipp through a trunk, a media-app node, control-api
// served on the port PUBLIC_URL names, real Postgres and Redis).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import twilio from 'twilio';
import { accountSid, callSid } from '../../core/twilio/sids';
import { twilioAuthToken } from '../../core/twilio/auth-token';
import { customerWithTrunk, placeCall, startStack, type PlacedCall, type Stack } from '../../testkit/streams/support';
import { TwimlServer } from '../../testkit/twiml/server';
import { killAllSipp } from '../../testkit/media-app/harness';
import { freePort } from '../../testkit/ports';
import type { Fixture } from '../../testkit/api';

describe('twilio: RecordingUrl downloads as in the tutorials', function () {
  this.timeout(120_000);
  let stack: Stack;
  let server: http.Server;
  let publicUrl: string;
  let app: TwimlServer;
  let f: Fixture;
  let token: string;
  let dir: string;
  const placed: PlacedCall[] = [];

  before(async () => {
    const port = await freePort();
    publicUrl = `http://127.0.0.1:${port}`;
    stack = await startStack({ PUBLIC_URL: publicUrl });
    server = http.createServer(stack.api.app);
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    f = await customerWithTrunk(stack.api);
    token = twilioAuthToken(stack.platform.config.jwtSecret, f.customer.id, 0);
    app = await TwimlServer.start(token);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'twilio-rec-url-'));
  });
  after(async () => {
    killAllSipp();
    placed.forEach((c) => c.peer.close());
    await app?.close();
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await stack?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** What the tutorial's download does: GET with the AccountSid and AuthToken as basic auth. */
  const download = (url: string, auth = true) => fetch(url, auth ? { headers: { authorization: `Basic ${Buffer.from(`${accountSid(f.customer.id)}:${token}`).toString('base64')}` } } : {});

  it('the Record action and status callback get the Recording resource; + .mp3 / .wav / .json download it', async () => {
    const doc = new twilio.twiml.VoiceResponse();
    doc.record({ action: '/recorded', maxLength: 3, timeout: 30, finishOnKey: '', playBeep: false, recordingStatusCallback: '/rec-status' });
    app.on('/voice', doc.toString());
    app.on('/recorded', '<Response><Hangup/></Response>');
    app.on('/rec-status', '<Response/>');
    const call = await placeCall(stack, f.customer.id, [{ type: 'answer' }, { type: 'twiml', option: { url: app.url('/voice') } }]);
    placed.push(call);
    const action = await app.next('/recorded', 30_000);
    const status = await app.next('/rec-status', 30_000);
    const sid = action.params.RecordingSid!;
    expect(sid).to.match(/^RE[0-9a-f]{32}$/);
    const want = `${publicUrl}/2010-04-01/Accounts/${accountSid(f.customer.id)}/Recordings/${sid}`;
    expect(action.params.RecordingUrl).to.equal(want);
    expect(status.params).to.include({ RecordingUrl: want, RecordingSid: sid, RecordingStatus: 'completed', CallSid: callSid(call.callId) });
    expect([action.signed, status.signed]).to.deep.equal([true, true]);

    const mp3 = await download(`${action.params.RecordingUrl}.mp3`);
    expect(mp3.status).to.equal(200);
    expect(mp3.headers.get('content-type')).to.equal('audio/mpeg');
    const file = path.join(dir, `${sid}.mp3`);
    fs.writeFileSync(file, Buffer.from(await mp3.arrayBuffer()));
    // sox decodes it (libsox-fmt-mp3); its length is the recording's (maxLength 3 s)
    const seconds = Number(execFileSync('soxi', ['-D', file], { encoding: 'utf8' }).trim());
    expect(seconds, 'mp3 duration').to.be.within(2.5, 3.6);
    expect(Math.abs(seconds - Number(action.params.RecordingDuration))).to.be.below(1);

    const wav = await download(`${action.params.RecordingUrl}.wav`);
    expect([wav.status, wav.headers.get('content-type')]).to.deep.equal([200, 'audio/x-wav']);
    expect(
      Buffer.from(await wav.arrayBuffer())
        .subarray(0, 4)
        .toString(),
    ).to.equal('RIFF');
    const bare = await download(action.params.RecordingUrl!);
    expect([bare.status, bare.headers.get('content-type')]).to.deep.equal([200, 'audio/x-wav']);
    const json = await download(`${action.params.RecordingUrl}.json`);
    expect(json.status).to.equal(200);
    expect(await json.json()).to.include({ sid, call_sid: callSid(call.callId), account_sid: accountSid(f.customer.id), status: 'completed' });

    // sox cannot start (not on PATH): a 503 in Twilio's envelope, the API process stays up and serves the next one
    const PATH = process.env.PATH;
    process.env.PATH = dir;
    try {
      const failed = await download(`${action.params.RecordingUrl}.mp3`);
      expect(failed.status).to.equal(503);
      expect(await failed.json()).to.include({ code: 20503, status: 503 });
    } finally {
      process.env.PATH = PATH;
    }
    expect((await download(`${action.params.RecordingUrl}.mp3`)).status).to.equal(200);

    // media needs the account's credentials (the safe default: Twilio's "HTTP Basic Authentication for media" on)
    for (const ext of ['', '.mp3', '.wav', '.json']) expect((await download(`${action.params.RecordingUrl}${ext}`, false)).status, ext).to.equal(401);
  });
});
