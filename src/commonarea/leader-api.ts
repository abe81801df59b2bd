// Every call the agent makes to a leader, scoped to the leader namespace (the member's
// Role grants nothing else). An interface, so the heartbeat and the importer can be unit
// tested with an in-memory fake; the real one is built from the leader credentials.
import {
  CustomObjectsApi, KubeConfig, Observable, type ObservableMiddleware, type RequestContext, type ResponseContext, Watch,
} from '@kubernetes/client-node';
import { MEMBER_CLUSTER_ANNOUNCE, RESOURCE_IMPORT, type MemberClusterAnnounce, type ResourceImport, type ResourceImportList } from '../api/types.js';
import type { LeaderCredentials } from './credentials.js';

export interface LeaderApi {
  readonly server: string;
  readonly namespace: string;
  getAnnounce(name: string): Promise<MemberClusterAnnounce>;
  createAnnounce(body: MemberClusterAnnounce): Promise<MemberClusterAnnounce>;
  replaceAnnounce(body: MemberClusterAnnounce): Promise<MemberClusterAnnounce>;
  deleteAnnounce(name: string): Promise<void>;
  listResourceImports(): Promise<ResourceImportList>;
  /** For informers: the collection path and a Watch bound to the same credentials. */
  readonly resourceImportsPath: string;
  readonly watch: Watch;
}

/** Aborts a request that has not answered within `ms`: a hung leader must fail a beat, not stall it. */
function timeoutMiddleware(ms: number): ObservableMiddleware {
  return {
    pre: (ctx: RequestContext) => {
      ctx.setSignal(AbortSignal.timeout(ms));
      return new Observable(Promise.resolve(ctx));
    },
    post: (res: ResponseContext) => new Observable(Promise.resolve(res)),
  };
}

let clientSerial = 0;
const LIST_TIMEOUT_MS = 120_000;

export function leaderKubeConfig(credentials: LeaderCredentials): KubeConfig {
  // client-node caches credentials by user name: a unique name per client keeps two leaders
  // (or a rotated token) from ever sharing an entry.
  clientSerial += 1;
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser(
    { name: 'leader', server: credentials.server, caData: Buffer.from(credentials.caPem).toString('base64'), skipTLSVerify: false },
    { name: `leader-${String(clientSerial)}`, token: credentials.token },
  );
  return kc;
}

export function createLeaderApi(credentials: LeaderCredentials, namespace: string, requestTimeoutMs: number): LeaderApi {
  const kc = leaderKubeConfig(credentials);
  const api = kc.makeApiClient(CustomObjectsApi);
  const options = { middleware: [timeoutMiddleware(requestTimeoutMs)], middlewareMergeStrategy: 'append' as const };
  // A full list of thousands of ResourceImports legitimately takes longer than a heartbeat.
  const listOptions = { middleware: [timeoutMiddleware(Math.max(requestTimeoutMs, LIST_TIMEOUT_MS))], middlewareMergeStrategy: 'append' as const };
  const mca = { group: MEMBER_CLUSTER_ANNOUNCE.group, version: MEMBER_CLUSTER_ANNOUNCE.version, plural: MEMBER_CLUSTER_ANNOUNCE.plural, namespace };
  const ri = { group: RESOURCE_IMPORT.group, version: RESOURCE_IMPORT.version, plural: RESOURCE_IMPORT.plural, namespace };
  return {
    server: credentials.server,
    namespace,
    async getAnnounce(name) {
      return (await api.getNamespacedCustomObject({ ...mca, name }, options)) as MemberClusterAnnounce;
    },
    async createAnnounce(body) {
      return (await api.createNamespacedCustomObject({ ...mca, body }, options)) as MemberClusterAnnounce;
    },
    async replaceAnnounce(body) {
      return (await api.replaceNamespacedCustomObject({ ...mca, name: body.metadata?.name ?? '', body }, options)) as MemberClusterAnnounce;
    },
    async deleteAnnounce(name) {
      await api.deleteNamespacedCustomObject({ ...mca, name }, options);
    },
    async listResourceImports() {
      return (await api.listNamespacedCustomObject(ri, listOptions)) as ResourceImportList;
    },
    resourceImportsPath: `/apis/${RESOURCE_IMPORT.group}/${RESOURCE_IMPORT.version}/namespaces/${namespace}/${RESOURCE_IMPORT.plural}`,
    watch: new Watch(kc),
  };
}

export type { ResourceImport };
