/**
 * Keeps the CRD types of src/common/api/ (antrea.ts, mcs.ts, meta.ts) and charts/clusterset-agent/crds/*.yaml in agreement.
 *
 * For every kind there is a fixture typed `Fixture<T>`: `DeepRequired<T>` forces every field
 * of the TypeScript type to be present (and object-literal excess-property checks forbid any
 * field the type does not have). At runtime:
 *  (a) the fixture is validated against the CRD's openAPIV3Schema by a small structural
 *      validator that rejects unknown properties (unless x-kubernetes-preserve-unknown-fields)
 *      ⇒ catches fields of the TS types that the schema lacks (the apiserver would prune them);
 *  (b) every property path declared in the schema must be present in the fixture
 *      ⇒ catches schema fields the TS types lack.
 * Required-ness is checked both ways for the listed types (`exactRequired`), and the CRD files
 * themselves are checked for the shape a kube-apiserver accepts (structural schema rules).
 *
 * The "TS type ⇒ fixture" step is enforced by the compiler: run `tsc --noEmit` (npm test does,
 * before the tests); tsx alone strips types and would not notice a fixture lagging its type.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { CoreV1EndpointPort, V1EndpointAddress, V1ServicePort } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import * as meta from '../../src/common/api/meta.js';
import * as mcs from '../../src/common/api/mcs.js';
import * as antrea from '../../src/common/api/antrea.js';
import * as names from '../../src/common/api/names.js';

const CRD_DIR = join(dirname(fileURLToPath(import.meta.url)), '../../charts/clusterset-agent/crds');

// ---------------------------------------------------------------------------------------
// Type-level helpers
// ---------------------------------------------------------------------------------------

type DeepRequired<T> = T extends readonly (infer U)[]
  ? DeepRequired<U>[]
  : T extends object
    ? { [K in keyof T]-?: DeepRequired<Exclude<T[K], undefined>> }
    : T;

/** A fully populated object of kind T (metadata is not part of the schema: ObjectMeta is validated by the apiserver). */
type Fixture<T extends meta.KubeObject> = DeepRequired<Omit<T, 'metadata'>> & { metadata: meta.ObjectMeta };

/** Keys that are not optional in T (index signatures excluded). */
type RequiredKeys<T> = keyof {
  [K in keyof T as string extends K ? never : number extends K ? never : object extends Pick<T, K> ? never : K]: T[K];
};

/**
 * `exactRequired<T>()('a', 'b')` compiles only if 'a' and 'b' are exactly the required keys of T;
 * at runtime it returns the list, which the test compares with the schema's `required`.
 */
function exactRequired<T>() {
  return <const K extends readonly RequiredKeys<T>[]>(
    ...keys: K & ([Exclude<RequiredKeys<T>, K[number]>] extends [never] ? unknown : ['missing required key', Exclude<RequiredKeys<T>, K[number]>])
  ): readonly string[] => keys.map(String);
}

// ---------------------------------------------------------------------------------------
// CRD model
// ---------------------------------------------------------------------------------------

interface Schema {
  type?: string;
  format?: string;
  description?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  anyOf?: Schema[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
}

interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  priority?: number;
}

interface CRDVersion {
  name: string;
  served: boolean;
  storage: boolean;
  subresources?: { status?: object; scale?: object };
  additionalPrinterColumns?: PrinterColumn[];
  schema: { openAPIV3Schema: Schema };
}

interface CRD {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: {
    group: string;
    scope: 'Namespaced' | 'Cluster';
    names: { kind: string; plural: string; singular?: string; listKind?: string; shortNames?: string[] };
    conversion?: { strategy: string };
    versions: CRDVersion[];
  };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function loadCRDs(): Map<string, { file: string; crd: CRD }> {
  const out = new Map<string, { file: string; crd: CRD }>();
  for (const file of readdirSync(CRD_DIR).sort()) {
    assert.match(file, /\.ya?ml$/, `unexpected file in crds/: ${file}`);
    const docs = parseAllDocuments(readFileSync(join(CRD_DIR, file), 'utf8'));
    assert.ok(!Array.isArray(docs) || docs.length === 1, `${file}: expected exactly one YAML document`);
    const doc = Array.isArray(docs) ? docs[0] : docs;
    assert.ok(doc, `${file}: empty`);
    assert.deepEqual(doc.errors, [], `${file}: YAML errors`);
    const crd: unknown = doc.toJS();
    assert.ok(isRecord(crd) && isRecord(crd.metadata) && isRecord(crd.spec), `${file}: not a CRD object`);
    const name = crd.metadata.name;
    assert.equal(typeof name, 'string', `${file}: metadata.name`);
    assert.ok(!out.has(name as string), `${file}: duplicate CRD ${String(name)}`);
    out.set(name as string, { file, crd: crd as unknown as CRD });
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// (a) structural validator: value against schema, unknown fields rejected
// ---------------------------------------------------------------------------------------

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function validate(value: unknown, schema: Schema, path: string, errors: string[]): void {
  const err = (msg: string): void => {
    errors.push(`${path || '<root>'}: ${msg}`);
  };
  if (schema['x-kubernetes-int-or-string'] === true) {
    if (!(typeof value === 'string' || Number.isInteger(value))) err(`expected int-or-string, got ${JSON.stringify(value)}`);
    return;
  }
  if (schema.enum && !schema.enum.includes(value)) err(`${JSON.stringify(value)} not in enum ${JSON.stringify(schema.enum)}`);
  switch (schema.type) {
    case 'object': {
      if (!isRecord(value)) {
        err(`expected object, got ${JSON.stringify(value)}`);
        return;
      }
      const props = schema.properties ?? {};
      for (const [k, v] of Object.entries(value)) {
        const p = props[k];
        // ObjectMeta at the root is validated by the apiserver itself, not by the CRD schema.
        if (path === '' && k === 'metadata') {
          if (!isRecord(v)) err('metadata must be an object');
        } else if (p) validate(v, p, `${path}.${k}`, errors);
        else if (isRecord(schema.additionalProperties)) validate(v, schema.additionalProperties, `${path}.${k}`, errors);
        else if (schema['x-kubernetes-preserve-unknown-fields'] !== true) err(`unknown field "${k}" (not in the CRD schema: the apiserver would prune it)`);
      }
      for (const r of schema.required ?? []) if (!(r in value)) err(`missing required field "${r}"`);
      return;
    }
    case 'array': {
      if (!Array.isArray(value)) {
        err(`expected array, got ${JSON.stringify(value)}`);
        return;
      }
      if (schema.minItems !== undefined && value.length < schema.minItems) err(`fewer than ${schema.minItems} items`);
      if (schema.maxItems !== undefined && value.length > schema.maxItems) err(`more than ${schema.maxItems} items`);
      const items = schema.items;
      if (items) value.forEach((v, i) => { validate(v, items, `${path}[${i}]`, errors); });
      return;
    }
    case 'string': {
      if (typeof value !== 'string') {
        err(`expected string, got ${JSON.stringify(value)}`);
        return;
      }
      if (schema.minLength !== undefined && value.length < schema.minLength) err('too short');
      if (schema.maxLength !== undefined && value.length > schema.maxLength) err('too long');
      if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value)) err(`does not match ${schema.pattern}`);
      if (schema.format === 'date-time' && !RFC3339.test(value)) err(`not an RFC 3339 date-time: ${value}`);
      if (schema.format === 'byte' && !BASE64.test(value)) err(`not base64: ${value}`);
      return;
    }
    case 'integer': {
      if (typeof value !== 'number' || !Number.isInteger(value)) {
        err(`expected integer, got ${JSON.stringify(value)}`);
        return;
      }
      if (schema.format === 'int32' && (value < -(2 ** 31) || value >= 2 ** 31)) err('out of int32 range');
      if (schema.minimum !== undefined && value < schema.minimum) err(`below minimum ${schema.minimum}`);
      return;
    }
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) err(`expected number, got ${JSON.stringify(value)}`);
      return;
    case 'boolean':
      if (typeof value !== 'boolean') err(`expected boolean, got ${JSON.stringify(value)}`);
      return;
    case undefined:
    default:
      err(`schema node without a known type: ${JSON.stringify(schema.type)}`);
  }
}

// ---------------------------------------------------------------------------------------
// (b) coverage: every declared schema path is present in the value
// ---------------------------------------------------------------------------------------

function coverage(value: unknown, schema: Schema, path: string, missing: string[]): void {
  if (schema.type === 'object' && isRecord(value)) {
    for (const [k, p] of Object.entries(schema.properties ?? {})) {
      if (k in value) coverage(value[k], p, `${path}.${k}`, missing);
      else missing.push(`${path}.${k}`);
    }
    if (isRecord(schema.additionalProperties)) {
      const ap = schema.additionalProperties;
      if (Object.keys(value).length === 0) missing.push(`${path}.*`);
      for (const [k, v] of Object.entries(value)) coverage(v, ap, `${path}.${k}`, missing);
    }
  } else if (schema.type === 'array' && Array.isArray(value) && schema.items) {
    const items = schema.items;
    if (value.length === 0) missing.push(`${path}[]`);
    value.forEach((v, i) => { coverage(v, items, `${path}[${i}]`, missing); });
  }
}

// ---------------------------------------------------------------------------------------
// Structural-schema lint (what kube-apiserver v1.36 checks, plus hygiene)
// ---------------------------------------------------------------------------------------

const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);

function lintSchema(s: Schema, path: string, errors: string[]): void {
  const err = (msg: string): void => {
    errors.push(`${path || '<root>'}: ${msg}`);
  };
  if (s['x-kubernetes-int-or-string'] === true) {
    if (s.type !== undefined) err('x-kubernetes-int-or-string must not set type');
    if (s.anyOf && JSON.stringify(s.anyOf) !== JSON.stringify([{ type: 'integer' }, { type: 'string' }])) err('int-or-string anyOf must be [integer, string]');
    return;
  }
  if (s.anyOf) err('anyOf only allowed with x-kubernetes-int-or-string here');
  if (s.type === undefined || !TYPES.has(s.type)) {
    err(`missing or invalid type ${JSON.stringify(s.type)}`);
    return;
  }
  if (s['x-kubernetes-preserve-unknown-fields'] === true && s.type !== 'object') err('preserve-unknown-fields on a non-object');
  if (s.enum) {
    for (const e of s.enum) {
      const ok = s.type === 'string' ? typeof e === 'string' : s.type === 'integer' ? Number.isInteger(e) : typeof e === s.type;
      if (!ok) err(`enum value ${JSON.stringify(e)} does not match type ${s.type}`);
    }
  }
  if (s.default !== undefined) {
    const dErrors: string[] = [];
    validate(s.default, s, path, dErrors);
    errors.push(...dErrors.map((e) => `default: ${e}`));
  }
  if (s.type === 'object') {
    if (s.properties && s.additionalProperties !== undefined) err('properties and additionalProperties are mutually exclusive');
    for (const r of s.required ?? []) if (!s.properties?.[r]) err(`required "${r}" is not a declared property`);
    for (const [k, p] of Object.entries(s.properties ?? {})) lintSchema(p, `${path}.${k}`, errors);
    if (isRecord(s.additionalProperties)) lintSchema(s.additionalProperties, `${path}.*`, errors);
  } else if (s.properties || s.additionalProperties !== undefined || s.required) {
    err('properties/additionalProperties/required on a non-object');
  }
  if (s.type === 'array') {
    if (!s.items) {
      err('array without items');
      return;
    }
    lintSchema(s.items, `${path}[]`, errors);
    const lt = s['x-kubernetes-list-type'];
    if (lt !== undefined && !['atomic', 'set', 'map'].includes(lt)) err(`bad list-type ${lt}`);
    if (lt === 'map') {
      const keys = s['x-kubernetes-list-map-keys'] ?? [];
      if (keys.length === 0) err('list-type map without list-map-keys');
      for (const k of keys) {
        const kp = s.items.properties?.[k];
        if (!kp) err(`list-map-key ${k} is not an item property`);
        else if (!(s.items.required ?? []).includes(k) && kp.default === undefined) err(`list-map-key ${k} must be required or defaulted`);
      }
    }
  } else if (s.items) {
    err('items on a non-array');
  }
}

/** Every `required` list in a schema, keyed by path (`spec.ports[]`). */
function requiredByPath(s: Schema, path: string, out: Map<string, string[]>): Map<string, string[]> {
  if (s.required && s.required.length > 0) out.set(path, [...s.required].sort());
  for (const [k, p] of Object.entries(s.properties ?? {})) requiredByPath(p, path === '' ? k : `${path}.${k}`, out);
  if (s.items) requiredByPath(s.items, `${path}[]`, out);
  return out;
}

/** Resolves a printer-column JSONPath (`.spec.leaders[0].clusterID`, `.status.conditions[?(...)].status`) in the schema. */
function resolveJSONPath(root: Schema, jsonPath: string): Schema | undefined {
  const segs = jsonPath.replace(/\[[^\]]*\]/g, '').split('.').filter((x) => x !== '');
  if (segs[0] === 'metadata') return { type: 'object' };
  let node: Schema | undefined = root;
  for (const seg of segs) {
    while (node?.type === 'array') node = node.items;
    node = node?.properties?.[seg];
    if (!node) return undefined;
  }
  return node;
}

function descriptionsMissing(s: Schema, path: string, out: string[]): string[] {
  for (const [k, p] of Object.entries(s.properties ?? {})) {
    if (!p.description?.trim()) out.push(`${path}.${k}`);
    descriptionsMissing(p, `${path}.${k}`, out);
    if (p.items) descriptionsMissing(p.items, `${path}.${k}[]`, out);
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Fixtures: one fully populated object per kind
// ---------------------------------------------------------------------------------------

const T0 = '2026-01-02T03:04:05Z';

const condition: DeepRequired<meta.Condition> = {
  type: 'Ready',
  status: 'True',
  lastTransitionTime: T0,
  message: 'Member Connected',
  reason: 'Connected',
};

const clusterStatus: DeepRequired<antrea.ClusterSetStatus> = {
  totalClusters: 1,
  readyClusters: 1,
  observedGeneration: 3,
  conditions: [condition],
  clusterStatuses: [
    {
      clusterID: 'leader',
      conditions: [condition, { ...condition, type: 'IsLeader', message: 'This leader cluster is the leader for local cluster', reason: '' }],
      lastHeartbeatTime: T0,
    },
  ],
  imports: { total: 4, rejected: 1, conflicts: 1, divergent: 1 },
  leaders: '1/2',
};

const clusterSetFixture: Fixture<antrea.ClusterSet> = {
  apiVersion: antrea.CLUSTERSET.apiVersion,
  kind: antrea.CLUSTERSET.kind,
  metadata: { name: 'test-clusterset', namespace: 'kube-system' },
  spec: {
    clusterID: 'test-cluster-east',
    leaders: [{ clusterID: 'leader', server: 'https://172.18.0.1:6443', secret: 'leader-token' }],
    namespace: 'antrea-multicluster',
  },
  status: clusterStatus,
};

const memberCluster: DeepRequired<antrea.MemberClusterV1alpha1> = {
  clusterID: 'leader',
  server: 'https://172.18.0.1:6443',
  secret: 'leader-token',
  serviceAccount: 'member-east',
};

const clusterSetV1alpha1Fixture: Fixture<antrea.ClusterSetV1alpha1> = {
  apiVersion: antrea.CLUSTERSET_V1ALPHA1.apiVersion,
  kind: antrea.CLUSTERSET_V1ALPHA1.kind,
  metadata: { name: 'test-clusterset', namespace: 'kube-system' },
  spec: { leaders: [memberCluster], members: [{ ...memberCluster, clusterID: 'east' }], namespace: 'antrea-multicluster' },
  status: clusterStatus,
};

const mcaFixture: Fixture<antrea.MemberClusterAnnounce> = {
  apiVersion: antrea.MEMBER_CLUSTER_ANNOUNCE.apiVersion,
  kind: antrea.MEMBER_CLUSTER_ANNOUNCE.kind,
  metadata: {
    name: names.mcaName('test-cluster-east'),
    namespace: names.DEFAULT_LEADER_NAMESPACE,
    annotations: { [names.TIMESTAMP_ANNOTATION]: T0 },
  },
  clusterID: 'test-cluster-east',
  clusterSetID: 'test-clusterset',
  leaderClusterID: 'leader',
};

const clusterInfo: DeepRequired<antrea.ClusterInfo> = {
  clusterID: 'test-cluster-west',
  serviceCIDR: '10.96.0.0/12',
  gatewayInfos: [{ gatewayIP: '172.18.0.3' }],
  podCIDRs: ['10.244.0.0/16'],
  wireGuard: { publicKey: 'c2VjcmV0LXB1YmxpYy1rZXk=' },
};

const endpointAddress: DeepRequired<V1EndpointAddress> = {
  hostname: 'pod-0',
  ip: '10.96.10.10',
  nodeName: 'node-1',
  targetRef: {
    apiVersion: 'v1',
    fieldPath: 'spec.containers{nginx}',
    kind: 'Pod',
    name: 'nginx-0',
    namespace: 'default',
    resourceVersion: '42',
    uid: '5b8a4a8e-0000-4000-8000-000000000000',
  },
};

const endpointPort: DeepRequired<CoreV1EndpointPort> = { appProtocol: 'http', name: 'http', port: 80, protocol: 'TCP' };

const endpoints: DeepRequired<antrea.EndpointsPayload> = {
  subsets: [{ addresses: [endpointAddress], notReadyAddresses: [{ ...endpointAddress, ip: '10.96.10.11' }], ports: [endpointPort] }],
};

const acnp: DeepRequired<antrea.AntreaClusterNetworkPolicySpec> = {
  priority: 1.5,
  tier: 'securityops',
  appliedTo: [{ namespaceSelector: {} }],
  ingress: [{ action: 'Allow', from: [{ scope: 'ClusterSet', namespaceSelector: {} }] }],
  egress: [{ action: 'Drop', toServices: [{ name: 'nginx', namespace: 'default', scope: 'ClusterSet' }] }],
  // preserved, not declared in the schema
  futureField: { keep: true },
};

const externalEntitySpec: DeepRequired<antrea.ExternalEntitySpec> = {
  endpoints: [{ ip: '192.0.2.1', name: 'eth0' }],
  externalNode: 'vm-1',
  ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
};

const servicePorts: DeepRequired<mcs.ServiceImportPort>[] = [{ name: 'http', protocol: 'TCP', appProtocol: 'http', port: 80 }];
const sessionAffinityConfig: DeepRequired<mcs.SessionAffinityConfig> = { clientIP: { timeoutSeconds: 10800 } };

const resourceImportFixture: Fixture<antrea.ResourceImport> = {
  apiVersion: antrea.RESOURCE_IMPORT.apiVersion,
  kind: antrea.RESOURCE_IMPORT.kind,
  metadata: { name: 'default-nginx-service', namespace: names.DEFAULT_LEADER_NAMESPACE },
  spec: {
    clusterID: ['test-cluster-east'],
    name: 'nginx',
    namespace: 'default',
    kind: antrea.RESOURCE_IMPORT_KIND.ServiceImport,
    serviceImport: {
      apiVersion: mcs.SERVICE_IMPORT.apiVersion,
      kind: mcs.SERVICE_IMPORT.kind,
      metadata: {},
      spec: {
        ports: servicePorts,
        ips: ['10.96.20.20'],
        type: 'ClusterSetIP',
        sessionAffinity: 'ClientIP',
        sessionAffinityConfig,
        ipFamilies: ['IPv4'],
        internalTrafficPolicy: 'Cluster',
        trafficDistribution: 'PreferClose',
      },
      status: { clusters: [{ cluster: 'test-cluster-west' }] },
    },
    endpoints,
    clusterinfo: clusterInfo,
    clusternetworkpolicy: acnp,
    labelIdentity: { label: 'ns:kubernetes.io/metadata.name=default&pod:app=db', id: 7 },
    externalentity: { externalentityspec: externalEntitySpec },
    raw: { data: 'aGVsbG8=' },
  },
  status: {
    clusterStatuses: [{ clusterID: 'test-cluster-west', conditions: [{ ...condition, type: 'Succeeded', reason: 'Succeeded' }] }],
  },
};

const coreServicePort: DeepRequired<V1ServicePort> = {
  appProtocol: 'http',
  name: 'http',
  nodePort: 30080,
  port: 80,
  protocol: 'TCP',
  targetPort: 'http',
};

const resourceExportFixture: Fixture<antrea.ResourceExport> = {
  apiVersion: antrea.RESOURCE_EXPORT.apiVersion,
  kind: antrea.RESOURCE_EXPORT.kind,
  metadata: {
    name: names.resourceExportName('test-cluster-east', 'default', 'nginx', 'Service'),
    namespace: names.DEFAULT_LEADER_NAMESPACE,
    labels: {
      [names.RE_LABEL_SOURCE_NAME]: 'nginx',
      [names.RE_LABEL_SOURCE_NAMESPACE]: 'default',
      [names.RE_LABEL_SOURCE_CLUSTER_ID]: 'test-cluster-east',
      [names.RE_LABEL_SOURCE_KIND]: antrea.RESOURCE_EXPORT_KIND.Service,
    },
    finalizers: [names.RESOURCE_EXPORT_FINALIZER],
  },
  spec: {
    clusterID: 'test-cluster-east',
    name: 'nginx',
    namespace: 'default',
    kind: antrea.RESOURCE_EXPORT_KIND.Service,
    service: { serviceSpec: { ports: [coreServicePort, { ...coreServicePort, port: 81, targetPort: 8081 }], type: 'ClusterIP' } },
    endpoints,
    clusterInfo,
    clusterNetworkPolicy: acnp,
    labelIdentity: { normalizedLabel: 'ns:kubernetes.io/metadata.name=default&pod:app=db' },
    externalEntity: { externalEntitySpec },
    raw: { data: 'aGVsbG8=' },
  },
  status: { conditions: [{ ...condition, type: 'Succeeded', reason: '' }] },
};

const clusterInfoImportFixture: Fixture<antrea.ClusterInfoImport> = {
  apiVersion: antrea.CLUSTER_INFO_IMPORT.apiVersion,
  kind: antrea.CLUSTER_INFO_IMPORT.kind,
  metadata: { name: names.clusterInfoExportName('test-cluster-west'), namespace: 'kube-system' },
  spec: clusterInfo,
  status: { conditions: [condition] },
};

const labelIdentityFixture: Fixture<antrea.LabelIdentity> = {
  apiVersion: antrea.LABEL_IDENTITY.apiVersion,
  kind: antrea.LABEL_IDENTITY.kind,
  metadata: { name: '0123456789abcdef' },
  spec: { label: 'ns:kubernetes.io/metadata.name=default&pod:app=db', id: 7 },
};

const gatewayFixture: Fixture<antrea.Gateway> = {
  apiVersion: antrea.GATEWAY.apiVersion,
  kind: antrea.GATEWAY.kind,
  metadata: { name: 'node-1', namespace: 'kube-system' },
  gatewayIP: '172.18.0.3',
  internalIP: '10.0.0.3',
  serviceCIDR: '10.96.0.0/12',
  wireGuard: { publicKey: 'c2VjcmV0LXB1YmxpYy1rZXk=' },
};

const serviceImportFixture: Fixture<mcs.ServiceImport> = {
  apiVersion: mcs.SERVICE_IMPORT.apiVersion,
  kind: mcs.SERVICE_IMPORT.kind,
  metadata: { name: 'nginx', namespace: 'default' },
  spec: {
    ports: servicePorts,
    ips: ['10.96.20.20', 'fd00:10:96::20'],
    type: 'ClusterSetIP',
    sessionAffinity: 'None',
    sessionAffinityConfig,
    ipFamilies: ['IPv4', 'IPv6'],
    internalTrafficPolicy: 'Cluster',
    trafficDistribution: 'PreferClose',
  },
  status: {
    clusters: [{ cluster: 'test-cluster-west' }],
    conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: T0, message: '', reason: 'Ready', observedGeneration: 1 }],
    endpointSliceObjects: 'Present',
  },
};

/** v1alpha1 is still served by the same CRD, with the same schema. */
const serviceImportV1alpha1Fixture: Fixture<mcs.ServiceImport> = {
  ...serviceImportFixture,
  apiVersion: mcs.SERVICE_IMPORT_V1ALPHA1.apiVersion,
};

const serviceExportFixture: Fixture<mcs.ServiceExport> = {
  apiVersion: mcs.SERVICE_EXPORT.apiVersion,
  kind: mcs.SERVICE_EXPORT.kind,
  metadata: { name: 'nginx', namespace: 'default' },
  spec: { exportedLabels: { tier: 'web' }, exportedAnnotations: { 'example.com/owner': 'team-a' } },
  status: {
    conditions: [
      {
        type: mcs.SERVICE_EXPORT_CONDITION_VALID,
        status: 'True',
        lastTransitionTime: T0,
        message: 'The Service is exported successfully',
        reason: mcs.SERVICE_EXPORT_REASON.Succeed,
        observedGeneration: 1,
      },
    ],
  },
};

const serviceExportV1alpha1Fixture: Fixture<mcs.ServiceExport> = {
  ...serviceExportFixture,
  apiVersion: mcs.SERVICE_EXPORT_V1ALPHA1.apiVersion,
};

// ---------------------------------------------------------------------------------------
// Expectations per kind
// ---------------------------------------------------------------------------------------

type Col = [name: string, type: string, jsonPath: string];
const AGE: Col = ['Age', 'date', '.metadata.creationTimestamp'];
const ANTREA_CLUSTERSET_COLUMNS: Col[] = [
  ['Leader Cluster Namespace', 'string', '.spec.namespace'],
  ['Total Clusters', 'string', '.status.totalClusters'],
  ['Ready Clusters', 'string', '.status.readyClusters'],
];

interface KindCase {
  desc: meta.ResourceDescriptor;
  fixture: object;
  storage: boolean;
  statusSubresource: boolean;
  shortNames?: string[];
  columns: Col[];
  /** Schema paths with a `required` list ⇒ the required keys, type-checked against the TS type. */
  required: Record<string, readonly string[]>;
}

const endpointsRequired = (prefix: string): Record<string, readonly string[]> => ({
  [`${prefix}.subsets[].addresses[]`]: exactRequired<V1EndpointAddress>()('ip'),
  [`${prefix}.subsets[].notReadyAddresses[]`]: exactRequired<V1EndpointAddress>()('ip'),
  [`${prefix}.subsets[].ports[]`]: exactRequired<CoreV1EndpointPort>()('port'),
});

const CASES: KindCase[] = [
  {
    desc: antrea.CLUSTERSET,
    fixture: clusterSetFixture,
    storage: true,
    statusSubresource: true,
    columns: [
      ...ANTREA_CLUSTERSET_COLUMNS,
      ['Leader', 'string', '.spec.leaders[0].clusterID'],
      ['Leaders', 'string', '.status.leaders'],
      ['Ready', 'string', '.status.conditions[?(@.type=="Ready")].status'],
      ['Reason', 'string', '.status.conditions[?(@.type=="Ready")].reason'],
      ['Last Heartbeat', 'date', '.status.clusterStatuses[0].lastHeartbeatTime'],
      AGE,
    ],
    required: { spec: exactRequired<antrea.ClusterSetSpec>()('clusterID', 'leaders') },
  },
  {
    desc: antrea.CLUSTERSET_V1ALPHA1,
    fixture: clusterSetV1alpha1Fixture,
    storage: false,
    statusSubresource: true,
    columns: [...ANTREA_CLUSTERSET_COLUMNS, AGE],
    required: { spec: exactRequired<antrea.ClusterSetSpecV1alpha1>()('leaders') },
  },
  {
    desc: antrea.MEMBER_CLUSTER_ANNOUNCE,
    fixture: mcaFixture,
    storage: true,
    statusSubresource: false,
    columns: [['Cluster ID', 'string', '.clusterID'], ['ClusterSet ID', 'string', '.clusterSetID'], AGE],
    required: {},
  },
  {
    desc: antrea.RESOURCE_IMPORT,
    fixture: resourceImportFixture,
    storage: true,
    statusSubresource: true,
    columns: [['Kind', 'string', '.spec.kind'], ['Namespace', 'string', '.spec.namespace'], ['Name', 'string', '.spec.name'], AGE],
    required: {
      'spec.clusternetworkpolicy': exactRequired<antrea.AntreaClusterNetworkPolicySpec>()('priority'),
      ...endpointsRequired('spec.endpoints'),
      'spec.serviceImport.spec': exactRequired<antrea.ResourceImportServiceImportSpec>()('ports', 'type'),
      'spec.serviceImport.spec.ports[]': exactRequired<mcs.ServiceImportPort>()('port'),
      'spec.serviceImport.status.clusters[]': exactRequired<mcs.ServiceImportClusterStatus>()('cluster'),
    },
  },
  {
    desc: antrea.RESOURCE_EXPORT,
    fixture: resourceExportFixture,
    storage: true,
    statusSubresource: true,
    columns: [
      ['Cluster ID', 'string', '.spec.clusterID'],
      ['Kind', 'string', '.spec.kind'],
      ['Namespace', 'string', '.spec.namespace'],
      ['Name', 'string', '.spec.name'],
      AGE,
    ],
    required: {
      'spec.clusterNetworkPolicy': exactRequired<antrea.AntreaClusterNetworkPolicySpec>()('priority'),
      ...endpointsRequired('spec.endpoints'),
      'spec.service.serviceSpec.ports[]': exactRequired<V1ServicePort>()('port'),
    },
  },
  {
    desc: antrea.CLUSTER_INFO_IMPORT,
    fixture: clusterInfoImportFixture,
    storage: true,
    statusSubresource: true,
    columns: [['Cluster ID', 'string', '.spec.clusterID'], ['Service CIDR', 'string', '.spec.serviceCIDR'], AGE],
    required: {},
  },
  {
    desc: antrea.LABEL_IDENTITY,
    fixture: labelIdentityFixture,
    storage: true,
    statusSubresource: false,
    columns: [['Label', 'string', '.spec.label'], ['ID', 'string', '.spec.id'], AGE],
    required: {},
  },
  {
    desc: antrea.GATEWAY,
    fixture: gatewayFixture,
    storage: true,
    statusSubresource: true,
    columns: [['Gateway IP', 'string', '.gatewayIP'], ['Internal IP', 'string', '.internalIP'], AGE],
    required: {},
  },
  ...([[mcs.SERVICE_IMPORT, serviceImportFixture, true], [mcs.SERVICE_IMPORT_V1ALPHA1, serviceImportV1alpha1Fixture, false]] as const).map(([desc, fixture, storage]): KindCase => ({
    desc,
    fixture,
    storage,
    statusSubresource: true,
    shortNames: ['svcim', 'svcimport'],
    columns: [['Type', 'string', '.spec.type'], ['IP', 'string', '.spec.ips'], AGE],
    required: {
      spec: exactRequired<mcs.ServiceImportSpec>()('ports', 'type'),
      'spec.ports[]': exactRequired<mcs.ServiceImportPort>()('port'),
      'status.clusters[]': exactRequired<mcs.ServiceImportClusterStatus>()('cluster'),
      'status.conditions[]': exactRequired<meta.MetaCondition>()('lastTransitionTime', 'message', 'reason', 'status', 'type'),
    },
  })),
  ...([[mcs.SERVICE_EXPORT, serviceExportFixture, true], [mcs.SERVICE_EXPORT_V1ALPHA1, serviceExportV1alpha1Fixture, false]] as const).map(([desc, fixture, storage]): KindCase => ({
    desc,
    fixture,
    storage,
    statusSubresource: true,
    shortNames: ['svcex', 'svcexport'],
    columns: [AGE],
    required: {
      'status.conditions[]': exactRequired<meta.MetaCondition>()('lastTransitionTime', 'message', 'reason', 'status', 'type'),
    },
  })),
];

// ---------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------

const crds = loadCRDs();

function crdFor(desc: meta.ResourceDescriptor): { file: string; crd: CRD; version: CRDVersion; schema: Schema } {
  const name = `${desc.plural}.${desc.group}`;
  const entry = crds.get(name);
  assert.ok(entry, `no CRD named ${name} in ${CRD_DIR}`);
  const version = entry.crd.spec.versions.find((v) => v.name === desc.version);
  assert.ok(version, `${name}: no version ${desc.version}`);
  return { ...entry, version, schema: version.schema.openAPIV3Schema };
}

void describe('CRD files', () => {
  void test('every CRD file is a single apiextensions.k8s.io/v1 CRD named <plural>.<group>', () => {
    assert.ok(crds.size > 0, 'no CRDs found');
    for (const [name, { file, crd }] of crds) {
      assert.equal(crd.apiVersion, 'apiextensions.k8s.io/v1', file);
      assert.equal(crd.kind, 'CustomResourceDefinition', file);
      assert.equal(name, `${crd.spec.names.plural}.${crd.spec.group}`, `${file}: metadata.name`);
      assert.equal(file, `${crd.spec.group}_${crd.spec.names.plural}.yaml`, `${file}: file name`);
      // Upstream's MCS CRDs omit listKind: the apiserver defaults it to <Kind>List.
      assert.equal(crd.spec.names.listKind ?? `${crd.spec.names.kind}List`, `${crd.spec.names.kind}List`, `${file}: listKind`);
      assert.equal(crd.spec.names.singular, crd.spec.names.kind.toLowerCase(), `${file}: singular`);
      assert.ok(['Namespaced', 'Cluster'].includes(crd.spec.scope), `${file}: scope`);
    }
  });

  void test('exactly one storage version per CRD, all versions served', () => {
    for (const { file, crd } of crds.values()) {
      assert.equal(crd.spec.versions.filter((v) => v.storage).length, 1, `${file}: storage versions`);
      for (const v of crd.spec.versions) assert.equal(v.served, true, `${file} ${v.name}: served`);
      // Upstream's MCS CRDs leave the strategy to its default, None.
      if (crd.spec.versions.length > 1) assert.equal(crd.spec.conversion?.strategy ?? 'None', 'None', `${file}: conversion strategy`);
    }
  });

  void test('every CRD file and version is covered by a typed fixture', () => {
    const covered = new Set(CASES.map((c) => `${c.desc.plural}.${c.desc.group}/${c.desc.version}`));
    for (const [name, { crd }] of crds) {
      for (const v of crd.spec.versions) assert.ok(covered.has(`${name}/${v.name}`), `${name}/${v.name} has no fixture in this test`);
    }
  });

  void test('schemas are structural (kube-apiserver rules) and defaults are valid', () => {
    for (const { file, crd } of crds.values()) {
      for (const v of crd.spec.versions) {
        const root = v.schema.openAPIV3Schema;
        const errors: string[] = [];
        lintSchema(root, '', errors);
        assert.equal(root.type, 'object', `${file} ${v.name}: root type`);
        assert.deepEqual(root.properties?.metadata, { type: 'object' }, `${file} ${v.name}: root metadata must be plain {type: object}`);
        assert.deepEqual(errors, [], `${file} ${v.name}`);
      }
    }
  });

  void test('printer-column JSONPaths point at schema fields', () => {
    for (const { file, crd } of crds.values()) {
      for (const v of crd.spec.versions) {
        for (const col of v.additionalPrinterColumns ?? []) {
          const node = resolveJSONPath(v.schema.openAPIV3Schema, col.jsonPath);
          assert.ok(node, `${file} ${v.name}: column "${col.name}" ${col.jsonPath} is not in the schema`);
          if (col.type === 'date') assert.ok(node.type === 'object' || node.format === 'date-time', `${file}: column ${col.name} type date on a non date-time field`);
        }
      }
    }
  });
});

void describe('CRDs match the types of src/common/api/', () => {
  for (const c of CASES) {
    void describe(`${c.desc.kind} ${c.desc.version}`, () => {
      void test('descriptor matches the CRD (group, kind, plural, scope, storage, subresources, shortNames)', () => {
        const { file, crd, version } = crdFor(c.desc);
        assert.equal(crd.spec.group, c.desc.group, file);
        assert.equal(crd.spec.names.kind, c.desc.kind, file);
        assert.equal(crd.spec.names.plural, c.desc.plural, file);
        assert.equal(c.desc.apiVersion, `${c.desc.group}/${c.desc.version}`, 'descriptor apiVersion');
        assert.equal(crd.spec.scope, c.desc.namespaced ? 'Namespaced' : 'Cluster', `${file}: scope`);
        assert.equal(version.served, true, `${file}: served`);
        assert.equal(version.storage, c.storage, `${file}: storage`);
        assert.equal(version.subresources?.status !== undefined, c.statusSubresource, `${file}: status subresource`);
        assert.equal(version.subresources?.scale, undefined, `${file}: no scale subresource`);
        assert.deepEqual(crd.spec.names.shortNames ?? [], c.shortNames ?? [], `${file}: shortNames`);
      });

      void test('printer columns are exactly the expected ones, Age last', () => {
        const { file, version } = crdFor(c.desc);
        const cols = (version.additionalPrinterColumns ?? []).map((p): Col => [p.name, p.type, p.jsonPath]);
        assert.deepEqual(cols, c.columns, file);
        // Leaders ("2/3") only with -o wide: a one-leader ClusterSet's default table stays as it was (issue 30).
        for (const p of version.additionalPrinterColumns ?? []) assert.equal(p.priority ?? 0, c.desc === antrea.CLUSTERSET && p.name === 'Leaders' ? 1 : 0, `${file}: column ${p.name} hidden`);
      });

      void test('fixture (every field of the TS type) validates against the schema: no TS field missing from the CRD', () => {
        const { schema } = crdFor(c.desc);
        assert.equal((c.fixture as meta.KubeObject).apiVersion, c.desc.apiVersion);
        assert.equal((c.fixture as meta.KubeObject).kind, c.desc.kind);
        const errors: string[] = [];
        validate(c.fixture, schema, '', errors);
        assert.deepEqual(errors, []);
      });

      void test('every schema field is in the fixture: no CRD field missing from the TS type', () => {
        const { schema } = crdFor(c.desc);
        const missing: string[] = [];
        coverage(c.fixture, schema, '', missing);
        assert.deepEqual(missing, []);
      });

      void test('required fields agree between schema and TS type', () => {
        const { schema } = crdFor(c.desc);
        const actual = Object.fromEntries(requiredByPath(schema, '', new Map()));
        const expected = Object.fromEntries(Object.entries(c.required).map(([p, keys]) => [p, [...keys].sort()]));
        assert.deepEqual(actual, expected);
      });
    });
  }
});

void describe('ClusterSet documentation and member-side additions', () => {
  void test('kubectl explain clusterset.spec is helpful: every spec field is described', () => {
    const { schema } = crdFor(antrea.CLUSTERSET);
    const spec = schema.properties?.spec;
    assert.ok(spec);
    assert.deepEqual(descriptionsMissing(spec, 'spec', []), []);
    const secret = spec.properties?.leaders?.items?.properties?.secret?.description ?? '';
    assert.match(secret, /ca\.crt/);
    assert.match(secret, /token/);
    assert.match(secret, /same Namespace/i);
    assert.match(schema.description ?? '', /metadata\.name is the ClusterSet ID/);
    assert.match(schema.description ?? '', /leader/);
  });

  void test('v1alpha2 and v1alpha1 share the status schema (no conversion webhook)', () => {
    const a = crdFor(antrea.CLUSTERSET).schema.properties?.status;
    const b = crdFor(antrea.CLUSTERSET_V1ALPHA1).schema.properties?.status;
    const strip = (s: unknown): unknown =>
      Array.isArray(s) ? s.map(strip) : isRecord(s) ? Object.fromEntries(Object.entries(s).filter(([k]) => k !== 'description').map(([k, v]) => [k, strip(v)])) : s;
    assert.deepEqual(strip(a), strip(b));
  });

  void test('MCS v1beta1 and v1alpha1 have one schema (no conversion webhook: either version reads every stored object)', () => {
    for (const [beta, alpha] of [[mcs.SERVICE_IMPORT, mcs.SERVICE_IMPORT_V1ALPHA1], [mcs.SERVICE_EXPORT, mcs.SERVICE_EXPORT_V1ALPHA1]] as const) {
      assert.deepEqual(crdFor(beta).schema, crdFor(alpha).schema, beta.kind);
      assert.deepEqual(crdFor(beta).version.additionalPrinterColumns, crdFor(alpha).version.additionalPrinterColumns, beta.kind);
    }
  });

  void test('v1alpha1 has no spec.clusterID, v1alpha2 has it', () => {
    assert.equal(crdFor(antrea.CLUSTERSET_V1ALPHA1).schema.properties?.spec?.properties?.clusterID, undefined);
    assert.ok(crdFor(antrea.CLUSTERSET).schema.properties?.spec?.properties?.clusterID);
  });

  void test('validator rejects fields unknown to the schema and wrong types (self-test)', () => {
    const { schema } = crdFor(antrea.CLUSTERSET);
    const errors: string[] = [];
    validate({ ...clusterSetFixture, spec: { ...clusterSetFixture.spec, bogus: 1 }, status: { totalClusters: '1' } }, schema, '', errors);
    assert.deepEqual(errors, ['.spec: unknown field "bogus" (not in the CRD schema: the apiserver would prune it)', '.status.totalClusters: expected integer, got "1"']);
    const missing: string[] = [];
    coverage({ spec: { clusterID: 'x', leaders: [] } }, schema, '', missing);
    assert.ok(missing.includes('.spec.leaders[]') && missing.includes('.status') && missing.includes('.spec.namespace'), missing.join());
  });
});

void describe('constants and helpers', () => {
  void test('names and annotations from the wire spec', () => {
    assert.equal(names.mcaName('test-cluster-east'), 'member-announce-from-test-cluster-east');
    assert.equal(names.TIMESTAMP_ANNOTATION, 'touch-ts');
    assert.equal(names.antreaMCName('nginx'), 'antrea-mc-nginx');
    assert.equal(names.IMPORTED_SERVICE_ANNOTATION, 'multicluster.antrea.io/imported-service');
    assert.equal(names.IMPORTED_ACNP_ANNOTATION, 'multicluster.antrea.io/imported-acnp');
    assert.equal(names.CLUSTER_ID_ANNOTATION, 'multicluster.antrea.io/cluster-id');
    assert.equal(names.resourceImportName('default', 'nginx', 'Service'), 'default-nginx-service');
    assert.equal(names.resourceImportName('', 'deny-all', 'AntreaClusterNetworkPolicy'), 'deny-all-antreaclusternetworkpolicy');
    assert.equal(names.resourceExportName('east', 'default', 'nginx', 'Endpoints'), 'east-default-nginx-endpoints');
    assert.equal(names.clusterInfoExportName('east'), 'east-clusterinfo');
    assert.deepEqual(Object.values(antrea.RESOURCE_IMPORT_KIND).sort(), [
      'AntreaClusterNetworkPolicy',
      'ClusterInfo',
      'Endpoints',
      'LabelIdentity',
      'ServiceImport',
    ]);
    assert.ok(antrea.isResourceImportKind('ServiceImport'));
    assert.ok(!antrea.isResourceImportKind('ExternalEntity'));
    assert.ok(meta.isConditionStatus('Unknown') && !meta.isConditionStatus('true'));
  });
});
