// A self-signed certificate for 127.0.0.1 made by openssl at test time (SAN IP:127.0.0.1, so a client
// that trusts it as its CA verifies the server fully).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface TestCert {
  dir: string;
  certPath: string;
  keyPath: string;
  cert: Buffer;
  key: Buffer;
}

export function selfSignedCert(): TestCert {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sipcert-'));
  const certPath = path.join(dir, 'cert.pem');
  const keyPath = path.join(dir, 'key.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyPath, '-out', certPath, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'],
    { stdio: 'ignore' },
  );
  return { dir, certPath, keyPath, cert: fs.readFileSync(certPath), key: fs.readFileSync(keyPath) };
}
