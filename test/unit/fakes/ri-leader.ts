// An in-memory leader's ResourceImports, listed and watched as the importer's informer consumes
// them (client-node's ListWatch over `listResourceImports` and `watch`): each put or remove
// bumps the resourceVersion and is sent to every open watch. With the ResourceImports the
// importer tests build, shared by the one-leader and the several-leaders importer tests.
import type { ResourceImport, ResourceImportList } from '../../../src/common/api/antrea.js';
import type { LeaderApi } from '../../../src/commonarea/leader-api.js';

export const LEADER_NS = 'leader-ns';

export function resourceImport(name: string, spec: NonNullable<ResourceImport['spec']>): ResourceImport {
  return { apiVersion: 'multicluster.crd.antrea.io/v1alpha1', kind: 'ResourceImport', metadata: { name, namespace: LEADER_NS }, spec };
}

/** The ServiceImport import of Service `ns/name`, one TCP port `http`. */
export function svcRI(ns: string, name: string, port = 80): ResourceImport {
  return resourceImport(`${ns}-${name}-service`, {
    name, namespace: ns, kind: 'ServiceImport',
    serviceImport: { spec: { type: 'ClusterSetIP', ports: [{ name: 'http', port, protocol: 'TCP' }] } },
  });
}

/** The Endpoints import of Service `ns/name`: one address on port `http` 80. */
export function epsRI(ns: string, name: string, ip = '10.1.0.1'): ResourceImport {
  return resourceImport(`${ns}-${name}-endpoints`, {
    name, namespace: ns, kind: 'Endpoints',
    endpoints: { subsets: [{ addresses: [{ ip }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }] },
  });
}

interface OpenWatch {
  readonly callback: (phase: string, obj: unknown) => void;
  readonly controller: AbortController;
}

export class RILeader {
  readonly server = 'https://leader.example:6443';
  readonly namespace = LEADER_NS;
  readonly resourceImportsPath = `/apis/multicluster.crd.antrea.io/v1alpha1/namespaces/${LEADER_NS}/resourceimports`;
  readonly items = new Map<string, ResourceImport>();
  listCalls = 0;
  #rv = 1;
  #watches: OpenWatch[] = [];
  #listHold: Promise<unknown> | undefined;

  readonly watch = {
    watch: (_path: string, _query: Record<string, unknown>, callback: (phase: string, obj: unknown) => void, done: (err: unknown) => void): Promise<AbortController> => {
      const controller = new AbortController();
      const entry = { callback, controller };
      controller.signal.addEventListener('abort', () => {
        this.#watches = this.#watches.filter((w) => w !== entry);
        done(new DOMException('This operation was aborted', 'AbortError'));
      });
      this.#watches.push(entry);
      return Promise.resolve(controller);
    },
  };

  /** The LeaderApi the importer gets: always the same object. */
  api(): LeaderApi {
    return this as unknown as LeaderApi;
  }

  get openWatches(): number {
    return this.#watches.length;
  }

  /** The next list waits until the returned function is called. */
  holdList(): () => void {
    const { promise, resolve } = Promise.withResolvers<undefined>();
    this.#listHold = promise;
    return () => { resolve(undefined); };
  }

  async listResourceImports(): Promise<ResourceImportList> {
    this.listCalls += 1;
    const hold = this.#listHold;
    this.#listHold = undefined;
    if (hold) await hold;
    return { apiVersion: 'multicluster.crd.antrea.io/v1alpha1', kind: 'ResourceImportList', metadata: { resourceVersion: String(this.#rv) }, items: [...this.items.values()].map((i) => structuredClone(i)) };
  }

  #emit(phase: string, obj: ResourceImport): void {
    for (const w of [...this.#watches]) w.callback(phase, structuredClone(obj));
  }

  put(...ris: ResourceImport[]): void {
    for (const r of ris) {
      this.#rv += 1;
      const name = r.metadata?.name ?? '';
      const stored = { ...structuredClone(r), metadata: { ...r.metadata, resourceVersion: String(this.#rv) } };
      const existed = this.items.has(name);
      this.items.set(name, stored);
      this.#emit(existed ? 'MODIFIED' : 'ADDED', stored);
    }
  }

  remove(...names: string[]): void {
    for (const name of names) {
      const found = this.items.get(name);
      if (!found) continue;
      this.#rv += 1;
      this.items.delete(name);
      this.#emit('DELETED', { ...found, metadata: { ...found.metadata, resourceVersion: String(this.#rv) } });
    }
  }
}
