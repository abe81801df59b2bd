// The member-side import firewall: every ResourceImport is checked here, after rules.ts has
// turned it into desired objects and before anything is written. A leader (or anyone holding
// its credentials) can otherwise create Services, Endpoints and cluster-wide network policy
// in every member (peers.md, "what a compromised hub can do"); Antrea's member applies
// whatever it is sent. Pure.
//
// What is NOT checked here: name collisions with objects the agent does not own (the engine
// sees the live objects and reports `Conflict`), and the member's own node and service CIDRs
// (not known to this module).
//
// Messages name the ResourceImport, the rule and the offending value, shortened: they end up
// in Events and logs, and a hostile payload must not be echoed into them.
import { isIP } from 'node:net';
import { parseCidr, parseIp } from '../common/net/cidr.js';
import { ENDPOINT_SOURCES_ANNOTATION, isDnsLabel, isDnsSubdomain } from '../common/api/names.js';
import { isResourceImportKind, RESOURCE_IMPORT_KIND, type ResourceImport } from '../common/api/antrea.js';
import { isExportedMetadata, readExportedMetadata } from '../common/api/exported-metadata.js';
import { IMPORTABLE_KINDS, type ImportPolicyConfig } from '../common/config/config.js';
import { isRecord } from '../common/kube/json.js';
import { parseEndpointSources } from './endpoint-slices.js';
import type { DesiredObject } from './rules.js';

export type RejectionRule =
  | 'UnknownKind'
  | 'KindNotAllowed'
  | 'NamespaceDenied'
  | 'NamespaceNotAllowed'
  | 'NamespaceNotFound'
  /** The target namespace is being deleted: nothing can be created there until it is re-created. */
  | 'NamespaceTerminating'
  | 'InvalidName'
  | 'AddressRejected'
  | 'ObjectTooLarge'
  | 'TooManyObjects'
  | 'InvalidPayload'
  /** The member's kube-apiserver refused an object of the import as invalid (HTTP 422 or 400; importer.ts). */
  | 'InvalidObject'
  /** An Endpoints import whose ServiceImport sibling is not (or not yet) imported: held back (importer.ts). */
  | 'ServiceNotImported';

/** What the importer keeps per refused ResourceImport: two short strings, never a payload. */
export interface Rejection {
  rule: RejectionRule;
  message: string;
}

export interface ImportCheckInput {
  ri: ResourceImport;
  /** desiredForImport's `apply` objects for `ri`. */
  objects: readonly DesiredObject[];
  policy: ImportPolicyConfig;
  /** Whether a namespace exists in the member cluster now (from an informer cache). */
  namespaceExists: (ns: string) => boolean;
  /** Whether an existing namespace is being deleted (phase Terminating). @default never */
  namespaceTerminating?: (ns: string) => boolean;
  /**
   * Objects this leader already has in the member, NOT counting those of `ri` itself. Omitted
   * by the importer, which admits whole exported services against the cap itself
   * ({@link tooManyObjects}): a count taken here is stale by the time the creates land.
   */
  ownedCount?: number;
}

/** `ResourceImport <ns>/<name> rejected (<rule>): <detail>`, the form of every rejection message. */
export function rejectionOf(ri: ResourceImport, rule: RejectionRule, detail: string): Rejection {
  return { rule, message: `ResourceImport ${ri.metadata?.namespace ?? ''}/${ri.metadata?.name ?? ''} rejected (${rule}): ${detail}` };
}

/** The detail of a rejection message, without the `ResourceImport ... rejected (<rule>): ` prefix. */
export function rejectionDetail(rejection: Rejection): string {
  const marker = `rejected (${rejection.rule}): `;
  const at = rejection.message.indexOf(marker);
  return at === -1 ? rejection.message : rejection.message.slice(at + marker.length);
}

/** The member's kube-apiserver refused `object` (HTTP 422 or 400) with `reason`: nothing of the import is kept. */
export function invalidObject(ri: ResourceImport, object: string, reason: string): Rejection {
  const shown = reason.length > 300 ? `${reason.slice(0, 300)}... (${reason.length} characters)` : reason;
  return rejectionOf(ri, 'InvalidObject', `kube-apiserver refused ${object}: ${shown}; nothing of this import is kept until the ResourceImport changes`);
}

/**
 * The per-leader cap refuses `what` (e.g. "the exported Service team-a/web (Service,
 * ServiceImport and Endpoints)"), which needs `size` objects. The message does not carry the
 * current count, so that one refused import stays one distinct rejection (one Event) however
 * the count moves while it waits.
 */
export function tooManyObjects(ri: ResourceImport, what: string, size: number, policy: Pick<ImportPolicyConfig, 'maxObjectsPerLeader'>): Rejection {
  return rejectionOf(ri, 'TooManyObjects',
    `${what} needs ${size} object(s), which do not fit within imports.maxObjectsPerLeader (${policy.maxObjectsPerLeader}) next to what this leader already has`);
}

const SHOWN_CHARS = 64;

/** A value for a message: quoted, cut to 64 characters, never a whole payload. */
export function show(value: unknown): string {
  if (value === undefined) return '(absent)';
  if (typeof value === 'string') {
    return value.length > SHOWN_CHARS ? `${JSON.stringify(value.slice(0, SHOWN_CHARS))}... (${value.length} characters)` : JSON.stringify(value);
  }
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return Array.isArray(value) ? `(a list of ${value.length})` : `(${typeof value})`;
}

// ---------------------------------------------------------------------------------------
// Addresses
// ---------------------------------------------------------------------------------------

interface Range {
  readonly family: 4 | 6;
  readonly base: bigint;
  readonly prefix: number;
  readonly cidr: string;
  readonly what: string;
}

/** The numeric value of an address {@link parseIp} accepted (callers checked it with isIP). */
function valueOf(ip: string): bigint {
  return parseIp(ip)?.value ?? 0n;
}

function range(text: string, what: string): Range {
  const cidr = parseCidr(text);
  if (cidr === undefined) throw new Error(`not a CIDR: ${text}`);
  return { family: cidr.family, base: cidr.value, prefix: cidr.prefix, cidr: text, what };
}

function contains(r: Range, family: 4 | 6, value: bigint, prefix: number): boolean {
  if (r.family !== family) return false;
  const shift = BigInt((family === 4 ? 32 : 128) - Math.min(r.prefix, prefix));
  return r.base >> shift === value >> shift;
}

// Order matters: the first match names the problem, so the specific ranges come first.
const V4_REJECTED: readonly Range[] = [
  range('0.0.0.0/32', 'the unspecified address'),
  range('0.0.0.0/8', 'a "this network" address (0.0.0.0/8)'),
  range('127.0.0.0/8', 'a loopback address (127.0.0.0/8)'),
  range('169.254.169.254/32', 'the cloud metadata endpoint'),
  range('169.254.0.0/16', 'a link-local address (169.254.0.0/16)'),
  range('224.0.0.0/4', 'a multicast address (224.0.0.0/4)'),
  range('255.255.255.255/32', 'the broadcast address'),
];

const V6_MAPPED = range('::ffff:0:0/96', 'an IPv4-mapped address');
const V6_REJECTED: readonly Range[] = [
  range('::/128', 'the unspecified address'),
  range('::1/128', 'the loopback address'),
  // AWS's IPv6 instance metadata endpoint, the counterpart of 169.254.169.254.
  range('fd00:ec2::254/128', 'the cloud metadata endpoint'),
  range('::/96', 'an IPv4-compatible address (deprecated, ::/96)'),
  range('fe80::/10', 'a link-local address (fe80::/10)'),
  range('ff00::/8', 'a multicast address (ff00::/8)'),
];

function describe(hit: Range | undefined): string | undefined {
  return hit === undefined ? undefined : `is ${hit.what}`;
}

/**
 * Why an address may not be imported (a phrase to follow the address), or undefined when it may: not an IP, loopback,
 * link-local (the metadata endpoint included), multicast, unspecified, broadcast, or any of
 * these written as an IPv4-mapped IPv6 address. Such addresses would let a leader point
 * member traffic at the node itself or at the cloud metadata service.
 */
export function addressProblem(ip: unknown): string | undefined {
  if (typeof ip !== 'string') return 'is not a string';
  if (ip.includes('%')) return 'carries an IPv6 zone, which is only meaningful on one host';
  const family = isIP(ip);
  if (family === 0) return 'is not a valid IP address';
  // Parsed once, not once per rejected range (a tenth of the firewall's time in a sync's profile).
  const value = valueOf(ip);
  if (family === 4) return describe(V4_REJECTED.find((r) => contains(r, 4, value, 32)));
  if (contains(V6_MAPPED, 6, value, 128)) {
    const inner = V4_REJECTED.find((r) => contains(r, 4, value & 0xffffffffn, 32));
    return inner === undefined ? undefined : `is IPv4-mapped, and ${inner.what}`;
  }
  return describe(V6_REJECTED.find((r) => contains(r, 6, value, 128)));
}

/**
 * Why a CIDR (ClusterInfo pod or service CIDR) may not be imported (a phrase to follow it): malformed, or overlapping
 * a rejected range. `0.0.0.0/0` overlaps them all: as a pod CIDR it would send every packet
 * of the member to the leader-chosen gateway.
 */
export function cidrProblem(cidr: unknown): string | undefined {
  if (typeof cidr !== 'string') return 'is not a string';
  // The leader judged this CIDR with the same parser (common/net/cidr.ts).
  const parsed = parseCidr(cidr);
  if (parsed === undefined) return 'is not a valid CIDR';
  const { prefix, value } = parsed;
  if (prefix === 0) return 'is a default route, covering every address';
  const v4 = parsed.family === 4;
  const rejected = v4 ? V4_REJECTED : [...V6_REJECTED, V6_MAPPED];
  const hit = rejected.find((r) => contains(r, v4 ? 4 : 6, value, prefix));
  return hit === undefined ? undefined : `overlaps ${hit.cidr}, ${hit.what}`;
}

// ---------------------------------------------------------------------------------------
// Payloads
// ---------------------------------------------------------------------------------------

const PROTOCOLS = new Set(['TCP', 'UDP', 'SCTP']);

function portProblems(ports: readonly unknown[], path: string): string | undefined {
  const names = new Set<string>();
  const numbers = new Set<string>();
  for (const [i, entry] of ports.entries()) {
    const at = `${path}[${i}]`;
    if (!isRecord(entry)) return `${at} is not an object`;
    const { port, protocol, name } = entry;
    if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) return `${at}.port ${show(port)} is outside 1-65535`;
    if (protocol !== undefined && !(typeof protocol === 'string' && PROTOCOLS.has(protocol))) return `${at}.protocol ${show(protocol)} is not TCP, UDP or SCTP`;
    if (name !== undefined && name !== '' && !isDnsLabel(name)) return `${at}.name ${show(name)} is not a DNS-1123 label`;
    // Kubernetes requires names on every port of a multi-port Service or Endpoints subset.
    if (ports.length > 1) {
      if (typeof name !== 'string' || name === '') return `${at} has no name, required when there is more than one port`;
      if (names.has(name)) return `${at}.name ${show(name)} is used twice`;
      names.add(name);
    }
    const key = `${port}/${typeof protocol === 'string' ? protocol : 'TCP'}`;
    if (numbers.has(key)) return `${at} repeats port ${key}`;
    numbers.add(key);
  }
  return undefined;
}

function serviceImportPayloadProblem(ri: ResourceImport): string | undefined {
  const spec: unknown = ri.spec?.serviceImport?.spec;
  if (!isRecord(spec)) return 'spec.serviceImport.spec is missing';
  const ports = spec['ports'];
  if (!Array.isArray(ports) || ports.length === 0) return 'spec.serviceImport.spec.ports is empty: a Service needs at least one port';
  const portProblem = portProblems(ports, 'spec.serviceImport.spec.ports');
  if (portProblem !== undefined) return portProblem;
  const type = spec['type'];
  if (type !== 'ClusterSetIP' && type !== 'Headless') return `spec.serviceImport.spec.type ${show(type)} is not ClusterSetIP or Headless`;
  const ips = spec['ips'];
  if (ips !== undefined && !(Array.isArray(ips) && ips.length <= 1)) return `spec.serviceImport.spec.ips ${show(ips)} must list at most one address`;
  const affinity = spec['sessionAffinity'];
  if (affinity !== undefined && affinity !== 'None' && affinity !== 'ClientIP') return `spec.serviceImport.spec.sessionAffinity ${show(affinity)} is not None or ClientIP`;
  const trafficPolicy = spec['internalTrafficPolicy'];
  if (trafficPolicy !== undefined && trafficPolicy !== 'Cluster' && trafficPolicy !== 'Local') return `spec.serviceImport.spec.internalTrafficPolicy ${show(trafficPolicy)} is not Cluster or Local`;
  const distribution = spec['trafficDistribution'];
  // Kubernetes accepts a growing set of values (PreferClose, PreferSameZone, ...): any short label-like word.
  if (distribution !== undefined && !(typeof distribution === 'string' && /^[A-Za-z][A-Za-z0-9]{0,62}$/.test(distribution))) {
    return `spec.serviceImport.spec.trafficDistribution ${show(distribution)} is not a traffic distribution name`;
  }
  const config = spec['sessionAffinityConfig'];
  const clientIP = isRecord(config) ? config['clientIP'] : undefined;
  const timeout = isRecord(clientIP) ? clientIP['timeoutSeconds'] : undefined;
  if (timeout !== undefined && !(typeof timeout === 'number' && Number.isInteger(timeout) && timeout >= 1 && timeout <= 86400)) {
    return `spec.serviceImport.spec.sessionAffinityConfig.clientIP.timeoutSeconds ${show(timeout)} is outside 1-86400`;
  }
  return undefined;
}

/**
 * The exported labels and annotations the leader sends for the ServiceImport's metadata
 * (KEP-1645): at most so many entries and bytes, qualified-name keys, label values, and no key
 * of Kubernetes', the MCS API's, Antrea's or this agent's own prefixes (a leader must not
 * relabel what the agent owns by). A leader of this project sends nothing else: the rules are
 * the ones its exporters and its aggregation apply (common/api/exported-metadata.ts).
 */
function exportedMetadataProblem(ri: ResourceImport): string | undefined {
  const read = readExportedMetadata(ri.metadata?.annotations);
  return isExportedMetadata(read) ? undefined : read.problem;
}

/** The leader's per-cluster split of the subsets (labels of the EndpointSlices): absent, or exact. */
function endpointSourcesProblem(ri: ResourceImport): string | undefined {
  const subsets = ri.spec?.endpoints?.subsets;
  const parsed = parseEndpointSources(ri.metadata?.annotations?.[ENDPOINT_SOURCES_ANNOTATION], Array.isArray(subsets) ? subsets.length : 0);
  return typeof parsed === 'string' ? `annotation ${ENDPOINT_SOURCES_ANNOTATION}: ${parsed}` : undefined;
}

function endpointsPayloadProblem(ri: ResourceImport): string | undefined {
  // `endpoints: {}` is how Go's omitempty writes an empty subset list, so only a missing
  // payload is malformed; empty subsets mean "no endpoints", which any leader may say.
  const endpoints: unknown = ri.spec?.endpoints;
  if (!isRecord(endpoints)) return 'spec.endpoints is missing';
  const subsets = endpoints['subsets'];
  if (subsets === undefined) return undefined;
  if (!Array.isArray(subsets)) return 'spec.endpoints.subsets is not a list';
  for (const [i, subset] of subsets.entries()) {
    const at = `spec.endpoints.subsets[${i}]`;
    if (!isRecord(subset)) return `${at} is not an object`;
    for (const field of ['addresses', 'notReadyAddresses'] as const) {
      const list = subset[field];
      if (list === undefined) continue;
      if (!Array.isArray(list)) return `${at}.${field} is not a list`;
      for (const [j, address] of list.entries()) {
        if (!isRecord(address) || typeof address['ip'] !== 'string') return `${at}.${field}[${j}] has no ip`;
        const { hostname, nodeName } = address;
        if (hostname !== undefined && hostname !== '' && !isDnsLabel(hostname)) return `${at}.${field}[${j}].hostname ${show(hostname)} is not a DNS-1123 label`;
        if (nodeName !== undefined && nodeName !== '' && !isDnsSubdomain(nodeName)) return `${at}.${field}[${j}].nodeName ${show(nodeName)} is not a DNS-1123 subdomain`;
      }
    }
    const ports = subset['ports'];
    if (ports !== undefined) {
      if (!Array.isArray(ports)) return `${at}.ports is not a list`;
      const problem = portProblems(ports, `${at}.ports`);
      if (problem !== undefined) return problem;
    }
  }
  return undefined;
}

function clusterInfoPayloadProblem(ri: ResourceImport): string | undefined {
  const info: unknown = ri.spec?.clusterinfo;
  if (!isRecord(info)) return 'spec.clusterinfo is missing';
  const gateways = info['gatewayInfos'];
  if (gateways !== undefined && !(Array.isArray(gateways) && gateways.every(isRecord))) return 'spec.clusterinfo.gatewayInfos is not a list of objects';
  const podCIDRs = info['podCIDRs'];
  if (podCIDRs !== undefined && !Array.isArray(podCIDRs)) return 'spec.clusterinfo.podCIDRs is not a list';
  return undefined;
}

function acnpPayloadProblem(ri: ResourceImport): string | undefined {
  const policy: unknown = ri.spec?.clusternetworkpolicy;
  if (!isRecord(policy)) return 'spec.clusternetworkpolicy is missing';
  const priority = policy['priority'];
  if (typeof priority !== 'number' || !Number.isFinite(priority)) return `spec.clusternetworkpolicy.priority ${show(priority)} is not a number`;
  return undefined;
}

function labelIdentityPayloadProblem(ri: ResourceImport): string | undefined {
  const identity: unknown = ri.spec?.labelIdentity;
  if (!isRecord(identity)) return 'spec.labelIdentity is missing';
  const { label, id } = identity;
  if (typeof label !== 'string' || label === '') return 'spec.labelIdentity.label is empty';
  if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id > 0xffffffff) return `spec.labelIdentity.id ${show(id)} is not a 32-bit unsigned integer`;
  return undefined;
}

function payloadProblem(ri: ResourceImport): string | undefined {
  switch (ri.spec?.kind ?? '') {
    case RESOURCE_IMPORT_KIND.ServiceImport: return serviceImportPayloadProblem(ri) ?? exportedMetadataProblem(ri);
    case RESOURCE_IMPORT_KIND.Endpoints: return endpointsPayloadProblem(ri) ?? endpointSourcesProblem(ri);
    case RESOURCE_IMPORT_KIND.ClusterInfo: return clusterInfoPayloadProblem(ri);
    case RESOURCE_IMPORT_KIND.AntreaClusterNetworkPolicy: return acnpPayloadProblem(ri);
    case RESOURCE_IMPORT_KIND.LabelIdentity: return labelIdentityPayloadProblem(ri);
    default: return undefined;
  }
}

/** Every address and CIDR the RI carries, with where it is. Called after payloadProblem passed. */
function* addressesOf(ri: ResourceImport): Generator<{ path: string; value: unknown; cidr: boolean }> {
  const spec = ri.spec;
  if (spec === undefined) return;
  switch (spec.kind ?? '') {
    case RESOURCE_IMPORT_KIND.ServiceImport: {
      for (const [i, ip] of (spec.serviceImport?.spec?.ips ?? []).entries()) yield { path: `spec.serviceImport.spec.ips[${i}]`, value: ip, cidr: false };
      return;
    }
    case RESOURCE_IMPORT_KIND.Endpoints: {
      for (const [i, subset] of (spec.endpoints?.subsets ?? []).entries()) {
        for (const [j, a] of (subset.addresses ?? []).entries()) yield { path: `spec.endpoints.subsets[${i}].addresses[${j}].ip`, value: a.ip, cidr: false };
        for (const [j, a] of (subset.notReadyAddresses ?? []).entries()) {
          yield { path: `spec.endpoints.subsets[${i}].notReadyAddresses[${j}].ip`, value: a.ip, cidr: false };
        }
      }
      return;
    }
    case RESOURCE_IMPORT_KIND.ClusterInfo: {
      const info = spec.clusterinfo;
      for (const [i, g] of (info?.gatewayInfos ?? []).entries()) {
        // An absent gateway IP is Antrea's "not yet known", not an address.
        if (g.gatewayIP !== undefined && g.gatewayIP !== '') yield { path: `spec.clusterinfo.gatewayInfos[${i}].gatewayIP`, value: g.gatewayIP, cidr: false };
      }
      if (info?.serviceCIDR !== undefined && info.serviceCIDR !== '') {
        // Dual-stack clusters report "v4cidr,v6cidr".
        for (const [i, cidr] of info.serviceCIDR.split(',').entries()) yield { path: `spec.clusterinfo.serviceCIDR[${i}]`, value: cidr.trim(), cidr: true };
      }
      for (const [i, cidr] of (info?.podCIDRs ?? []).entries()) yield { path: `spec.clusterinfo.podCIDRs[${i}]`, value: cidr, cidr: true };
      return;
    }
    default:
      return;
  }
}

// ---------------------------------------------------------------------------------------
// The firewall
// ---------------------------------------------------------------------------------------

function isImportableKind(kind: unknown): kind is (typeof IMPORTABLE_KINDS)[number] {
  return isResourceImportKind(kind) && (IMPORTABLE_KINDS as readonly string[]).includes(kind);
}

// Names that end up in a Service's DNS name must be DNS labels. Endpoints count as such too:
// an `antrea-mc-<name>` Endpoints is only ever read as the endpoints of the Service of the same
// name, so a name no Service can have is a malformed import, not a reason to half-apply it.
const LABEL_NAMED_KINDS = new Set(['Service', 'Endpoints', 'ServiceImport']);

function nameProblem(obj: DesiredObject): string | undefined {
  if (LABEL_NAMED_KINDS.has(obj.kind)) {
    if (!isDnsLabel(obj.name)) return `${obj.kind} name ${show(obj.name)} is not a DNS-1123 label (lower-case letters, digits and '-', at most 63 characters)`;
  } else if (!isDnsSubdomain(obj.name)) {
    return `${obj.kind} name ${show(obj.name)} is not a DNS-1123 subdomain`;
  }
  if (obj.namespaced && !isDnsLabel(obj.namespace)) return `namespace ${show(obj.namespace)} is not a valid namespace name`;
  return undefined;
}

/** Namespaces the leader chose (spec.namespace); ClusterInfoImports go to the agent's own, by design. */
function leaderChosenNamespaces(objects: readonly DesiredObject[]): string[] {
  const namespaces = objects
    .filter((o) => o.namespaced && o.sourceKind !== RESOURCE_IMPORT_KIND.ClusterInfo)
    .map((o) => o.namespace ?? '');
  return [...new Set(namespaces)];
}

/** The leader-chosen namespaces of `objects` that do not exist (what a `NamespaceNotFound` refusal waits for). */
export function missingNamespaces(objects: readonly DesiredObject[], namespaceExists: (ns: string) => boolean): string[] {
  return leaderChosenNamespaces(objects).filter((ns) => !namespaceExists(ns));
}

/**
 * The leader-chosen namespaces of `objects` an import cannot land in until they are (re-)created:
 * missing or Terminating (what a NamespaceNotFound or NamespaceTerminating refusal waits for).
 */
export function unavailableNamespaces(objects: readonly DesiredObject[], namespaceExists: (ns: string) => boolean,
  namespaceTerminating: (ns: string) => boolean = () => false): string[] {
  return leaderChosenNamespaces(objects).filter((ns) => !namespaceExists(ns) || namespaceTerminating(ns));
}

/** The refusal for objects going into `namespace`, which is being deleted. */
export function namespaceTerminating(ri: ResourceImport, namespace: string): Rejection {
  return rejectionOf(ri, 'NamespaceTerminating', `target namespace ${show(namespace)} is being deleted (Terminating): the import lands once the namespace is created again`);
}

/**
 * Whether the leader may have these objects in this member. Checks run in a fixed order and
 * the first failure is returned, so one RI always yields the same rule: kind, names,
 * namespaces, size, payload shape, addresses, then (when `ownedCount` is given) the per-leader
 * object count. A name
 * collision with a user's object is not checked here (the engine reports it as a conflict).
 */
export function checkImport(input: ImportCheckInput): Rejection | undefined {
  const { ri, objects, policy } = input;
  const reject = (rule: RejectionRule, detail: string): Rejection => rejectionOf(ri, rule, detail);

  const kind = ri.spec?.kind;
  if (!isImportableKind(kind)) return reject('UnknownKind', `spec.kind ${show(kind)} is not one of ${IMPORTABLE_KINDS.join(', ')}`);
  if (!policy.allowedKinds.includes(kind)) {
    return reject('KindNotAllowed', `spec.kind ${kind} is not in imports.allowedKinds (${policy.allowedKinds.join(', ')})`);
  }

  for (const obj of objects) {
    const problem = nameProblem(obj);
    if (problem !== undefined) return reject('InvalidName', problem);
  }

  const namespaces = leaderChosenNamespaces(objects);
  for (const ns of namespaces) {
    if (policy.alwaysDeniedNamespaces.includes(ns)) return reject('NamespaceDenied', `target namespace ${show(ns)} is a system or agent namespace, never imported into`);
    if (policy.deniedNamespaces.includes(ns)) return reject('NamespaceDenied', `target namespace ${show(ns)} is in imports.deniedNamespaces`);
  }
  if (policy.allowedNamespaces.length > 0) {
    const outside = namespaces.find((ns) => !policy.allowedNamespaces.includes(ns));
    if (outside !== undefined) return reject('NamespaceNotAllowed', `target namespace ${show(outside)} is not in imports.allowedNamespaces`);
  }
  const missing = namespaces.find((ns) => !input.namespaceExists(ns));
  if (missing !== undefined) return reject('NamespaceNotFound', `target namespace ${show(missing)} does not exist (the agent never creates namespaces)`);
  const terminating = input.namespaceTerminating === undefined ? undefined : namespaces.find(input.namespaceTerminating);
  if (terminating !== undefined) return namespaceTerminating(ri, terminating);

  for (const obj of objects) {
    const bytes = Buffer.byteLength(JSON.stringify(obj.body));
    if (bytes > policy.maxObjectBytes) {
      return reject('ObjectTooLarge', `${obj.kind} ${show(obj.name)} would be ${bytes} bytes, above imports.maxObjectBytes (${policy.maxObjectBytes})`);
    }
  }

  const payload = payloadProblem(ri);
  if (payload !== undefined) return reject('InvalidPayload', payload);

  for (const { path, value, cidr } of addressesOf(ri)) {
    const problem = cidr ? cidrProblem(value) : addressProblem(value);
    if (problem !== undefined) return reject('AddressRejected', `${path} ${show(value)} ${problem}`);
  }

  if (input.ownedCount !== undefined && input.ownedCount + objects.length > policy.maxObjectsPerLeader) {
    return reject('TooManyObjects',
      `${objects.length} more object(s) on top of the ${input.ownedCount} this leader already has would exceed imports.maxObjectsPerLeader (${policy.maxObjectsPerLeader})`);
  }
  return undefined;
}
