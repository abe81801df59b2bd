// Test certificates from the openssl CLI: one place for the CA, serving and client
// certificates every harness piece (control planes, the fault proxy, unit-test servers) needs.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function openssl(cwd: string, args: string[]): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function ecKey(dir: string, out: string): void {
  openssl(dir, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', out]);
}

/** A CA (`ca.key`, `ca.crt`) in `dir`; returns its PEM. */
export function createCa(dir: string, commonName: string): string {
  mkdirSync(dir, { recursive: true });
  ecKey(dir, 'ca.key');
  openssl(dir, ['req', '-x509', '-new', '-key', 'ca.key', '-sha256', '-days', '7', '-subj', `/O=test/CN=${commonName}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature', '-out', 'ca.crt']);
  return readFileSync(path.join(dir, 'ca.crt'), 'utf8');
}

export interface IssuedCert {
  readonly certPem: string;
  readonly keyPem: string;
}

/**
 * `<name>.key` and `<name>.crt` signed by the CA in `dir`: a serving certificate for `subjectAltNames`
 * (e.g. `IP:127.0.0.1,DNS:localhost`), or a client certificate when they are omitted.
 */
export function issueCert(dir: string, name: string, subject: string, subjectAltNames?: string): IssuedCert {
  const usage = subjectAltNames === undefined ? 'extendedKeyUsage=clientAuth\n' : `extendedKeyUsage=serverAuth\nsubjectAltName=${subjectAltNames}\n`;
  writeFileSync(path.join(dir, `${name}.ext`), `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n${usage}`);
  ecKey(dir, `${name}.key`);
  openssl(dir, ['req', '-new', '-key', `${name}.key`, '-subj', subject, '-out', `${name}.csr`]);
  openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '7', '-sha256',
    '-extfile', `${name}.ext`, '-out', `${name}.crt`]);
  const read = (file: string) => readFileSync(path.join(dir, file), 'utf8');
  return { certPem: read(`${name}.crt`), keyPem: read(`${name}.key`) };
}

/** A public key file next to a private one: kube-apiserver cannot read one out of a PKCS#8 private key. */
export function createSigningKey(dir: string, name: string): void {
  ecKey(dir, `${name}.key`);
  openssl(dir, ['pkey', '-in', `${name}.key`, '-pubout', '-out', `${name}.pub`]);
}

/** A throwaway self-signed certificate for 127.0.0.1/localhost (it is its own CA), for unit-test TLS servers. */
export function selfSignedLoopbackCert(): { key: string; cert: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'csa-pki-'));
  try {
    openssl(dir, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'k', '-out', 'c', '-days', '1',
      '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost']);
    return { key: readFileSync(path.join(dir, 'k'), 'utf8'), cert: readFileSync(path.join(dir, 'c'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
