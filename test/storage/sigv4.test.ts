// SigV4 against the AWS documentation's published examples, and the S3 client against the loopback
// S3-protocol server (which checks signatures independently): every operation, and each refusal.
import { expect } from 'chai';
import { signHeaders, presignQuery, uriEncode } from '../../core/storage/sigv4';
import { S3Client, S3Error } from '../../core/storage/s3';
import { s3SettingsFromEnv } from '../../core/storage/backend';
import { startS3Server, type S3TestServer } from '../support/s3-server';
import { freePort } from '../../testkit/ports';

const AWS = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', region: 'us-east-1' };
const EMPTY_SHA = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

describe('SigV4 (AWS documented examples)', () => {
  const at = new Date('2013-05-24T00:00:00Z');
  it('GET Object with a Range header: the documented signature', () => {
    const h = signHeaders(AWS, { method: 'GET', path: '/test.txt', headers: { host: 'examplebucket.s3.amazonaws.com', range: 'bytes=0-9' }, payloadHash: EMPTY_SHA }, at);
    expect(h.authorization).to.equal(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    );
  });
  it('presigned GET valid 86400 s: the documented signature', () => {
    const q = presignQuery(AWS, { method: 'GET', path: '/test.txt', host: 'examplebucket.s3.amazonaws.com' }, at, 86400);
    expect(q).to.match(/&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404$/);
  });
  it('encodes keys once, keeping slashes in paths', () => {
    expect(uriEncode('a b/c~d+e', true)).to.equal('a%20b/c~d%2Be');
    expect(uriEncode('ü/x')).to.equal('%C3%BC%2Fx');
  });
});

describe('S3 settings from the environment', () => {
  it('none without S3_BUCKET; a partial set is refused with the missing names', () => {
    expect(s3SettingsFromEnv({})).to.equal(null);
    expect(() => s3SettingsFromEnv({ S3_BUCKET: 'rec-bucket' })).to.throw(/S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are not/);
    expect(() => s3SettingsFromEnv({ S3_BUCKET: 'Bad_Bucket', S3_ACCESS_KEY_ID: 'a', S3_SECRET_ACCESS_KEY: 'b' })).to.throw(/S3_BUCKET/);
    expect(() => s3SettingsFromEnv({ S3_BUCKET: 'ok-bucket', S3_ENDPOINT: 'not a url', S3_ACCESS_KEY_ID: 'a', S3_SECRET_ACCESS_KEY: 'b' })).to.throw(/S3_ENDPOINT/);
    const s = s3SettingsFromEnv({ S3_BUCKET: 'ok-bucket', S3_ENDPOINT: 'http://127.0.0.1:9000', S3_ACCESS_KEY_ID: 'a', S3_SECRET_ACCESS_KEY: 'b', S3_FORCE_PATH_STYLE: 'true' })!;
    expect(s).to.include({ bucket: 'ok-bucket', region: 'us-east-1', forcePathStyle: true });
    expect(s3SettingsFromEnv({ S3_BUCKET: 'ok-bucket', S3_REGION: 'eu-west-1', S3_ACCESS_KEY_ID: 'a', S3_SECRET_ACCESS_KEY: 'b' })!.endpoint).to.equal('https://s3.eu-west-1.amazonaws.com');
  });
});

describe('S3 client against the loopback S3 server', () => {
  let s3: S3TestServer;
  let client: S3Client;
  const settings = () => ({ endpoint: s3.endpoint, bucket: s3.bucket, region: s3.region, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, forcePathStyle: true });
  before(async () => {
    s3 = await startS3Server();
    client = new S3Client(settings());
  });
  after(() => s3.close());

  it('put, head, get (streamed), delete; keys with spaces and unicode', async () => {
    const body = Buffer.from('hello object storage');
    const key = 'storage/dir one/ü file+x.bin';
    await client.put(key, body, { contentType: 'text/plain', metadata: { duration: '1.5' } });
    expect(s3.objects.get(key)?.body.equals(body)).to.equal(true);
    expect(await client.head(key)).to.deep.equal({ size: body.length, metadata: { duration: '1.5' } });
    const got = (await client.get(key))!;
    const chunks: Buffer[] = [];
    for await (const c of got.stream) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).to.equal('hello object storage');
    await client.delete(key);
    expect(s3.objects.has(key)).to.equal(false);
    expect(await client.get(key)).to.equal(null);
    expect(await client.head(key)).to.equal(null);
    await client.delete(key); // idempotent
  });

  it('a presigned GET works until it expires; a tampered one is refused', async () => {
    await client.put('p/obj', Buffer.from('presigned'));
    const url = client.presignGet('p/obj', 60);
    const ok = await fetch(url);
    expect(ok.status).to.equal(200);
    expect(await ok.text()).to.equal('presigned');
    const tampered = await fetch(url.replace('p/obj', 'p/other'));
    expect(tampered.status).to.equal(403);
    expect(await tampered.text()).to.contain('SignatureDoesNotMatch');
    const old = client.presignGet('p/obj', 60, new Date(Date.now() - 120_000));
    const expired = await fetch(old);
    expect(expired.status).to.equal(403);
    expect(await expired.text()).to.contain('Request has expired');
  });

  it('refusals: wrong secret, unknown key id, wrong region, unsigned request', async () => {
    const wrongSecret = new S3Client({ ...settings(), secretAccessKey: 'not-the-secret' });
    const e1 = await wrongSecret.put('x', Buffer.from('x')).then(
      () => null,
      (e: unknown) => e,
    );
    expect(e1).to.be.instanceOf(S3Error);
    expect((e1 as S3Error).code).to.equal('SignatureDoesNotMatch');
    expect(s3.objects.has('x')).to.equal(false);
    const e2 = await new S3Client({ ...settings(), accessKeyId: 'AKIAUNKNOWN' }).get('x').then(
      () => null,
      (e: unknown) => e,
    );
    expect((e2 as S3Error).code).to.equal('InvalidAccessKeyId');
    const e3 = await new S3Client({ ...settings(), region: 'eu-west-1' }).get('x').then(
      () => null,
      (e: unknown) => e,
    );
    expect((e3 as S3Error).code).to.equal('AuthorizationHeaderMalformed');
    const e4 = await new S3Client({ ...settings(), bucket: 'other-bucket' }).get('x').then(
      () => null,
      (e: unknown) => e,
    );
    expect((e4 as S3Error).code).to.equal('NoSuchBucket');
    const raw = await fetch(`${s3.endpoint}/${s3.bucket}/x`, { method: 'PUT', body: 'x' });
    expect(raw.status).to.equal(403);
    // a body that does not match its declared hash (the signature covers the hash, not the bytes)
    const h = signHeaders(settings(), { method: 'PUT', path: `/${s3.bucket}/y`, headers: { host: `127.0.0.1:${s3.port}` }, payloadHash: EMPTY_SHA }, new Date());
    const mismatch = await fetch(`${s3.endpoint}/${s3.bucket}/y`, { method: 'PUT', headers: h, body: 'not empty' });
    expect(mismatch.status).to.equal(400);
    expect(await mismatch.text()).to.contain('XAmzContentSHA256Mismatch');
  });

  it('a server that is down or silent: Unreachable, within the timeout', async () => {
    const port = await freePort();
    const down = new S3Client({ ...settings(), endpoint: `http://127.0.0.1:${port}` });
    const e = await down.put('k', Buffer.from('k')).then(
      () => null,
      (err: unknown) => err,
    );
    expect((e as S3Error).code).to.equal('Unreachable');
    expect((e as S3Error).message).to.match(/ECONNREFUSED/);
    const net = await import('node:net');
    const silent = net.createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const c = new S3Client({ ...settings(), endpoint: `http://127.0.0.1:${(silent.address() as { port: number }).port}`, timeoutMs: 300 });
      const t0 = Date.now();
      const e2 = await c.get('k').then(
        () => null,
        (err: unknown) => err,
      );
      expect((e2 as S3Error).code).to.equal('Unreachable');
      expect(Date.now() - t0).to.be.lessThan(5000);
    } finally {
      silent.close();
    }
  });
});
