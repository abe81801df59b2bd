// An in-memory leader namespace behind the LeaderApi interface: bumps resourceVersion on
// every write, answers 409 to a stale one, 404/409 AlreadyExists like the apiserver, and
// counts requests so tests can assert the cost of a beat.
import { ApiException, Watch } from '@kubernetes/client-node';
import type { MemberClusterAnnounce, ResourceImportList } from '../../../src/api/types.js';
import type { LeaderApi } from '../../../src/commonarea/leader-api.js';

export function apiError(code: number, reason: string, message: string, details?: Record<string, unknown>): ApiException<string> {
  return new ApiException(code, message, JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message, code, ...(details ? { details } : {}) }), {});
}

export class FakeLeader implements LeaderApi {
  readonly server = 'https://leader.example:6443';
  readonly namespace = 'leader-ns';
  readonly resourceImportsPath = '/apis/x';
  readonly watch = undefined as unknown as Watch;
  readonly announces = new Map<string, MemberClusterAnnounce>();
  readonly calls: string[] = [];
  private rv = 1;
  /** Set to make every call fail with this error. */
  failWith: Error | undefined;

  private check(call: string): void {
    this.calls.push(call);
    if (this.failWith !== undefined) throw this.failWith;
  }

  private store(obj: MemberClusterAnnounce): MemberClusterAnnounce {
    this.rv += 1;
    const stored = structuredClone({ ...obj, metadata: { ...obj.metadata, namespace: this.namespace, resourceVersion: String(this.rv) } });
    this.announces.set(stored.metadata.name ?? '', stored);
    return structuredClone(stored);
  }

  /** A write by someone else (e.g. the leader adding its finalizer). */
  touchAsLeader(name: string, finalizer: string): void {
    const current = this.announces.get(name);
    if (!current) throw new Error(`no announce ${name}`);
    this.store({ ...current, metadata: { ...current.metadata, finalizers: [...(current.metadata?.finalizers ?? []), finalizer] } });
  }

  getAnnounce(name: string): Promise<MemberClusterAnnounce> {
    this.check(`get ${name}`);
    const found = this.announces.get(name);
    if (!found) return Promise.reject(apiError(404, 'NotFound', `memberclusterannounces "${name}" not found`, { name, kind: 'memberclusterannounces' }));
    return Promise.resolve(structuredClone(found));
  }

  createAnnounce(body: MemberClusterAnnounce): Promise<MemberClusterAnnounce> {
    const name = body.metadata?.name ?? '';
    this.check(`create ${name}`);
    if (this.announces.has(name)) return Promise.reject(apiError(409, 'AlreadyExists', `memberclusterannounces "${name}" already exists`));
    return Promise.resolve(this.store(body));
  }

  replaceAnnounce(body: MemberClusterAnnounce): Promise<MemberClusterAnnounce> {
    const name = body.metadata?.name ?? '';
    this.check(`update ${name}`);
    const current = this.announces.get(name);
    if (!current) return Promise.reject(apiError(404, 'NotFound', `memberclusterannounces "${name}" not found`, { name, kind: 'memberclusterannounces' }));
    if (current.metadata?.resourceVersion !== body.metadata?.resourceVersion) {
      return Promise.reject(apiError(409, 'Conflict', 'the object has been modified; please apply your changes to the latest version and try again'));
    }
    return Promise.resolve(this.store(body));
  }

  deleteAnnounce(name: string): Promise<void> {
    this.check(`delete ${name}`);
    if (!this.announces.delete(name)) return Promise.reject(apiError(404, 'NotFound', `memberclusterannounces "${name}" not found`));
    return Promise.resolve();
  }

  listResourceImports(): Promise<ResourceImportList> {
    this.check('list resourceimports');
    return Promise.resolve({ apiVersion: 'multicluster.crd.antrea.io/v1alpha1', kind: 'ResourceImportList', metadata: { resourceVersion: String(this.rv) }, items: [] });
  }
}
