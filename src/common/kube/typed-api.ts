/**
 * The calls of client-node's generated APIs (CoreV1Api, CustomObjectsApi, ...) that the agents
 * and the CLI make, with the same names, parameters and answer types, sent by the plain-JSON
 * client (json-client.ts).
 *
 * Why not client-node's own classes: one bundle serves every command, and their generated code
 * (each API's request factories, response processors, Observable, ObjectParam and Promise
 * layers) was 2 MiB of its 5.4 MiB. V8 keeps a loaded script's whole source for the life of the
 * process (it compiles functions lazily from it), so that was resident in every agent although
 * each used a few dozen of its thousands of functions. The answers also change: they are plain
 * JSON, as the API server sent them, not model classes. A date-time field is therefore a string
 * despite its `Date` type (times.ts' parseTimestamp reads both), and a list's continue token is
 * `metadata.continue` (paginate.ts reads both spellings).
 *
 * Each answer must be of the kind asked for (the list's kind for a list; a DELETE's object or a
 * Status), or the call fails with an UnexpectedResponseError naming the request: a proxy or a
 * wrong server answering with some other object is a failure, never a success. A custom
 * object's kind is checked by its caller, who knows it; a custom list must have its items.
 */
import type {
  AdmissionregistrationV1Api, KubeConfig, AppsV1Api, AuthorizationV1Api, CoreV1Api, CustomObjectsApi, DiscoveryV1Api,
  NetworkingV1Api, RbacAuthorizationV1Api, VersionApi,
} from '@kubernetes/client-node';
import { isRecord, type Json } from './json.js';
import { createJsonClient, type JsonClient, type Method } from './json-client.js';
import type { Query } from './rest-client.js';

export type CoreApi = Pick<CoreV1Api,
  | 'readNamespace' | 'listNamespace'
  | 'createNamespacedConfigMap' | 'readNamespacedConfigMap' | 'replaceNamespacedConfigMap'
  | 'createNamespacedEvent' | 'patchNamespacedEvent' | 'listNamespacedEvent'
  | 'createNamespacedSecret' | 'readNamespacedSecret' | 'replaceNamespacedSecret' | 'deleteNamespacedSecret' | 'listNamespacedSecret'
  | 'createNamespacedServiceAccount' | 'readNamespacedServiceAccount' | 'deleteNamespacedServiceAccount' | 'listNamespacedServiceAccount'
  | 'createNamespacedServiceAccountToken'
  | 'listNamespacedPod' | 'listPodForAllNamespaces' | 'listServiceForAllNamespaces'>;
export type CustomApi = Pick<CustomObjectsApi,
  | 'createNamespacedCustomObject' | 'getNamespacedCustomObject' | 'replaceNamespacedCustomObject' | 'replaceNamespacedCustomObjectStatus'
  | 'patchNamespacedCustomObject' | 'deleteNamespacedCustomObject' | 'listNamespacedCustomObject' | 'listClusterCustomObject'>;
export type DiscoveryApi = Pick<DiscoveryV1Api, 'listEndpointSliceForAllNamespaces'>;
export type NetworkingApi = Pick<NetworkingV1Api, 'readServiceCIDR'>;
export type RbacApi = Pick<RbacAuthorizationV1Api,
  | 'createClusterRole' | 'readClusterRole' | 'deleteClusterRole'
  | 'createClusterRoleBinding' | 'readClusterRoleBinding' | 'deleteClusterRoleBinding'
  | 'createNamespacedRole' | 'readNamespacedRole' | 'replaceNamespacedRole'
  | 'createNamespacedRoleBinding' | 'readNamespacedRoleBinding' | 'replaceNamespacedRoleBinding' | 'deleteNamespacedRoleBinding'>;
export type AppsApi = Pick<AppsV1Api, 'readNamespacedDeployment'>;
export type AdmissionApi = Pick<AdmissionregistrationV1Api, 'listValidatingAdmissionPolicy' | 'readValidatingAdmissionPolicyBinding'>;
export type AuthorizationApi = Pick<AuthorizationV1Api, 'createSubjectAccessReview'>;
export type VersionInfoApi = Pick<VersionApi, 'getCode'>;

/** Every group, over one client. */
export interface KubeApis {
  readonly core: CoreApi;
  readonly custom: CustomApi;
  readonly discovery: DiscoveryApi;
  readonly networking: NetworkingApi;
  readonly rbac: RbacApi;
  readonly apps: AppsApi;
  readonly admission: AdmissionApi;
  readonly authorization: AuthorizationApi;
  readonly version: VersionInfoApi;
}

/** A generated API's parameter object: path parts, a body, and the rest is the query. */
type Params = Readonly<Record<string, unknown>>;
type Call = (params?: Params) => Promise<unknown>;

/** Parameters that are parts of the path or the body, never the query. */
const NOT_QUERY = new Set(['name', 'namespace', 'body', 'group', 'version', 'plural']);

/** The query of a generated API's parameters: `_continue` is the API server's `continue`. */
export function queryOf(params: Params): Query {
  const query: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(params)) {
    if (NOT_QUERY.has(key) || value === undefined) continue;
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') continue;
    query[key === '_continue' ? 'continue' : key] = value;
  }
  return query;
}

const segment = (value: unknown, what: string): string => {
  if (typeof value !== 'string' || value === '') throw new TypeError(`a request needs a ${what}`);
  return encodeURIComponent(value);
};

/** Where a resource's objects live: `base` is `/api/v1` or `/apis/<group>/<version>`. */
interface Resource {
  readonly base: string;
  readonly plural: string;
  /** Undefined for custom objects, whose callers know and check their kinds (lists: their items only). */
  readonly kind: string | undefined;
  readonly namespaced: boolean;
}

function collectionPath(resource: Resource, params: Params, allNamespaces = false): string {
  const namespace = resource.namespaced && !allNamespaces ? `/namespaces/${segment(params['namespace'], 'namespace')}` : '';
  return `${resource.base}${namespace}/${resource.plural}`;
}

function objectPath(resource: Resource, params: Params, sub = ''): string {
  return `${collectionPath(resource, params)}/${segment(params['name'], 'name')}${sub}`;
}

/** An answer of `kinds`, or what it is instead. */
function ofKind(...kinds: string[]): (answer: Json) => string | undefined {
  return (answer) => (kinds.includes(answer['kind'] as string) ? undefined : `expected kind ${kinds.join(' or ')}, got ${JSON.stringify(answer['kind'] ?? null)}`);
}

/**
 * What is wrong with a list answer whose items' kind the caller does not check (custom objects,
 * the leader's informers): a kind ending in List when present (a Status or a single object that
 * happens to carry an items field is not a list), an items array of objects, `metadata` an
 * object when present. Undefined when nothing is.
 */
export function listProblem(answer: Json): string | undefined {
  const { kind, items, metadata } = answer;
  if (!Array.isArray(items)) return 'expected a list with items (no items array)';
  if (!items.every(isRecord)) return 'expected every list item to be an object';
  if (kind !== undefined && (typeof kind !== 'string' || !kind.endsWith('List'))) return `expected a list kind, got ${JSON.stringify(kind).slice(0, 64)}`;
  if (metadata !== undefined && !isRecord(metadata)) return 'expected list metadata to be an object';
  return undefined;
}

/**
 * Sends `method` to the path `pathOf` gives (a missing name or namespace rejects, before any
 * request); an answer `expect` finds wrong fails, with its status and a snippet (json-client.ts).
 */
async function send(client: JsonClient, method: Method, pathOf: () => string, params: Params, expect: ((answer: Json) => string | undefined) | undefined): Promise<Json> {
  const body = params['body'];
  return client.request<Json>(method, pathOf(), { query: queryOf(params), ...(body !== undefined && { body }), ...(expect !== undefined && { expect }) });
}

/** The calls on one resource, named as client-node names them (`read` + `Namespaced` + `Secret`, ...). */
function calls(client: JsonClient, resource: Resource) {
  const { kind } = resource;
  const object = kind === undefined ? undefined : ofKind(kind);
  const list = kind === undefined ? listProblem : ofKind(`${kind}List`);
  return {
    read: (params: Params = {}) => send(client, 'GET', () => objectPath(resource, params), params, object),
    list: (params: Params = {}) => send(client, 'GET', () => collectionPath(resource, params), params, list),
    listAll: (params: Params = {}) => send(client, 'GET', () => collectionPath(resource, params, true), params, list),
    create: (params: Params = {}) => send(client, 'POST', () => collectionPath(resource, params), params, object),
    replace: (params: Params = {}) => send(client, 'PUT', () => objectPath(resource, params), params, object),
    replaceStatus: (params: Params = {}) => send(client, 'PUT', () => objectPath(resource, params, '/status'), params, object),
    patch: (params: Params = {}) => send(client, 'PATCH', () => objectPath(resource, params), params, object),
    // The deleted object, or a Status: both are what a DELETE answers.
    delete: (params: Params = {}) => send(client, 'DELETE', () => objectPath(resource, params), params, kind === undefined ? undefined : ofKind(kind, 'Status')),
  };
}

const core = (plural: string, kind: string, namespaced = true): Resource => ({ base: '/api/v1', plural, kind, namespaced });
const group = (groupVersion: string, plural: string, kind: string | undefined, namespaced = true): Resource =>
  ({ base: `/apis/${groupVersion}`, plural, kind, namespaced });

/** The generated APIs' methods, typed as client-node types them (the answers are plain JSON). */
function typed<T>(methods: Record<keyof T, Call>): T {
  return methods as unknown as T;
}

export function coreApi(client: JsonClient): CoreApi {
  const namespaces = calls(client, core('namespaces', 'Namespace', false));
  const configMaps = calls(client, core('configmaps', 'ConfigMap'));
  const events = calls(client, core('events', 'Event'));
  const secrets = calls(client, core('secrets', 'Secret'));
  const serviceAccount = core('serviceaccounts', 'ServiceAccount');
  const serviceAccounts = calls(client, serviceAccount);
  const pods = calls(client, core('pods', 'Pod'));
  const services = calls(client, core('services', 'Service'));
  return typed<CoreApi>({
    readNamespace: namespaces.read, listNamespace: namespaces.list,
    createNamespacedConfigMap: configMaps.create, readNamespacedConfigMap: configMaps.read, replaceNamespacedConfigMap: configMaps.replace,
    createNamespacedEvent: events.create, patchNamespacedEvent: events.patch, listNamespacedEvent: events.list,
    createNamespacedSecret: secrets.create, readNamespacedSecret: secrets.read, replaceNamespacedSecret: secrets.replace,
    deleteNamespacedSecret: secrets.delete, listNamespacedSecret: secrets.list,
    createNamespacedServiceAccount: serviceAccounts.create, readNamespacedServiceAccount: serviceAccounts.read,
    deleteNamespacedServiceAccount: serviceAccounts.delete, listNamespacedServiceAccount: serviceAccounts.list,
    createNamespacedServiceAccountToken: (params: Params = {}) =>
      send(client, 'POST', () => objectPath(serviceAccount, params, '/token'), params, ofKind('TokenRequest')),
    listNamespacedPod: pods.list, listPodForAllNamespaces: pods.listAll, listServiceForAllNamespaces: services.listAll,
  });
}

/** Custom objects: their kinds vary, so their callers check them (as with client-node's). */
export function customApi(client: JsonClient): CustomApi {
  // The resource is in the parameters (group, version, plural): a missing part rejects the call
  // (each call is async, so it rejects rather than throws).
  const of = (params: Params, namespaced = true) =>
    calls(client, group(`${segment(params['group'], 'group')}/${segment(params['version'], 'version')}`, segment(params['plural'], 'plural'), undefined, namespaced));
  return typed<CustomApi>({
    createNamespacedCustomObject: async (params: Params = {}) => of(params).create(params),
    getNamespacedCustomObject: async (params: Params = {}) => of(params).read(params),
    replaceNamespacedCustomObject: async (params: Params = {}) => of(params).replace(params),
    replaceNamespacedCustomObjectStatus: async (params: Params = {}) => of(params).replaceStatus(params),
    patchNamespacedCustomObject: async (params: Params = {}) => of(params).patch(params),
    deleteNamespacedCustomObject: async (params: Params = {}) => of(params).delete(params),
    listNamespacedCustomObject: async (params: Params = {}) => of(params).list(params),
    listClusterCustomObject: async (params: Params = {}) => of(params, false).list(params),
  });
}

export function discoveryApi(client: JsonClient): DiscoveryApi {
  return typed<DiscoveryApi>({ listEndpointSliceForAllNamespaces: calls(client, group('discovery.k8s.io/v1', 'endpointslices', 'EndpointSlice')).listAll });
}

export function networkingApi(client: JsonClient): NetworkingApi {
  return typed<NetworkingApi>({ readServiceCIDR: calls(client, group('networking.k8s.io/v1', 'servicecidrs', 'ServiceCIDR', false)).read });
}

export function rbacApi(client: JsonClient): RbacApi {
  const rbac = 'rbac.authorization.k8s.io/v1';
  const clusterRoles = calls(client, group(rbac, 'clusterroles', 'ClusterRole', false));
  const clusterRoleBindings = calls(client, group(rbac, 'clusterrolebindings', 'ClusterRoleBinding', false));
  const roles = calls(client, group(rbac, 'roles', 'Role'));
  const roleBindings = calls(client, group(rbac, 'rolebindings', 'RoleBinding'));
  return typed<RbacApi>({
    createClusterRole: clusterRoles.create, readClusterRole: clusterRoles.read, deleteClusterRole: clusterRoles.delete,
    createClusterRoleBinding: clusterRoleBindings.create, readClusterRoleBinding: clusterRoleBindings.read, deleteClusterRoleBinding: clusterRoleBindings.delete,
    createNamespacedRole: roles.create, readNamespacedRole: roles.read, replaceNamespacedRole: roles.replace,
    createNamespacedRoleBinding: roleBindings.create, readNamespacedRoleBinding: roleBindings.read,
    replaceNamespacedRoleBinding: roleBindings.replace, deleteNamespacedRoleBinding: roleBindings.delete,
  });
}

export function appsApi(client: JsonClient): AppsApi {
  return typed<AppsApi>({ readNamespacedDeployment: calls(client, group('apps/v1', 'deployments', 'Deployment')).read });
}

export function admissionApi(client: JsonClient): AdmissionApi {
  const admission = 'admissionregistration.k8s.io/v1';
  return typed<AdmissionApi>({
    listValidatingAdmissionPolicy: calls(client, group(admission, 'validatingadmissionpolicies', 'ValidatingAdmissionPolicy', false)).list,
    readValidatingAdmissionPolicyBinding: calls(client, group(admission, 'validatingadmissionpolicybindings', 'ValidatingAdmissionPolicyBinding', false)).read,
  });
}

export function authorizationApi(client: JsonClient): AuthorizationApi {
  return typed<AuthorizationApi>({
    createSubjectAccessReview: calls(client, group('authorization.k8s.io/v1', 'subjectaccessreviews', 'SubjectAccessReview', false)).create,
  });
}

/** GET /version: a kind-less object, which must at least say its version. */
export function versionApi(client: JsonClient): VersionInfoApi {
  const expect = (answer: Json) => (typeof answer['gitVersion'] === 'string' ? undefined : 'expected version information (gitVersion)');
  return typed<VersionInfoApi>({ getCode: () => client.request<Json>('GET', '/version', { expect }) });
}

/** Every group's calls over `client`. */
export function kubeApis(client: JsonClient): KubeApis {
  return {
    core: coreApi(client), custom: customApi(client), discovery: discoveryApi(client),
    networking: networkingApi(client), rbac: rbacApi(client), apps: appsApi(client), admission: admissionApi(client),
    authorization: authorizationApi(client), version: versionApi(client),
  };
}

/** Every group's calls to `kc`'s cluster, for `who` (json-client.ts: first in its errors). */
export function apisOf(kc: KubeConfig, who: string): KubeApis {
  return kubeApis(createJsonClient(kc, { who }));
}
