// The Helm chart, checked with the real helm binary: lint, schema, rendering, a config file
// the agent itself accepts, and installs into real control planes where the ServiceAccount's
// effective permissions are read back from the API server and pinned in
// test/fixtures/chart-permissions.json, so any widening of the agent's RBAC is a visible diff.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  AdmissionregistrationV1Api, ApiextensionsV1Api, AppsV1Api, AuthorizationV1Api, CoreV1Api, RbacAuthorizationV1Api,
  type V1ClusterRole, type V1ConfigMap, type V1Deployment, type V1NonResourceRule, type V1PolicyRule,
  type V1ResourceRule, type V1Role, type V1RoleBinding, type V1Service, type V1ValidatingAdmissionPolicy,
} from '@kubernetes/client-node';
import { parser as promqlParser } from '@prometheus-io/lezer-promql';
import { parseAllDocuments } from 'yaml';
import { DEFAULT_CONFIG, EXPORT_ENDPOINT_IP_TYPES, HEARTBEAT_INTERVALS, IMPORTABLE_KINDS, loadConfig, type AgentConfig } from '../../src/common/config/config.js';
import { EXEMPT_USERNAMES_ANNOTATION, exemptServiceAccountsOf } from '../../src/leader/admission-exemptions.js';
import { ANTREA_MEMBER_ROLE_RULES, MEMBER_ROLE_NAME } from '../../src/leader/decisions/member-role.js';
import { LOG_LEVELS } from '../../src/common/log/logger.js';
import { AgentMetrics } from '../../src/common/metrics/metrics.js';
import { parseMetrics } from '../harness/agent-process.js';
import { k8sBins, repoRoot } from '../harness/bins.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { issueToken, kubectl, loadCrdFiles, tokenConfig, waitForAccess } from '../harness/kube.js';
import { onFailureShowLogs } from '../harness/report.js';
import { parseConfigFlags } from '../../src/cli/config-flags.js';

const execFileAsync = promisify(execFile);

const CHART = path.join(repoRoot, 'charts', 'clusterset-agent');
const FIXTURE = path.join(repoRoot, 'test', 'fixtures', 'chart-permissions.json');
const RELEASE = 'csa';
const RELEASE_NS = 'clusterset-agent';
const FULLNAME = 'csa-clusterset-agent';
const CLUSTER_ROLE = `${RELEASE_NS}-${FULLNAME}`;
const OTHER_NS = 'default';
const LEADER_POLICY = 'clusterset-agent-resourceexports-antrea-multicluster';
const ANNOUNCE_POLICY = 'clusterset-agent-memberclusterannounces-antrea-multicluster';
const EVENT_POLICY = 'clusterset-agent-duplicate-reports-antrea-multicluster';
/** What `leader run` may do in the leader namespace, and nothing more (leader-mode.test.ts runs it with exactly this). */
const LEADER_CONTROLLER_RULES = [
  { apiGroups: ['multicluster.crd.antrea.io'], resources: ['memberclusterannounces'], verbs: ['get', 'list', 'watch', 'update', 'delete'] },
  { apiGroups: ['multicluster.crd.antrea.io'], resources: ['resourceexports'], verbs: ['get', 'list', 'watch', 'update', 'delete'] },
  { apiGroups: ['multicluster.crd.antrea.io'], resources: ['resourceexports/status'], verbs: ['update'] },
  { apiGroups: ['multicluster.crd.antrea.io'], resources: ['resourceimports'], verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'] },
  { apiGroups: ['multicluster.crd.antrea.io'], resources: ['clustersets'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['multicluster.crd.antrea.io'], resources: ['clustersets/status'], verbs: ['update'] },
  { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'watch', 'create'] },
  { apiGroups: [''], resources: ['configmaps'], resourceNames: ['clusterset-member-ids'], verbs: ['get', 'update'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch', 'list', 'watch'] },
];

// ---------------------------------------------------------------------------------------------
// helm

let helmHome: string | undefined;

function helmEnv(): NodeJS.ProcessEnv {
  helmHome ??= mkdtempSync(path.join(os.tmpdir(), 'csa-helm-'));
  // Keep helm's cache/config/data out of the user's home.
  return {
    ...process.env,
    HELM_CACHE_HOME: path.join(helmHome, 'cache'),
    HELM_CONFIG_HOME: path.join(helmHome, 'config'),
    HELM_DATA_HOME: path.join(helmHome, 'data'),
  };
}

interface HelmResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function helm(args: readonly string[], kubeconfig?: string): Promise<HelmResult> {
  const full = kubeconfig === undefined ? [...args] : ['--kubeconfig', kubeconfig, ...args];
  try {
    const { stdout, stderr } = await execFileAsync(k8sBins().helm, full, { encoding: 'utf8', env: helmEnv(), timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: unknown; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(err) };
  }
}

/** --set for each value; --set-json for fractions, which --set would turn into strings. */
function sets(values: Readonly<Record<string, string | number | boolean>>): string[] {
  return Object.entries(values).flatMap(([key, value]) =>
    typeof value === 'number' && !Number.isInteger(value) ? ['--set-json', `${key}=${String(value)}`] : ['--set', `${key}=${String(value)}`]);
}

interface K8sObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly annotations?: Record<string, string> };
}

/** `helm template` with the given --set values; fails the test when helm does. */
async function render(values: Readonly<Record<string, string | number | boolean>> = {}): Promise<K8sObject[]> {
  const res = await helm(['template', RELEASE, CHART, '--namespace', RELEASE_NS, ...sets(values)]);
  assert.equal(res.code, 0, `helm template failed:\n${res.stderr}`);
  return parseAllDocuments(res.stdout).flatMap((doc) => {
    assert.deepEqual(doc.errors, [], 'rendered YAML must parse');
    const value = doc.toJS() as K8sObject | null;
    return value === null ? [] : [value];
  });
}

function find(docs: readonly K8sObject[], kind: string, name?: string): K8sObject {
  const found = docs.filter((d) => d.kind === kind && (name === undefined || d.metadata.name === name));
  assert.equal(found.length, 1, `expected exactly one ${kind}${name === undefined ? '' : ` ${name}`}, got ${String(found.length)}`);
  const [only] = found;
  assert.ok(only);
  return only;
}

function kinds(docs: readonly K8sObject[]): string[] {
  return docs.map((d) => d.kind).sort();
}

/** The agent's config file out of the rendered (or installed) ConfigMap, loaded by the agent's own loader. */
function loadRenderedConfig(configMap: V1ConfigMap): AgentConfig {
  const text = configMap.data?.['config.yaml'];
  assert.ok(text !== undefined, 'the ConfigMap holds config.yaml');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'csa-chart-config-'));
  try {
    const file = path.join(dir, 'config.yaml');
    writeFileSync(file, text);
    return loadConfig({ flags: parseConfigFlags(['--config', file]), env: { POD_NAMESPACE: RELEASE_NS } });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Effective permissions

interface Permission {
  readonly apiGroup: string;
  readonly resource: string;
  readonly resourceNames?: readonly string[];
  readonly verbs: readonly string[];
}

/**
 * One entry per (apiGroup, resource[, resourceNames]) with the union of its verbs, sorted.
 * Independent of how the rules happen to be grouped in the Role/ClusterRole, so the fixture
 * changes only when the permissions do.
 */
function flattenResourceRules(rules: readonly V1ResourceRule[]): Permission[] {
  const merged = new Map<string, { apiGroup: string; resource: string; resourceNames: string[]; verbs: Set<string> }>();
  for (const rule of rules) {
    const names = [...(rule.resourceNames ?? [])].sort();
    for (const apiGroup of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        const key = JSON.stringify([apiGroup, resource, names]);
        const entry = merged.get(key) ?? { apiGroup, resource, resourceNames: names, verbs: new Set<string>() };
        for (const verb of rule.verbs) entry.verbs.add(verb);
        merged.set(key, entry);
      }
    }
  }
  return [...merged.values()]
    .map(({ apiGroup, resource, resourceNames, verbs }) => ({
      apiGroup, resource, ...(resourceNames.length > 0 ? { resourceNames } : {}), verbs: [...verbs].sort(),
    }))
    .sort((a, b) => a.apiGroup.localeCompare(b.apiGroup) || a.resource.localeCompare(b.resource) ||
      JSON.stringify(a.resourceNames ?? []).localeCompare(JSON.stringify(b.resourceNames ?? [])));
}

function flattenNonResourceRules(rules: readonly V1NonResourceRule[]): { url: string; verbs: string[] }[] {
  const merged = new Map<string, Set<string>>();
  for (const rule of rules) {
    for (const url of rule.nonResourceURLs ?? []) {
      const verbs = merged.get(url) ?? new Set<string>();
      for (const verb of rule.verbs) verbs.add(verb);
      merged.set(url, verbs);
    }
  }
  return [...merged].map(([url, verbs]) => ({ url, verbs: [...verbs].sort() })).sort((a, b) => a.url.localeCompare(b.url));
}

/**
 * What every authenticated user may do (ClusterRoles system:basic-user, system:discovery and
 * system:public-info-viewer, bound to system:authenticated by the API server's bootstrap
 * policy), plus the OIDC discovery URLs every ServiceAccount may read
 * (system:service-account-issuer-discovery, bound to system:serviceaccounts). They are
 * asserted to be present exactly like this, then left out of the comparison.
 */
const BUILTIN_RESOURCE_PERMISSIONS: readonly Permission[] = [
  { apiGroup: 'authentication.k8s.io', resource: 'selfsubjectreviews', verbs: ['create'] },
  { apiGroup: 'authorization.k8s.io', resource: 'selfsubjectaccessreviews', verbs: ['create'] },
  { apiGroup: 'authorization.k8s.io', resource: 'selfsubjectrulesreviews', verbs: ['create'] },
];
const BUILTIN_NON_RESOURCE_PERMISSIONS: readonly { url: string; verbs: string[] }[] = [
  '/.well-known/openid-configuration', '/.well-known/openid-configuration/',
  '/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*',
  '/openid/v1/jwks', '/openid/v1/jwks/', '/readyz', '/version', '/version/',
].map((url) => ({ url, verbs: ['get'] }));

async function effectivePermissions(cp: ControlPlane, token: string, namespace: string): Promise<Permission[]> {
  const review = await tokenConfig(cp, token).makeApiClient(AuthorizationV1Api).createSelfSubjectRulesReview({ body: { spec: { namespace } } });
  const status = review.status;
  assert.ok(status, 'SelfSubjectRulesReview returned a status');
  assert.equal(status.incomplete, false, `rules review in ${namespace} is incomplete: ${status.evaluationError ?? ''}`);
  assert.deepEqual(flattenNonResourceRules(status.nonResourceRules), BUILTIN_NON_RESOURCE_PERMISSIONS,
    `non-resource rules in ${namespace} must be exactly the built-in discovery/health ones`);
  const all = flattenResourceRules(status.resourceRules);
  for (const builtin of BUILTIN_RESOURCE_PERMISSIONS) {
    assert.ok(all.some((p) => JSON.stringify(p) === JSON.stringify(builtin)),
      `expected the built-in permission ${JSON.stringify(builtin)} in ${namespace}, got ${JSON.stringify(all)}`);
  }
  return all.filter((p) => !BUILTIN_RESOURCE_PERMISSIONS.some((b) => JSON.stringify(b) === JSON.stringify(p)));
}

async function allowed(cp: ControlPlane, token: string, attrs: { verb: string; resource: string; group?: string; namespace?: string }): Promise<boolean> {
  const review = await tokenConfig(cp, token).makeApiClient(AuthorizationV1Api).createSelfSubjectAccessReview({
    body: { spec: { resourceAttributes: { verb: attrs.verb, resource: attrs.resource, group: attrs.group ?? '', ...(attrs.namespace ? { namespace: attrs.namespace } : {}) } } },
  });
  return review.status?.allowed === true;
}

function ruleShape(rules: readonly V1PolicyRule[] | undefined): { apiGroups: string[]; resources: string[]; verbs: string[] }[] {
  return (rules ?? []).map((r) => ({ apiGroups: [...(r.apiGroups ?? [])], resources: [...(r.resources ?? [])], verbs: [...r.verbs] }));
}

function statusCode(err: unknown): unknown {
  return (err as { code?: unknown }).code;
}

// ---------------------------------------------------------------------------------------------

after(() => {
  if (helmHome !== undefined) rmSync(helmHome, { recursive: true, force: true });
});

describe('Helm chart: lint, schema and rendering', () => {
  it('passes helm lint --strict for mode=member (defaults) and mode=leader', async () => {
    for (const extra of [[], ['--set', 'mode=leader'], ['--set', 'importACNP=true,importLabelIdentity=true,replicaCount=2'], ['--set', 'config.exports.enabled=false'], ['--set', 'dns.coreDNSAccess=true']]) {
      const res = await helm(['lint', '--strict', CHART, ...extra]);
      assert.equal(res.code, 0, `helm lint --strict ${extra.join(' ')} failed:\n${res.stdout}\n${res.stderr}`);
      assert.match(res.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
      assert.doesNotMatch(res.stdout, /\[(WARNING|ERROR)\]/, res.stdout);
    }
  });

  it('has a draft-07 schema that closes every object and whose enums match the agent', () => {
    const schema = JSON.parse(readFileSync(path.join(CHART, 'values.schema.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(schema['$schema'], 'http://json-schema.org/draft-07/schema#');
    // Affinity terms are Kubernetes objects passed through as written; everything else is closed.
    const passThrough = /^affinity\.[a-zA-Z]+\.[a-zA-Z]+(\.nodeSelectorTerms)?\.items$/;
    const open: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (typeof node !== 'object' || node === null) return;
      const n = node as Record<string, unknown>;
      if (n['type'] === 'object') {
        if (n['properties'] !== undefined && n['additionalProperties'] !== false) open.push(where);
        if (n['properties'] === undefined && n['additionalProperties'] === undefined && !passThrough.test(where)) open.push(where);
      }
      for (const [key, child] of Object.entries((n['properties'] ?? {}) as Record<string, unknown>)) walk(child, where === '' ? key : `${where}.${key}`);
      if (n['items'] !== undefined) walk(n['items'], `${where}.items`);
      if (typeof n['additionalProperties'] === 'object') walk(n['additionalProperties'], `${where}.*`);
    };
    walk(schema, '');
    assert.deepEqual(open, [], 'objects that accept unknown keys');

    const at = (...keys: string[]): Record<string, unknown> => {
      let node: unknown = schema;
      for (const key of keys) node = key === 'items' ? (node as Record<string, unknown>)['items'] : ((node as Record<string, unknown>)['properties'] as Record<string, unknown>)[key];
      return node as Record<string, unknown>;
    };
    assert.deepEqual(at('config', 'logLevel')['enum'], [...LOG_LEVELS]);
    assert.deepEqual(at('config', 'imports', 'allowedKinds', 'items')['enum'], [...IMPORTABLE_KINDS]);
    assert.deepEqual(at('config', 'exports', 'endpointIPType')['enum'], [...EXPORT_ENDPOINT_IP_TYPES]);
    assert.deepEqual(at('config', 'heartbeat', 'intervalSeconds')['enum'], [...HEARTBEAT_INTERVALS]);
    assert.deepEqual(at('mode')['enum'], ['member', 'leader']);
  });

  it('rejects a misspelt key, a bad enum and a too-small integer, naming the field', async () => {
    const cases: [string, RegExp][] = [
      ['config.heartbeat.intervalSecond=5', /at '\/config\/heartbeat': additional properties 'intervalSecond' not allowed/],
      ['config.logLevel=verbose', /at '\/config\/logLevel': value must be one of 'error', 'warn', 'info', 'debug'/],
      ['mode=both', /at '\/mode': value must be one of 'member', 'leader'/],
      ['config.imports.allowedKinds={Pods}', /at '\/config\/imports\/allowedKinds\/0': value must be one of/],
      ['config.heartbeat.failureThreshold=0', /at '\/config\/heartbeat\/failureThreshold': minimum/],
      ['config.heartbeat.intervalSeconds=7', /at '\/config\/heartbeat\/intervalSeconds': value must be one of/],
      ['config.exports.endpointIPType=NodeIP', /at '\/config\/exports\/endpointIPType': value must be one of 'ClusterIP', 'PodIP'/],
      ['config.exports.podCIDRs={10.244.0.0}', /at '\/config\/exports\/podCIDRs\/0': '10\.244\.0\.0' does not match pattern/],
      ['config.exports.deniedNamespaces={Not_OK}', /at '\/config\/exports\/deniedNamespaces\/0': 'Not_OK' does not match pattern/],
    ];
    for (const [set, message] of cases) {
      const res = await helm(['template', RELEASE, CHART, '--namespace', RELEASE_NS, '--set', set]);
      assert.notEqual(res.code, 0, `--set ${set} must be rejected`);
      assert.match(res.stderr, /values don't meet the specifications of the schema/, res.stderr);
      assert.match(res.stderr, message, res.stderr);
    }
    // The agent computes these itself; the chart refuses them instead of rendering a file the agent rejects.
    const computed = await helm(['template', RELEASE, CHART, '--set', 'config.imports.alwaysDeniedNamespaces={x}']);
    assert.match(computed.stderr, /additional properties 'alwaysDeniedNamespaces' not allowed/);
    const computedExports = await helm(['template', RELEASE, CHART, '--set', 'config.exports.alwaysDeniedNamespaces={x}']);
    assert.match(computedExports.stderr, /at '\/config\/exports': additional properties 'alwaysDeniedNamespaces' not allowed/);
    const ns = await helm(['template', RELEASE, CHART, '--set', 'config.namespace=x']);
    assert.match(ns.stderr, /at '\/config': additional properties 'namespace' not allowed/);
    // A kind whose RBAC is off is refused with the toggle to use.
    const acnp = await helm(['template', RELEASE, CHART, '--set', 'config.imports.allowedKinds={ServiceImport,AntreaClusterNetworkPolicy}']);
    assert.match(acnp.stderr, /set importACNP=true/);
  });

  it('renders the member objects with a restricted Deployment: securityContext, probes, ports, POD_NAMESPACE, /tmp', async () => {
    const docs = await render();
    assert.deepEqual(kinds(docs), ['ClusterRole', 'ClusterRoleBinding', 'ConfigMap', 'Deployment', 'Role', 'RoleBinding', 'ServiceAccount']);
    const deployment = find(docs, 'Deployment', FULLNAME) as V1Deployment;
    assert.equal(deployment.metadata?.namespace, RELEASE_NS);
    const spec = deployment.spec;
    assert.ok(spec);
    assert.equal(spec.replicas, 1);
    assert.deepEqual(spec.selector.matchLabels, { 'app.kubernetes.io/name': 'clusterset-agent', 'app.kubernetes.io/instance': RELEASE });
    assert.equal(spec.strategy?.type, 'Recreate', 'one replica without leader election must never overlap another');
    const pod = spec.template.spec;
    assert.ok(pod);
    assert.equal(pod.serviceAccountName, FULLNAME);
    assert.deepEqual(pod.securityContext, { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } });
    assert.equal(pod.containers.length, 1);
    const [container] = pod.containers;
    assert.ok(container);
    assert.equal(container.image, 'clusterset-agent:0.1.0');
    assert.deepEqual(container.args, ['run', '--config', '/etc/clusterset-agent/config.yaml']);
    assert.deepEqual(container.securityContext, {
      runAsNonRoot: true, runAsUser: 1000, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' },
    });
    assert.deepEqual(container.env, [{ name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } }]);
    assert.deepEqual(container.ports, [
      { name: 'health', containerPort: 8080, protocol: 'TCP' },
      { name: 'metrics', containerPort: 9090, protocol: 'TCP' },
    ]);
    assert.deepEqual(container.livenessProbe?.httpGet, { path: '/healthz', port: 'health' });
    assert.deepEqual(container.readinessProbe?.httpGet, { path: '/readyz', port: 'health' });
    assert.ok(container.resources?.requests && container.resources.limits, 'resources are set');
    assert.deepEqual(container.volumeMounts, [
      { name: 'config', mountPath: '/etc/clusterset-agent', readOnly: true },
      { name: 'tmp', mountPath: '/tmp' },
    ]);
    assert.deepEqual(pod.volumes?.find((v) => v.name === 'tmp')?.emptyDir, { sizeLimit: '64Mi' });
    assert.equal(pod.volumes.find((v) => v.name === 'config')?.configMap?.name, FULLNAME);

    // The checksum rolls the Pods when, and only when, the config file changes.
    const checksum = spec.template.metadata?.annotations?.['checksum/config'];
    assert.match(checksum ?? '', /^[0-9a-f]{64}$/);
    const sameAgain = find(await render({ 'podAnnotations.x': 'y' }), 'Deployment') as V1Deployment;
    assert.equal(sameAgain.spec?.template.metadata?.annotations?.['checksum/config'], checksum);
    const changed = find(await render({ 'config.logLevel': 'debug' }), 'Deployment') as V1Deployment;
    assert.notEqual(changed.spec?.template.metadata?.annotations?.['checksum/config'], checksum);
  });

  it('renders a config file that the agent loads to exactly its own defaults', async () => {
    const cfg = loadRenderedConfig(find(await render(), 'ConfigMap', FULLNAME));
    assert.deepEqual(cfg, DEFAULT_CONFIG);
  });

  it('derives leader election, extra kinds, LabelIdentity and bind addresses into a config the agent accepts', async () => {
    const docs = await render({
      replicaCount: 2, importACNP: true, importLabelIdentity: true, 'metrics.enabled': false, 'health.port': 8081,
      'config.heartbeat.intervalSeconds': 30, 'config.heartbeat.requestTimeoutSeconds': 2.5,
      'config.imports.deniedNamespaces': '{team-a,team-b}', 'config.logLevel': 'debug',
    });
    const cfg = loadRenderedConfig(find(docs, 'ConfigMap', FULLNAME));
    assert.equal(cfg.namespace, RELEASE_NS);
    assert.equal(cfg.leaderElection.enabled, true, 'replicaCount > 1 forces leader election');
    assert.deepEqual(cfg.imports.allowedKinds, ['ServiceImport', 'Endpoints', 'ClusterInfo', 'AntreaClusterNetworkPolicy', 'LabelIdentity']);
    assert.equal(cfg.imports.enableLabelIdentity, true);
    assert.deepEqual(cfg.imports.deniedNamespaces, ['team-a', 'team-b']);
    assert.equal(cfg.metrics.bindAddress, '0');
    assert.equal(cfg.health.bindAddress, ':8081');
    assert.equal(cfg.heartbeat.intervalSeconds, 30);
    assert.equal(cfg.heartbeat.requestTimeoutSeconds, 2.5);
    assert.equal(cfg.logLevel, 'debug');

    const deployment = find(docs, 'Deployment') as V1Deployment;
    assert.equal(deployment.spec?.replicas, 2);
    assert.equal(deployment.spec.strategy, undefined, 'with leader election a rolling update is safe');
    const container = deployment.spec.template.spec?.containers[0];
    assert.deepEqual(container?.ports, [{ name: 'health', containerPort: 8081, protocol: 'TCP' }]);
    assert.equal(container.livenessProbe?.httpGet?.port, 'health');

    const clusterRole = find(docs, 'ClusterRole', CLUSTER_ROLE) as V1ClusterRole;
    const extra = flattenResourceRules(clusterRole.rules ?? []).filter((p) => p.apiGroup === 'crd.antrea.io' || p.resource === 'labelidentities');
    const crud = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
    assert.deepEqual(extra, [
      { apiGroup: 'crd.antrea.io', resource: 'clusternetworkpolicies', verbs: crud },
      { apiGroup: 'crd.antrea.io', resource: 'tiers', verbs: ['get', 'list', 'watch'] },
      { apiGroup: 'multicluster.crd.antrea.io', resource: 'labelidentities', verbs: crud },
    ]);
  });

  it('renders the export settings into a config the agent accepts, and grants export RBAC only when exports are enabled', async () => {
    const docs = await render({
      'config.exports.endpointIPType': 'PodIP', 'config.exports.serviceCIDR': '10.96.0.0/12',
      'config.exports.podCIDRs': '{10.244.0.0/16,fd00:10:244::/56}', 'config.exports.deniedNamespaces': '{legacy}',
    });
    const cfg = loadRenderedConfig(find(docs, 'ConfigMap', FULLNAME));
    assert.deepEqual(cfg.exports, {
      enabled: true, allowedNamespaces: [], deniedNamespaces: ['legacy'],
      alwaysDeniedNamespaces: ['kube-system', 'kube-public', 'kube-node-lease', RELEASE_NS],
      endpointIPType: 'PodIP', serviceCIDR: '10.96.0.0/12', podCIDRs: ['10.244.0.0/16', 'fd00:10:244::/56'], resyncSeconds: 600,
    });
    const exportRules = (docsIn: readonly K8sObject[]) => {
      const cluster = flattenResourceRules((find(docsIn, 'ClusterRole', CLUSTER_ROLE) as V1ClusterRole).rules ?? [])
        .filter((p) => ['serviceexports', 'serviceexports/status', 'endpointslices'].includes(p.resource));
      const namespaced = flattenResourceRules((find(docsIn, 'Role', FULLNAME) as V1Role).rules ?? []).filter((p) => p.resource === 'gateways');
      return { cluster, namespaced };
    };
    assert.deepEqual(exportRules(docs), {
      cluster: [
        // Imports write EndpointSlices (create/update/delete); exports add watch.
        { apiGroup: 'discovery.k8s.io', resource: 'endpointslices', verbs: ['create', 'delete', 'get', 'list', 'update', 'watch'] },
        { apiGroup: 'multicluster.x-k8s.io', resource: 'serviceexports', verbs: ['get', 'list', 'watch'] },
        { apiGroup: 'multicluster.x-k8s.io', resource: 'serviceexports/status', verbs: ['patch', 'update'] },
      ],
      namespaced: [{ apiGroup: 'multicluster.crd.antrea.io', resource: 'gateways', verbs: ['get', 'list', 'watch'] }],
    });
    const disabled = await render({ 'config.exports.enabled': false });
    assert.deepEqual(exportRules(disabled), {
      cluster: [{ apiGroup: 'discovery.k8s.io', resource: 'endpointslices', verbs: ['create', 'delete', 'get', 'list', 'update'] }],
      namespaced: [],
    });
    assert.equal(loadRenderedConfig(find(disabled, 'ConfigMap', FULLNAME)).exports.enabled, false);
  });

  it('grants no wildcard and no Secret outside the release namespace, whatever the toggles', async () => {
    for (const values of [{}, { importACNP: true, importLabelIdentity: true }]) {
      const docs = await render(values);
      const clusterRole = find(docs, 'ClusterRole', CLUSTER_ROLE) as V1ClusterRole;
      const role = find(docs, 'Role', FULLNAME) as V1Role;
      for (const rule of [...(clusterRole.rules ?? []), ...(role.rules ?? [])]) {
        assert.ok(![...(rule.apiGroups ?? []), ...(rule.resources ?? []), ...rule.verbs].includes('*'), `wildcard in ${JSON.stringify(rule)}`);
      }
      assert.ok(!(clusterRole.rules ?? []).some((r) => r.resources?.includes('secrets')), 'the ClusterRole must never grant secrets');
      const binding = find(docs, 'RoleBinding', FULLNAME) as V1RoleBinding;
      assert.equal(binding.metadata?.namespace, RELEASE_NS);
    }
  });

  it('renders in mode=leader: the leader Namespace, Antrea\'s member Role, both admission policies and the leader controller with its own Role', async () => {
    const docs = await render({ mode: 'leader' });
    const fullname = `${RELEASE}-clusterset-agent`;
    assert.deepEqual(docs.map((d) => `${d.kind}/${d.metadata.namespace ?? ''}/${d.metadata.name}`).sort(),
      [`Deployment/${RELEASE_NS}/${fullname}-leader`, 'Namespace//antrea-multicluster', `Role/antrea-multicluster/${MEMBER_ROLE_NAME}`,
        `Role/antrea-multicluster/${fullname}-leader`, `RoleBinding/antrea-multicluster/${fullname}-leader`, `ServiceAccount/${RELEASE_NS}/${fullname}`,
        `ValidatingAdmissionPolicy//${EVENT_POLICY}`, `ValidatingAdmissionPolicy//${ANNOUNCE_POLICY}`, `ValidatingAdmissionPolicy//${LEADER_POLICY}`,
        `ValidatingAdmissionPolicyBinding//${EVENT_POLICY}`, `ValidatingAdmissionPolicyBinding//${ANNOUNCE_POLICY}`, `ValidatingAdmissionPolicyBinding//${LEADER_POLICY}`]);
    const roles = docs.filter((d) => d.kind === 'Role') as V1Role[];
    assert.deepEqual(ruleShape(roles.find((r) => r.metadata?.name === MEMBER_ROLE_NAME)?.rules), ruleShape(ANTREA_MEMBER_ROLE_RULES));
    assert.deepEqual(roles.find((r) => r.metadata?.name === `${fullname}-leader`)?.rules, LEADER_CONTROLLER_RULES);
    const deployment = find(docs, 'Deployment') as V1Deployment;
    assert.deepEqual(deployment.spec?.template.spec?.containers[0]?.args, ['leader', 'run']);
    assert.deepEqual(kinds(await render({ mode: 'leader', 'leader.createNamespace': false, 'leader.controller.enabled': false })),
      ['Role', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicyBinding']);
    assert.deepEqual(kinds(await render({ mode: 'leader', 'leader.createNamespace': false, 'leader.memberRole.create': false, 'leader.admissionPolicy.create': false, 'leader.controller.enabled': false })), []);
    // Installed into the leader namespace itself, the leader controller is exempt from both policies.
    const inLeaderNs = await render({ mode: 'leader', 'leader.namespace': RELEASE_NS, 'leader.createNamespace': false });
    for (const policy of inLeaderNs.filter((d) => d.kind === 'ValidatingAdmissionPolicy')) {
      assert.match(JSON.stringify(policy), new RegExp(`system:serviceaccount:${RELEASE_NS}:${fullname}'`), policy.metadata.name);
    }
        // Two replicas elect one through a Lease they may write in the release namespace.
    const ha = await render({ mode: 'leader', 'leader.controller.replicaCount': 2 });
    assert.ok(ha.some((d) => d.kind === 'Role' && d.metadata.name === `${fullname}-leader-election`));
    // test/integration/export-admission.test.ts exercises the policy itself.
  });

  it('names on each admission policy, in an annotation create-member-token reads, exactly the usernames its CEL exempts', async () => {
    const leaderNs = 'antrea-multicluster';
    const cases: readonly Readonly<Record<string, string | boolean>>[] = [
      { mode: 'leader' },
      { mode: 'leader', 'leader.controller.enabled': false },
      { mode: 'leader', 'leader.admissionPolicy.exemptServiceAccounts': '{ops-robot,ops-two}' },
      { mode: 'leader', 'leader.namespace': RELEASE_NS, 'leader.createNamespace': false },
    ];
    for (const values of cases) {
      const what = JSON.stringify(values);
      const namespace = typeof values['leader.namespace'] === 'string' ? values['leader.namespace'] : leaderNs;
      const policies = (await render(values)).filter((d) => d.kind === 'ValidatingAdmissionPolicy') as V1ValidatingAdmissionPolicy[];
      assert.equal(policies.length, 3, what);
      const fromCel = new Set<string>();
      for (const policy of policies) {
        const cel = (policy.spec?.matchConditions ?? []).map((c) => c.expression).join('\n');
        // The usernames the CEL compares the caller with: quoted, and complete (not a startsWith prefix ending in ':').
        const literals = [...cel.matchAll(/'(system:serviceaccount:[a-z0-9-]+:[a-z0-9.-]+)'/g)].map((m) => m[1] ?? '');
        const annotated = policy.metadata?.annotations?.[EXEMPT_USERNAMES_ANNOTATION];
        assert.ok(annotated !== undefined, `${policy.metadata?.name ?? ''} carries ${EXEMPT_USERNAMES_ANNOTATION} (${what})`);
        assert.deepEqual(annotated.split(',').filter((u) => u !== '').sort(), [...new Set(literals)].sort(), `${policy.metadata?.name ?? ''} (${what})`);
        for (const username of literals) if (username.startsWith(`system:serviceaccount:${namespace}:`)) fromCel.add(username.split(':')[3] ?? '');
      }
      // What create-member-token refuses is what the CEL exempts in the leader namespace.
      assert.deepEqual([...exemptServiceAccountsOf(policies, namespace)].sort(), [...fromCel].sort(), what);
    }
    assert.deepEqual([...exemptServiceAccountsOf((await render({ mode: 'leader', 'leader.controller.enabled': false }))
      .filter((d) => d.kind === 'ValidatingAdmissionPolicy') as V1ValidatingAdmissionPolicy[], leaderNs)], ['antrea-mc-controller']);
  });
});

// ---------------------------------------------------------------------------------------------
// Monitoring (metrics Service, ServiceMonitor, PodMonitor, PrometheusRule) and scheduling

interface MonitorSpec {
  readonly selector: { readonly matchLabels: Record<string, string> };
  readonly namespaceSelector: { readonly matchNames: string[] };
  readonly endpoints?: { port: string; path: string; interval?: string; scrapeTimeout?: string }[];
  readonly podMetricsEndpoints?: { port: string; path: string; interval?: string; scrapeTimeout?: string }[];
}
interface Monitor extends K8sObject {
  readonly metadata: K8sObject['metadata'] & { readonly labels?: Record<string, string> };
  readonly spec: MonitorSpec;
}
interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
}
interface PrometheusRule extends K8sObject {
  readonly spec: { readonly groups: { readonly name: string; readonly rules: AlertRule[] }[] };
}

/** Every label of `subset` is in `of` with the same value. */
function assertSelects(subset: Readonly<Record<string, string>> | undefined, of: Readonly<Record<string, string>> | undefined, what: string): void {
  assert.ok(subset && Object.keys(subset).length > 0, `${what}: empty selector`);
  for (const [key, value] of Object.entries(subset)) assert.equal(of?.[key], value, `${what}: ${key}=${value} not in ${JSON.stringify(of)}`);
}

/** The metrics the agent exports, with their label names, read from src/common/metrics/metrics.ts itself. */
async function exportedMetrics(): Promise<Map<string, Set<string>>> {
  const m = new AgentMetrics({ defaultMetrics: false });
  m.observeBeat('cs', 'leader', 0.01, true);
  m.observeBeat('cs', 'leader', 0.01, false, 'Unauthorized');
  m.setConnected('cs', 'leader', true);
  m.recordImport('cs', 'ServiceImport', 'created');
  m.recordRejection('cs', 'deniedNamespace');
  m.setElected(true);
  m.setLeaderMembers('cs', 1, 2);
  m.setLeaderDuplicates('cs', 1);
  m.leaderExportsFrom(() => ({ accepted: 2, refused: 1, pending: 0 }));
  m.recordAggregationError('Conflict');
  m.recordLeaderWrite('resourceimports', 'create');
  m.setTokenExpiry('cs', 'leader', Date.now() + 3600_000);
  const names = new Map<string, Set<string>>();
  for (const sample of parseMetrics(await m.metrics())) {
    const labels = names.get(sample.name) ?? new Set<string>();
    for (const label of Object.keys(sample.labels)) if (label !== 'le') labels.add(label);
    names.set(sample.name, labels);
  }
  return names;
}

/** Parses PromQL with Prometheus' own grammar: syntax errors, metric names and label names used. */
function promql(expr: string): { errors: number[]; metrics: string[]; labels: string[] } {
  const errors: number[] = [];
  const metrics = new Set<string>();
  const labels = new Set<string>();
  promqlParser.parse(expr).iterate({
    enter: (node) => {
      if (node.type.isError) errors.push(node.from);
      else if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector') metrics.add(expr.slice(node.from, node.to));
      else if (node.name === 'LabelName') labels.add(expr.slice(node.from, node.to));
    },
  });
  return { errors, metrics: [...metrics].sort(), labels: [...labels].sort() };
}

describe('Helm chart: metrics Service, monitors, alerts and anti-affinity', () => {
  const podTemplate = (docs: readonly K8sObject[]) => {
    const deployment = find(docs, 'Deployment', FULLNAME) as V1Deployment;
    const template = deployment.spec?.template;
    assert.ok(template?.spec && template.metadata, 'the Deployment has a Pod template');
    return { labels: template.metadata.labels, spec: template.spec, container: template.spec.containers[0] };
  };

  it('passes helm lint --strict with every monitoring option and the anti-affinity presets', async () => {
    for (const set of [
      'metrics.serviceMonitor.enabled=true,metrics.serviceMonitor.interval=30s,metrics.prometheusRule.enabled=true,replicaCount=2',
      'metrics.podMonitor.enabled=true,metrics.service.enabled=true,metrics.prometheusRule.enabled=true,podAntiAffinityPreset=hard,replicaCount=3',
    ]) {
      const res = await helm(['lint', '--strict', CHART, '--set', set]);
      assert.equal(res.code, 0, `helm lint --strict --set ${set} failed:\n${res.stdout}\n${res.stderr}`);
      assert.doesNotMatch(res.stdout, /\[(WARNING|ERROR)\]/, res.stdout);
    }
  });

  it('renders none of them by default, and no affinity for one replica', async () => {
    const docs = await render();
    assert.deepEqual(docs.filter((d) => ['Service', 'ServiceMonitor', 'PodMonitor', 'PrometheusRule'].includes(d.kind)), []);
    assert.equal(podTemplate(docs).spec.affinity, undefined);
  });

  it('renders a metrics Service and a ServiceMonitor that reach the agent\'s metrics port', async () => {
    const docs = await render({
      'metrics.serviceMonitor.enabled': true, 'metrics.serviceMonitor.interval': '30s', 'metrics.serviceMonitor.scrapeTimeout': '10s',
      'metrics.serviceMonitor.labels.release': 'prometheus', 'metrics.port': 9191, 'metrics.service.port': 8443,
    });
    const pod = podTemplate(docs);
    // The Service is rendered for the ServiceMonitor even though metrics.service.enabled is false.
    const service = find(docs, 'Service', `${FULLNAME}-metrics`) as V1Service;
    assert.equal(service.metadata?.namespace, RELEASE_NS);
    assert.equal(service.spec?.type, 'ClusterIP');
    assertSelects(service.spec.selector, pod.labels, 'Service selector vs Pod labels');
    assert.deepEqual(service.spec.ports, [{ name: 'metrics', port: 8443, targetPort: 'metrics', protocol: 'TCP' }]);
    assert.deepEqual(pod.container?.ports?.find((p) => p.name === 'metrics'), { name: 'metrics', containerPort: 9191, protocol: 'TCP' });
    assert.equal(loadRenderedConfig(find(docs, 'ConfigMap', FULLNAME) as V1ConfigMap).metrics.bindAddress, ':9191');

    const monitor = find(docs, 'ServiceMonitor', FULLNAME) as Monitor;
    assert.equal(monitor.apiVersion, 'monitoring.coreos.com/v1');
    assert.equal(monitor.metadata.namespace, RELEASE_NS);
    assert.equal(monitor.metadata.labels?.['release'], 'prometheus');
    assertSelects(monitor.spec.selector.matchLabels, service.metadata.labels, 'ServiceMonitor selector vs Service labels');
    assert.equal(monitor.spec.selector.matchLabels['app.kubernetes.io/component'], 'metrics', 'selects the metrics Service only');
    assert.deepEqual(monitor.spec.namespaceSelector, { matchNames: [RELEASE_NS] });
    assert.deepEqual(monitor.spec.endpoints, [{ port: 'metrics', path: '/metrics', scheme: 'http', interval: '30s', scrapeTimeout: '10s' }]);
    assert.deepEqual(docs.filter((d) => d.kind === 'PodMonitor' || d.kind === 'PrometheusRule'), []);

    const serviceOnly = await render({ 'metrics.service.enabled': true, 'metrics.service.annotations.example\\.com/owner': 'observability' });
    assert.equal(find(serviceOnly, 'Service').metadata.annotations?.['example.com/owner'], 'observability');
    assert.deepEqual(serviceOnly.filter((d) => d.kind === 'ServiceMonitor'), []);
  });

  it('renders a PodMonitor that selects the agent Pods\' metrics port, without a Service', async () => {
    const docs = await render({ 'metrics.podMonitor.enabled': true, 'metrics.podMonitor.interval': '1m', 'metrics.podMonitor.labels.team': 'platform' });
    const pod = podTemplate(docs);
    const monitor = find(docs, 'PodMonitor', FULLNAME) as Monitor;
    assert.equal(monitor.apiVersion, 'monitoring.coreos.com/v1');
    assert.equal(monitor.metadata.labels?.['team'], 'platform');
    assertSelects(monitor.spec.selector.matchLabels, pod.labels, 'PodMonitor selector vs Pod labels');
    assert.deepEqual(monitor.spec.namespaceSelector, { matchNames: [RELEASE_NS] });
    assert.deepEqual(monitor.spec.podMetricsEndpoints, [{ port: 'metrics', path: '/metrics', scheme: 'http', interval: '1m' }]);
    assert.ok(pod.container?.ports?.some((p) => p.name === 'metrics'), 'the container port the PodMonitor names exists');
    assert.deepEqual(docs.filter((d) => d.kind === 'Service' || d.kind === 'ServiceMonitor'), []);
  });

  it('renders alerts whose PromQL parses and uses only metrics and labels the agent exports', async () => {
    const docs = await render({
      'metrics.prometheusRule.enabled': true, 'metrics.prometheusRule.labels.role': 'alert-rules',
      'metrics.prometheusRule.alertLabels.team': 'platform', 'metrics.prometheusRule.heartbeatFailures.threshold': 5,
      'metrics.prometheusRule.heartbeatFailures.window': '30m', 'metrics.prometheusRule.leaderDisconnected.for': '2m',
    });
    const rule = find(docs, 'PrometheusRule', FULLNAME) as PrometheusRule;
    assert.equal(rule.apiVersion, 'monitoring.coreos.com/v1');
    assert.equal(rule.metadata.namespace, RELEASE_NS);
    const rules = rule.spec.groups.flatMap((g) => g.rules);
    assert.deepEqual(rules.map((r) => r.alert), ['ClusterSetLeaderDisconnected', 'ClusterSetHeartbeatStale', 'ClusterSetLeaderTokenExpiring', 'ClusterSetHeartbeatFailures', 'ClusterSetImportRejections']);

    const exported = await exportedMetrics();
    const used = new Set<string>();
    for (const r of rules) {
      const parsed = promql(r.expr);
      assert.deepEqual(parsed.errors, [], `${r.alert}: PromQL syntax error at ${JSON.stringify(parsed.errors)} in:\n${r.expr}`);
      assert.ok(parsed.metrics.length > 0, `${r.alert} selects a metric`);
      const allowedLabels = new Set(['namespace']);
      for (const metric of parsed.metrics) {
        const labels = exported.get(metric);
        assert.ok(labels, `${r.alert}: ${metric} is not a metric the agent exports (${[...exported.keys()].join(', ')})`);
        for (const label of labels) allowedLabels.add(label);
        used.add(metric);
      }
      for (const label of parsed.labels) assert.ok(allowedLabels.has(label), `${r.alert}: label ${label} is not one of ${[...allowedLabels].join(', ')}`);
      // Scoped to this release's namespace, as the monitors' targets are labelled.
      assert.ok(r.expr.includes(`{namespace="${RELEASE_NS}"}`), `${r.alert} selects namespace ${RELEASE_NS}: ${r.expr}`);
      assert.equal(r.labels['team'], 'platform', `${r.alert} carries alertLabels`);
      assert.match(r.labels['severity'] ?? '', /^(critical|warning)$/);
      // Prometheus' own templating survives Helm's.
      assert.match(r.annotations['summary'] ?? '', /\{\{ \$labels\.clusterset \}\}/);
    }
    for (const metric of ['clusterset_agent_leader_connected', 'clusterset_agent_heartbeat_failures_total', 'clusterset_agent_import_rejections_total', 'clusterset_agent_leader_token_expiry_seconds']) {
      assert.ok(used.has(metric), `an alert watches ${metric}`);
    }
    const byName = new Map(rules.map((r) => [r.alert, r]));
    assert.equal(byName.get('ClusterSetLeaderDisconnected')?.for, '2m');
    assert.match(byName.get('ClusterSetLeaderTokenExpiring')?.expr ?? '', /clusterset_agent_leader_token_expiry_seconds\{namespace="clusterset-agent"\}\) < 604800$/);
    assert.match(byName.get('ClusterSetHeartbeatFailures')?.expr ?? '', /\[30m\]\)\) >= 5\)/);
    assert.match(byName.get('ClusterSetImportRejections')?.expr ?? '', /\[15m\]\)\) >= 1\)/);
    // A counter series that first appears inside the window (increase() cannot see its first increments) also fires.
    assert.match(byName.get('ClusterSetImportRejections')?.expr ?? '', /unless clusterset_agent_import_rejections_total\{namespace="clusterset-agent"\} offset 15m/);
  });

  it('in mode=leader, scrapes the leader controller and alerts on its metrics: PromQL that parses and uses only what leader run exports', async () => {
    const docs = await render({
      mode: 'leader', 'metrics.podMonitor.enabled': true, 'metrics.prometheusRule.enabled': true,
      'metrics.prometheusRule.alertLabels.team': 'platform', 'metrics.prometheusRule.leader.aggregationErrors.threshold': 3,
    });
    const leaderPods = (find(docs, 'Deployment', `${FULLNAME}-leader`) as V1Deployment).spec?.template.metadata?.labels;
    const monitor = find(docs, 'PodMonitor', FULLNAME) as Monitor;
    assertSelects(monitor.spec.selector.matchLabels, leaderPods, 'PodMonitor selector vs leader Pod labels');
    assert.equal(monitor.spec.selector.matchLabels['app.kubernetes.io/component'], 'leader');
    // Only the leader's rules: the member alerts watch series a leader never has.
    assert.deepEqual(docs.filter((d) => d.kind === 'PrometheusRule').map((d) => d.metadata.name), [`${FULLNAME}-leader`]);
    const rules = (find(docs, 'PrometheusRule', `${FULLNAME}-leader`) as PrometheusRule).spec.groups.flatMap((g) => g.rules);
    assert.deepEqual(rules.map((r) => r.alert), ['ClusterSetNoReadyMember', 'ClusterSetMemberDisconnected', 'ClusterSetExportsRefused', 'ClusterSetDuplicateClusterID', 'ClusterSetAggregationErrors']);
    const exported = await exportedMetrics();
    for (const r of rules) {
      const parsed = promql(r.expr);
      assert.deepEqual(parsed.errors, [], `${r.alert}: PromQL syntax error at ${JSON.stringify(parsed.errors)} in:\n${r.expr}`);
      const allowed = new Set(['namespace']);
      for (const metric of parsed.metrics) {
        assert.ok(metric.startsWith('clusterset_agent_leader_'), `${r.alert} watches a leader metric, not ${metric}`);
        const labels = exported.get(metric);
        assert.ok(labels, `${r.alert}: ${metric} is not a metric leader run exports`);
        for (const label of labels) allowed.add(label);
      }
      for (const label of parsed.labels) assert.ok(allowed.has(label), `${r.alert}: label ${label} is not one of ${[...allowed].join(', ')}`);
      assert.ok(r.expr.includes(`namespace="${RELEASE_NS}"`), `${r.alert} selects namespace ${RELEASE_NS}`);
      assert.equal(r.labels['team'], 'platform');
    }
    assert.match(rules.find((r) => r.alert === 'ClusterSetAggregationErrors')?.expr ?? '', /\[15m\]\)\) >= 3\)/);
    assert.match(rules.find((r) => r.alert === 'ClusterSetNoReadyMember')?.expr ?? '', /state="ready"\}\) == 0\nand on \(namespace, clusterset\)/);
    // A member release renders the member rules only.
    const member = await render({ 'metrics.prometheusRule.enabled': true });
    assert.deepEqual(member.filter((d) => d.kind === 'PrometheusRule').map((d) => d.metadata.name), [FULLNAME]);
  });

  it('ships a Grafana dashboard for both roles whose every query parses and uses only exported metrics, and covers every agent metric', async () => {
    assert.deepEqual((await render()).filter((d) => d.kind === 'ConfigMap' && d.metadata.name.endsWith('-dashboard')), []);
    const docs = await render({ 'metrics.grafanaDashboard.enabled': true, 'metrics.grafanaDashboard.namespace': 'monitoring' });
    const cm = find(docs, 'ConfigMap', `${FULLNAME}-dashboard`) as V1ConfigMap;
    assert.equal(cm.metadata?.namespace, 'monitoring');
    assert.equal(cm.metadata?.labels?.['grafana_dashboard'], '1', "labelled for Grafana's sidecar");
    const dashboard = JSON.parse(cm.data?.['clusterset-agent.json'] ?? '') as { uid: string; panels: { title: string; type: string; targets?: { expr: string }[] }[] };
    assert.equal(dashboard.uid, 'clusterset-agent');
    const exported = await exportedMetrics();
    const process_ = new Set(['process_resident_memory_bytes', 'process_cpu_seconds_total']);
    const used = new Set<string>();
    const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
    assert.ok(queries.length >= 10, `${String(queries.length)} queries`);
    for (const q of queries) {
      const parsed = promql(q.expr);
      assert.deepEqual(parsed.errors, [], `${q.panel}: PromQL syntax error at ${JSON.stringify(parsed.errors)} in ${q.expr}`);
      for (const metric of parsed.metrics) {
        assert.ok(exported.has(metric) || process_.has(metric), `${q.panel}: ${metric} is not exported by the agent or leader run`);
        used.add(metric.replace(/_bucket$/, ''));
      }
    }
    const agentMetrics = [...exported.keys()].filter((m) => !/_(bucket|sum|count)$/.test(m)).map((m) => m);
    const histograms = [...exported.keys()].filter((m) => m.endsWith('_bucket')).map((m) => m.replace(/_bucket$/, ''));
    for (const metric of [...agentMetrics.filter((m) => !histograms.some((h) => m === h)), ...histograms]) {
      assert.ok(used.has(metric), `no dashboard panel shows ${metric}`);
    }
    // A dashboard without metrics to show is refused, like the monitors.
    const res = await helm(['template', RELEASE, CHART, '--namespace', RELEASE_NS, ...sets({ 'metrics.enabled': false, 'metrics.grafanaDashboard.enabled': true })]);
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /metrics\.grafanaDashboard\.enabled needs metrics\.enabled=true/);
  });

  it('refuses monitors without metrics, two monitors at once, and unknown or malformed monitoring values', async () => {
    const failures: [Record<string, string | number | boolean>, RegExp][] = [
      [{ 'metrics.enabled': false, 'metrics.serviceMonitor.enabled': true }, /metrics\.serviceMonitor\.enabled needs metrics\.enabled=true/],
      [{ 'metrics.enabled': false, 'metrics.podMonitor.enabled': true }, /metrics\.podMonitor\.enabled needs metrics\.enabled=true/],
      [{ 'metrics.enabled': false, 'metrics.service.enabled': true }, /metrics\.service\.enabled needs metrics\.enabled=true/],
      [{ 'metrics.enabled': false, 'metrics.prometheusRule.enabled': true }, /metrics\.prometheusRule\.enabled needs metrics\.enabled=true/],
      [{ 'metrics.serviceMonitor.enabled': true, 'metrics.podMonitor.enabled': true }, /scraped twice/],
      [{ 'metrics.serviceMonitor.intervall': '30s' }, /at '\/metrics\/serviceMonitor': additional properties 'intervall' not allowed/],
      [{ 'metrics.podMonitor.interval': '30 seconds' }, /at '\/metrics\/podMonitor\/interval': '30 seconds' does not match pattern/],
      [{ 'metrics.prometheusRule.leaderDisconnected.for': 'soon' }, /at '\/metrics\/prometheusRule\/leaderDisconnected\/for': 'soon' does not match pattern/],
      [{ 'metrics.prometheusRule.heartbeatFailures.threshold': 0 }, /at '\/metrics\/prometheusRule\/heartbeatFailures\/threshold': minimum/],
      [{ podAntiAffinityPreset: 'sometimes' }, /at '\/podAntiAffinityPreset': value must be one of 'soft', 'hard', 'none'/],
    ];
    for (const [values, message] of failures) {
      const res = await helm(['template', RELEASE, CHART, '--namespace', RELEASE_NS, ...sets(values)]);
      assert.notEqual(res.code, 0, `${JSON.stringify(values)} must be refused`);
      assert.match(res.stderr, message, res.stderr);
    }
  });

  it('spreads replicas over nodes when replicaCount > 1, as the preset says, unless affinity is set', async () => {
    const soft = await render({ replicaCount: 2 });
    const selector = (find(soft, 'Deployment') as V1Deployment).spec?.selector.matchLabels;
    assert.deepEqual(podTemplate(soft).spec.affinity, {
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: selector } } },
        ],
      },
    });
    assertSelects(selector, podTemplate(soft).labels, 'anti-affinity selector vs Pod labels');
    assert.deepEqual(podTemplate(await render({ replicaCount: 3, podAntiAffinityPreset: 'hard' })).spec.affinity, {
      podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: selector } }] },
    });
    assert.equal(podTemplate(await render({ replicaCount: 2, podAntiAffinityPreset: 'none' })).spec.affinity, undefined);
    const zone = 'topology.kubernetes.io/zone';
    const own = await render({ replicaCount: 2, 'affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey': zone,
      'affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchLabels.app': 'x' });
    assert.deepEqual(podTemplate(own).spec.affinity, {
      podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: zone, labelSelector: { matchLabels: { app: 'x' } } }] },
    }, 'a user affinity replaces the default, it is not merged');
  });
});

describe('Helm chart installed into real control planes', () => {
  let member: ControlPlane | undefined;
  let leader: ControlPlane | undefined;
  let installOutput = '';

  before(async () => {
    [member, leader] = await Promise.all([startControlPlane('chart-member'), startControlPlane('chart-leader')]);
  });
  after(async () => {
    await Promise.all([member?.stop(), leader?.stop()]);
  });
  onFailureShowLogs(() => [member, leader]);

  const memberCp = (): ControlPlane => {
    assert.ok(member, 'member control plane started');
    return member;
  };

  it('installs in mode=member (no --wait) and creates CRDs, ServiceAccount, RBAC, ConfigMap and Deployment', async () => {
    const cp = memberCp();
    const res = await helm(['install', RELEASE, CHART, '--namespace', RELEASE_NS, '--create-namespace'], cp.kubeconfigPath);
    assert.equal(res.code, 0, `helm install failed:\n${res.stdout}\n${res.stderr}`);
    installOutput = res.stdout;
    assert.match(res.stdout, /STATUS: deployed/);

    const kc = cp.adminConfig();
    const extensions = kc.makeApiClient(ApiextensionsV1Api);
    const crdNames = loadCrdFiles().map((crd) => crd.metadata?.name ?? '');
    assert.equal(crdNames.length, 9);
    for (const name of crdNames) {
      const crd = await extensions.readCustomResourceDefinition({ name });
      assert.ok(crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'), `${name} Established`);
    }
    const core = kc.makeApiClient(CoreV1Api);
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    await core.readNamespacedServiceAccount({ namespace: RELEASE_NS, name: FULLNAME });
    const configMap = await core.readNamespacedConfigMap({ namespace: RELEASE_NS, name: FULLNAME });
    const role = await rbac.readNamespacedRole({ namespace: RELEASE_NS, name: FULLNAME });
    const roleBinding = await rbac.readNamespacedRoleBinding({ namespace: RELEASE_NS, name: FULLNAME });
    await rbac.readClusterRole({ name: CLUSTER_ROLE });
    const clusterRoleBinding = await rbac.readClusterRoleBinding({ name: CLUSTER_ROLE });
    assert.equal(role.metadata?.labels?.['app.kubernetes.io/managed-by'], 'Helm');
    assert.deepEqual(roleBinding.subjects?.map((s) => `${s.kind}/${s.namespace ?? ''}/${s.name}`), [`ServiceAccount/${RELEASE_NS}/${FULLNAME}`]);
    assert.deepEqual(clusterRoleBinding.subjects?.map((s) => `${s.kind}/${s.namespace ?? ''}/${s.name}`), [`ServiceAccount/${RELEASE_NS}/${FULLNAME}`]);
    assert.equal(clusterRoleBinding.roleRef.name, CLUSTER_ROLE);

    const deployment = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ namespace: RELEASE_NS, name: FULLNAME });
    const container = deployment.spec?.template.spec?.containers[0];
    assert.equal(container?.securityContext?.readOnlyRootFilesystem, true);
    assert.equal(deployment.spec?.template.spec?.securityContext?.runAsNonRoot, true);

    // The stored ConfigMap is what the Pod would mount: the agent must accept it as is.
    assert.deepEqual(loadRenderedConfig(configMap), DEFAULT_CONFIG);
  });

  it('prints NOTES with the member Secret, the ClusterSet and how to read its Reason column', () => {
    assert.match(installOutput, /clusterset-agent join --leader-context <leader> --member-context <this-member> \\\n\s+--cluster-id <member-id> --clusterset <clusterset-id> --member-namespace clusterset-agent/);
    assert.match(installOutput, /clusterset-agent leader create-member-token --member-id <member-id>/);
    assert.match(installOutput, /--namespace antrea-multicluster --member-namespace clusterset-agent/);
    assert.match(installOutput, /kubectl -n clusterset-agent create secret generic leader-token --from-file=ca\.crt=ca\.crt --from-file=token=token/);
    assert.match(installOutput, /kind: ClusterSet[\s\S]*clusterID: <member-id>[\s\S]*namespace: antrea-multicluster[\s\S]*leaders:[\s\S]*server: https:\/\//);
    assert.match(installOutput, /kubectl get clustersets -n clusterset-agent/);
    // Which image it pulls, and that nobody serves the default (issue 33, item 1).
    assert.match(installOutput, /^Image: clusterset-agent:0\.1\.0 \(pullPolicy IfNotPresent\)\.$/m);
    assert.match(installOutput, /WARNING: image\.repository is the chart's default, clusterset-agent, which resolves to\ndocker\.io\/library\/clusterset-agent: no registry serves it/);
    assert.match(installOutput, /--set image\.repository=<registry>\/clusterset-agent --set image\.tag=0\.1\.0/);
    for (const reason of ['Connected', 'SecretNotFound', 'TLSVerificationFailed', 'Unauthorized', 'Forbidden', 'AdmissionDenied']) {
      assert.match(installOutput, new RegExp(`\\b${reason}\\b`));
    }
  });

  it('never downgrades MCS CRDs newer than its own: Helm leaves them, NOTES say not to apply crds/ over them', async () => {
    const cp = memberCp();
    assert.doesNotMatch(installOutput, /MCS CRDs:/, 'the chart\'s own CRDs, just installed: nothing to say');
    const name = 'serviceimports.multicluster.x-k8s.io';
    const label = 'multicluster.x-k8s.io/release-version';
    const extensions = cp.adminConfig().makeApiClient(ApiextensionsV1Api);
    // As if another MCS implementation had installed a later upstream release.
    await kubectl(cp, ['label', '--overwrite', 'crd', name, `${label}=v0.6.0`]);
    const before = await extensions.readCustomResourceDefinition({ name });
    const res = await helm(['upgrade', RELEASE, CHART, '--namespace', RELEASE_NS, '--reuse-values'], cp.kubeconfigPath);
    assert.equal(res.code, 0, `helm upgrade failed:\n${res.stdout}\n${res.stderr}`);
    assert.match(res.stdout, /MCS CRDs: this cluster has the ServiceImport\/ServiceExport CRDs of sigs\.k8s\.io\/mcs-api v0\.6\.0\n\(schema revision 0\), newer than this chart's v0\.5\.2\./);
    assert.match(res.stdout, /Do NOT apply the chart's\ncrds\/multicluster\.x-k8s\.io_\*\.yaml: that would downgrade them\./);
    const after = await extensions.readCustomResourceDefinition({ name });
    assert.equal(after.metadata?.labels?.[label], 'v0.6.0');
    assert.equal(after.metadata?.resourceVersion, before.metadata?.resourceVersion, 'the CRD was not written');
    await kubectl(cp, ['label', '--overwrite', 'crd', name, `${label}=v0.5.2`]);
  });

  it('gives the ServiceAccount exactly the pinned permissions, and no Secret outside its namespace', async () => {
    const cp = memberCp();
    const token = await issueToken(cp.adminConfig(), RELEASE_NS, FULLNAME);
    // RBAC is evaluated from the API server's informer cache: wait for both bindings to land.
    await waitForAccess(cp, token, { verb: 'get', resource: 'secrets', namespace: RELEASE_NS });
    await waitForAccess(cp, token, { verb: 'list', resource: 'namespaces' });

    const actual = {
      releaseNamespace: await effectivePermissions(cp, token, RELEASE_NS),
      otherNamespace: await effectivePermissions(cp, token, OTHER_NS),
    };
    const expected = JSON.parse(readFileSync(FIXTURE, 'utf8')) as unknown;
    assert.deepEqual(actual, expected,
      `the chart's effective permissions differ from ${path.relative(repoRoot, FIXTURE)}; if the change is intended, ` +
      `update the fixture to:\n${JSON.stringify(actual, null, 2)}`);

    assert.equal(await allowed(cp, token, { verb: 'list', resource: 'secrets', namespace: OTHER_NS }), false, 'list secrets in default');
    assert.equal(await allowed(cp, token, { verb: 'get', resource: 'secrets', namespace: OTHER_NS }), false, 'get secrets in default');
    assert.equal(await allowed(cp, token, { verb: 'list', resource: 'secrets' }), false, 'list secrets cluster-wide');
    assert.equal(await allowed(cp, token, { verb: 'watch', resource: 'secrets' }), false, 'watch secrets cluster-wide');
    assert.equal(await allowed(cp, token, { verb: 'get', resource: 'secrets', namespace: RELEASE_NS }), true, 'get secrets in the release namespace');
    assert.equal(await allowed(cp, token, { verb: 'create', resource: 'secrets', namespace: RELEASE_NS }), false, 'create secrets in the release namespace');
    // And for real, not only as the authorizer's answer.
    const core = tokenConfig(cp, token).makeApiClient(CoreV1Api);
    await core.listNamespacedSecret({ namespace: RELEASE_NS });
    await assert.rejects(core.listNamespacedSecret({ namespace: OTHER_NS }), (err) => statusCode(err) === 403);
    await assert.rejects(core.listSecretForAllNamespaces(), (err) => statusCode(err) === 403);
  });

  it('installs in mode=leader into another control plane: the leader namespace, Antrea\'s member Role, the policies and the leader controller', async () => {
    assert.ok(leader, 'leader control plane started');
    const cp = leader;
    const res = await helm(['install', 'csa-leader', CHART, '--namespace', 'csa-leader', '--create-namespace', '--set', 'mode=leader'], cp.kubeconfigPath);
    assert.equal(res.code, 0, `helm install failed:\n${res.stdout}\n${res.stderr}`);
    assert.match(res.stdout, /clusterset-agent leader create-member-token --member-id <member-id>/);

    const kc = cp.adminConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    const namespace = await core.readNamespace({ name: 'antrea-multicluster' });
    assert.equal(namespace.metadata?.annotations?.['helm.sh/resource-policy'], 'keep');
    const role = await rbac.readNamespacedRole({ namespace: 'antrea-multicluster', name: MEMBER_ROLE_NAME });
    assert.deepEqual(ruleShape(role.rules), ruleShape(ANTREA_MEMBER_ROLE_RULES));
    await kc.makeApiClient(ApiextensionsV1Api).readCustomResourceDefinition({ name: 'memberclusterannounces.multicluster.crd.antrea.io' });
    const admission = kc.makeApiClient(AdmissionregistrationV1Api);
    await admission.readValidatingAdmissionPolicy({ name: LEADER_POLICY });
    assert.equal((await admission.readValidatingAdmissionPolicyBinding({ name: LEADER_POLICY })).spec?.paramRef?.name, 'clusterset-member-ids');

    await admission.readValidatingAdmissionPolicy({ name: ANNOUNCE_POLICY });
    // The leader controller, not the member agent: one Deployment running `leader run`, no agent config or ClusterRole.
    assert.deepEqual((await kc.makeApiClient(AppsV1Api).listDeploymentForAllNamespaces()).items.map((d) => d.metadata?.name), ['csa-leader-clusterset-agent-leader']);
    assert.deepEqual((await core.listNamespacedServiceAccount({ namespace: 'csa-leader' })).items.map((sa) => sa.metadata?.name), ['csa-leader-clusterset-agent']);
    assert.deepEqual((await core.listNamespacedConfigMap({ namespace: 'csa-leader', labelSelector: 'app.kubernetes.io/instance=csa-leader' })).items, []);
    assert.deepEqual((await rbac.listClusterRole({ labelSelector: 'app.kubernetes.io/instance=csa-leader' })).items, []);

    // Uninstalling keeps the namespace (every member's ServiceAccount lives there) and removes the Role.
    const uninstall = await helm(['uninstall', 'csa-leader', '--namespace', 'csa-leader'], cp.kubeconfigPath);
    assert.equal(uninstall.code, 0, uninstall.stderr);
    await core.readNamespace({ name: 'antrea-multicluster' });
    await assert.rejects(rbac.readNamespacedRole({ namespace: 'antrea-multicluster', name: MEMBER_ROLE_NAME }), (err) => statusCode(err) === 404);
    await assert.rejects(admission.readValidatingAdmissionPolicy({ name: LEADER_POLICY }), (err) => statusCode(err) === 404);
  });
  it('has the API server accept the metrics Service and the Deployment with each anti-affinity preset (strict server-side dry run)', async () => {
    const cp = memberCp();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'csa-chart-dry-run-'));
    try {
      for (const preset of ['soft', 'hard']) {
        const res = await helm(['template', RELEASE, CHART, '--namespace', RELEASE_NS, '--set', `replicaCount=2,podAntiAffinityPreset=${preset},metrics.service.enabled=true`,
          '--show-only', 'templates/metrics-service.yaml', '--show-only', 'templates/deployment.yaml']);
        assert.equal(res.code, 0, res.stderr);
        const file = path.join(dir, `${preset}.yaml`);
        writeFileSync(file, res.stdout);
        const applied = await kubectl(cp, ['apply', '--dry-run=server', '--validate=strict', '-f', file, '-o', 'name']);
        assert.deepEqual(applied.trim().split('\n').sort(), [`deployment.apps/${FULLNAME}`, `service/${FULLNAME}-metrics`]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
