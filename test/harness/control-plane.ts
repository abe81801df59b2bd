// A real control plane for integration tests: one etcd and one kube-apiserver on free
// loopback ports, with RBAC on and ServiceAccount token issuing on (TokenRequest works).
// By default there is no controller-manager, scheduler or kubelet (see the README's "Testing"
// notes); `controllers: true` adds them (kwok stands in for kubelets): see controllers.ts.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { k8sBins } from './bins.js';
import { HARNESS_ROOT, type ManagedProcess, startProcess, tail } from './processes.js';
import { createCa, createSigningKey, issueCert } from './pki.js';
import { waitFor } from './wait.js';
import { type Controllers, startControllers } from './controllers.js';

export interface ControlPlaneOptions {
  /** Write an audit log (every request, metadata level) to `<dir>/audit.log`. */
  readonly auditLog?: boolean;
  /** Seconds to wait for /readyz; kube-apiserver bootstrap is slow on 2 busy cores. */
  readonly startTimeoutSeconds?: number;
  /**
   * A fuller control plane: kube-controller-manager, kube-scheduler and a kwok node, so
   * Deployments get Running Pods with IPs, EndpointSlices (and mirrored ones) appear and
   * deleted namespaces are finalised. Off by default: the bare apiserver starts faster.
   */
  readonly controllers?: boolean;
  /** Pod IPs of the kwok node (with `controllers`); default 10.244.0.0/16. */
  readonly podCIDR?: string;
  /**
   * Dual-stack Services: kube-apiserver allocates ClusterIPs from an IPv4 and an IPv6 range
   * (`--service-cluster-ip-range=<v4>,<v6>`), so `PreferDualStack` Services get both families.
   */
  readonly dualStack?: boolean;
}

/** The Service ranges: IPv4 always; IPv6 second for a dual-stack control plane. */
export const SERVICE_RANGES = { ipv4: '10.0.0.0/16', ipv6: 'fd00:10:96::/108' } as const;

export interface ControlPlane {
  readonly name: string;
  /** https://127.0.0.1:<port> */
  readonly server: string;
  /** PEM of the CA that signed the serving certificate (what a client must trust). */
  readonly caPem: string;
  readonly caFile: string;
  /** Admin (system:masters) kubeconfig file, usable by kubectl and helm. */
  readonly kubeconfigPath: string;
  readonly dir: string;
  readonly auditLogPath: string | undefined;
  /** A fresh admin KubeConfig for @kubernetes/client-node. */
  adminConfig(): KubeConfig;
  /**
   * Kills only kube-apiserver, at once, like a crash (a graceful stop waits for open watches,
   * up to the harness's 15 s grace); etcd keeps the data and startApiserver() brings it back
   * on the same port.
   */
  stopApiserver(): Promise<void>;
  startApiserver(): Promise<void>;
  /**
   * The whole cluster lost at once: kube-apiserver and etcd killed (SIGKILL, no grace), their
   * data, PKI and ports kept, so restart() brings back the same cluster (same objects, same CA,
   * same ServiceAccount signing key: tokens issued before stay valid) at the same address.
   * For a bare control plane: `controllers` keep running and are not restarted.
   */
  kill(): Promise<void>;
  /** After kill(): etcd on its data directory, then kube-apiserver, both on their old ports. */
  restart(): Promise<void>;
  /** Name of the kwok node Pods are scheduled to (with `controllers`). */
  readonly nodeName: string | undefined;
  /** The last lines of the apiserver and etcd logs, for failure reports. */
  logs(lines?: number): string;
  stop(): Promise<void>;
}

/** A loopback port free at the time of asking (the caller binds it soon, or retries). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => { resolve(); }));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** CA, serving certificate for 127.0.0.1/localhost, admin client certificate, SA signing key. */
function generatePki(dir: string): void {
  createCa(dir, 'test-ca');
  issueCert(dir, 'apiserver', '/CN=kube-apiserver',
    'IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.0.0.1');
  issueCert(dir, 'admin', '/O=system:masters/CN=test-admin');
  createSigningKey(dir, 'sa');
}

function httpsGet(url: string, pki: string): Promise<number> {
  return new Promise((resolve) => {
    const req = https.get(url, {
      ca: readFileSync(path.join(pki, 'ca.crt')),
      cert: readFileSync(path.join(pki, 'admin.crt')),
      key: readFileSync(path.join(pki, 'admin.key')),
      timeout: 5_000,
    }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => { resolve(0); });
    req.on('timeout', () => { req.destroy(); resolve(0); });
  });
}

const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`;

/** A port picked by freePort was taken by someone else before etcd or the apiserver bound it. */
class PortTakenError extends Error {}

/**
 * Starts etcd + kube-apiserver on free loopback ports. Picking a free port and binding it are
 * two steps, so another process (e.g. a second control plane starting beside this one) can take
 * the port in between: that attempt is thrown away and retried on new ports.
 */
export async function startControlPlane(name: string, options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startControlPlaneOnce(name, options);
    } catch (err) {
      if (!(err instanceof PortTakenError) || attempt >= 3) throw err;
    }
  }
}

async function startControlPlaneOnce(name: string, options: ControlPlaneOptions): Promise<ControlPlane> {
  const bins = k8sBins();
  const dir = path.join(HARNESS_ROOT, `${name}-${String(process.pid)}-${randomBytes(4).toString('hex')}`);
  const pki = path.join(dir, 'pki');
  mkdirSync(dir, { recursive: true });
  generatePki(pki);
  const startTimeoutMs = (options.startTimeoutSeconds ?? 120) * 1000;

  const [etcdClientPort, etcdPeerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  const etcdUrl = `http://127.0.0.1:${String(etcdClientPort)}`;
  const etcdArgs = [
    `--name=${name}`, `--data-dir=${path.join(dir, 'etcd-data')}`,
    `--listen-client-urls=${etcdUrl}`, `--advertise-client-urls=${etcdUrl}`,
    `--listen-peer-urls=http://127.0.0.1:${String(etcdPeerPort)}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${String(etcdPeerPort)}`,
    `--initial-cluster=${name}=http://127.0.0.1:${String(etcdPeerPort)}`,
    '--unsafe-no-fsync=true', '--log-level=warn',
  ];
  let etcd = startProcess(`etcd-${name}`, bins.etcd, etcdArgs, path.join(dir, 'etcd.log'));

  const server = `https://127.0.0.1:${String(apiPort)}`;
  const auditLogPath = options.auditLog === true ? path.join(dir, 'audit.log') : undefined;
  if (auditLogPath) writeFileSync(path.join(dir, 'audit-policy.yaml'), AUDIT_POLICY);
  const apiserverArgs = [
    `--etcd-servers=${etcdUrl}`,
    '--bind-address=127.0.0.1', '--advertise-address=127.0.0.1', `--secure-port=${String(apiPort)}`,
    `--cert-dir=${pki}`, `--tls-cert-file=${path.join(pki, 'apiserver.crt')}`, `--tls-private-key-file=${path.join(pki, 'apiserver.key')}`,
    `--client-ca-file=${path.join(pki, 'ca.crt')}`,
    '--authorization-mode=RBAC',
    `--service-account-issuer=${server}`,
    `--service-account-key-file=${path.join(pki, 'sa.pub')}`,
    `--service-account-signing-key-file=${path.join(pki, 'sa.key')}`,
    `--service-cluster-ip-range=${options.dualStack === true ? `${SERVICE_RANGES.ipv4},${SERVICE_RANGES.ipv6}` : SERVICE_RANGES.ipv4}`, '--allow-privileged=true',
    // No controller-manager, so no "default" ServiceAccount would ever exist for pods.
    '--disable-admission-plugins=ServiceAccount',
    '--endpoint-reconciler-type=none',
    // One file, never rotated: the API server's default (--audit-log-maxsize=100, lumberjack)
    // moves the log aside at 100 MB, and the benchmarks, which read audit.log alone, then
    // counted only the requests after the last rotation (a 1,000-member fleet's rest window
    // showed 45 announce writes a second of the ~100 sent).
    ...(auditLogPath ? [`--audit-policy-file=${path.join(dir, 'audit-policy.yaml')}`, `--audit-log-path=${auditLogPath}`, '--audit-log-format=json', '--audit-log-maxsize=0'] : []),
  ];
  let apiserver: ManagedProcess | undefined;
  const apiserverLog = path.join(dir, 'apiserver.log');

  const logs = (lines = 60) => `--- ${name} kube-apiserver (${apiserverLog}) ---\n${tail(apiserverLog, lines)}\n` +
    `--- ${name} etcd ---\n${tail(path.join(dir, 'etcd.log'), Math.min(lines, 20))}`;

  const startApiserver = async () => {
    apiserver = startProcess(`kube-apiserver-${name}`, bins.kubeApiserver, apiserverArgs, apiserverLog);
    const proc = apiserver;
    try {
      await waitFor(`kube-apiserver ${name} /readyz`, async () => {
        if (!proc.isRunning()) throw new Error(`kube-apiserver ${name} exited early`);
        return (await httpsGet(`${server}/readyz`, pki)) === 200;
      }, { timeoutMs: startTimeoutMs, intervalMs: 250 });
      await waitFor(`namespace default on ${name}`, async () => (await httpsGet(`${server}/api/v1/namespaces/default`, pki)) === 200,
        { timeoutMs: 30_000, intervalMs: 250 });
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${logs(80)}`, { cause: err });
    }
  };

  const etcdHealthy = async () => {
    const proc = etcd;
    await waitFor(`etcd ${name} /health`, async () => {
      if (!proc.isRunning()) throw new Error(`etcd ${name} exited early`);
      return fetch(`${etcdUrl}/health`).then((r) => r.ok, () => false);
    }, { timeoutMs: 30_000, intervalMs: 100 });
  };

  try {
    await etcdHealthy();
    await startApiserver();
  } catch (err) {
    await apiserver?.stop();
    await etcd.stop();
    if (/address already in use/.test(logs(200))) {
      rmSync(dir, { recursive: true, force: true });
      throw new PortTakenError(`control plane ${name}: a port was taken before it could be bound`, { cause: err });
    }
    throw err;
  }

  const kubeconfigPath = path.join(dir, 'kubeconfig');
  writeFileSync(kubeconfigPath, `apiVersion: v1
kind: Config
clusters:
- name: ${name}
  cluster:
    server: ${server}
    certificate-authority: ${path.join(pki, 'ca.crt')}
users:
- name: ${name}-admin
  user:
    client-certificate: ${path.join(pki, 'admin.crt')}
    client-key: ${path.join(pki, 'admin.key')}
contexts:
- name: ${name}
  context: {cluster: ${name}, user: ${name}-admin}
current-context: ${name}
`);

  let controllers: Controllers | undefined;
  if (options.controllers === true) {
    const adminConfig = () => {
      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfigPath);
      return kc;
    };
    try {
      controllers = await startControllers({
        name, dir, kubeconfigPath, pkiDir: pki, adminConfig, podCIDR: options.podCIDR ?? '10.244.0.0/16', startTimeoutMs,
      });
    } catch (err) {
      await apiserver?.stop();
      await etcd.stop();
      throw err;
    }
  }

  let stopped = false;
  return {
    name,
    server,
    caPem: readFileSync(path.join(pki, 'ca.crt'), 'utf8'),
    caFile: path.join(pki, 'ca.crt'),
    kubeconfigPath,
    dir,
    auditLogPath,
    nodeName: controllers?.nodeName,
    adminConfig() {
      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfigPath);
      return kc;
    },
    async stopApiserver() {
      await apiserver?.kill();
    },
    startApiserver,
    async kill() {
      await Promise.all([apiserver?.kill(), etcd.kill()]);
    },
    async restart() {
      if (stopped) throw new Error(`control plane ${name} was stopped for good; restart() follows kill()`);
      if (etcd.isRunning() || apiserver?.isRunning() === true) throw new Error(`control plane ${name} is running; kill() it first`);
      etcd = startProcess(`etcd-${name}`, bins.etcd, etcdArgs, path.join(dir, 'etcd.log'));
      await etcdHealthy();
      await startApiserver();
    },
    logs: (lines?: number) => `${logs(lines)}${controllers ? `\n${controllers.logs(lines)}` : ''}`,
    async stop() {
      if (stopped) return;
      stopped = true;
      await controllers?.stop();
      await apiserver?.stop();
      await etcd.stop();
      if (process.env['CSA_KEEP_HARNESS'] !== '1') rmSync(dir, { recursive: true, force: true });
    },
  };
}
