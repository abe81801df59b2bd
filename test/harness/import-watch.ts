// A watch on what a member imported, through the member's API as any client sees it: one real
// watch per kind (Services, Endpoints, EndpointSlices, ServiceImports of one namespace), each
// opened at the resourceVersion of its initial list, so no event between them is missed. It
// records every DELETED event, every write (ADDED, MODIFIED) per object, and after every event
// checks that each expected import is whole in that kind; a moment it is not is recorded.
import { CoreV1Api, CustomObjectsApi, DiscoveryV1Api, Watch } from '@kubernetes/client-node';
import type { ControlPlane } from './control-plane.js';

type Obj = { metadata?: { name?: string; resourceVersion?: string; labels?: Record<string, string> }; subsets?: { addresses?: unknown[] }[]; endpoints?: unknown[] };

interface Kind {
  readonly kind: 'Service' | 'Endpoints' | 'EndpointSlice' | 'ServiceImport';
  readonly path: string;
  list(): Promise<{ metadata?: { resourceVersion?: string }; items: Obj[] }>;
  /** Whether the objects of this kind hold import `name` whole. */
  holds(objects: ReadonlyMap<string, Obj>, name: string): boolean;
}

export interface ImportWatchEvent {
  readonly at: number;
  readonly kind: string;
  readonly type: string;
  readonly name: string;
  readonly resourceVersion: string;
}

export interface ImportWatch {
  /** From now on, `name` (an imported Service's name) must be whole at every event; throws if it is not now. */
  expect(name: string): void;
  /** Whether `name` is whole now, in every kind. */
  whole(name: string): boolean;
  /** The imported EndpointSlices (`antrea-mc-*`) in the watch's view, sorted. */
  slices(): string[];
  /** DELETED events seen so far. */
  readonly deletions: ImportWatchEvent[];
  /** Every event seen (writes and deletions) after `sinceMs`. */
  events(sinceMs?: number): ImportWatchEvent[];
  /** Moments, after an event, when an expected import was not whole: kind and what was missing. */
  readonly gaps: { at: number; kind: string; missing: string[]; after: ImportWatchEvent }[];
  /** Watches that ended (client-node ends one quiet for 30 s): each was reopened at its last resourceVersion. */
  readonly restarts: string[];
  /** ERROR events (e.g. resourceVersion too old): the view may have missed events, the test cannot trust it. */
  readonly errors: string[];
  stop(): void;
}

const slicesOf = (objects: ReadonlyMap<string, Obj>, name: string) =>
  [...objects.values()].filter((o) => o.metadata?.labels?.['kubernetes.io/service-name'] === `antrea-mc-${name}`);

function kinds(cp: ControlPlane, namespace: string): Kind[] {
  const kc = cp.adminConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  return [
    { kind: 'Service', path: `/api/v1/namespaces/${namespace}/services`, list: async () => (await core.listNamespacedService({ namespace })),
      holds: (objects, name) => objects.has(`antrea-mc-${name}`) },
    { kind: 'Endpoints', path: `/api/v1/namespaces/${namespace}/endpoints`, list: async () => (await core.listNamespacedEndpoints({ namespace })),
      holds: (objects, name) => (objects.get(`antrea-mc-${name}`)?.subsets ?? []).some((s) => (s.addresses ?? []).length > 0) },
    { kind: 'EndpointSlice', path: `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`,
      list: async () => (await kc.makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({ namespace })),
      holds: (objects, name) => slicesOf(objects, name).some((s) => (s.endpoints ?? []).length > 0) },
    { kind: 'ServiceImport', path: `/apis/multicluster.x-k8s.io/v1alpha1/namespaces/${namespace}/serviceimports`,
      list: async () => (await custom.listNamespacedCustomObject({ group: 'multicluster.x-k8s.io', version: 'v1alpha1', plural: 'serviceimports', namespace })) as never,
      holds: (objects, name) => objects.has(name) },
  ];
}

/** Lists then watches every kind; resolves once every watch is open. */
export async function watchImports(cp: ControlPlane, namespace: string): Promise<ImportWatch> {
  const expected = new Set<string>();
  const all: ImportWatchEvent[] = [];
  const deletions: ImportWatchEvent[] = [];
  const gaps: ImportWatch['gaps'] = [];
  const restarts: string[] = [];
  const errors: string[] = [];
  const states = new Map<string, Map<string, Obj>>();
  const aborts: AbortController[] = [];
  let stopped = false;
  const watch = new Watch(cp.adminConfig());

  const open = async (k: Kind, objects: Map<string, Obj>, resourceVersion: string): Promise<void> => {
    let last = resourceVersion;
    const abort = await watch.watch(k.path, { resourceVersion: last, allowWatchBookmarks: true }, (type: string, obj: Obj) => {
      last = obj.metadata?.resourceVersion ?? last;
      if (type === 'BOOKMARK') return;
      if (type === 'ERROR') {
        // E.g. 410 Gone: the watch could not go on from where it was, so events may be missing.
        errors.push(`${k.kind}: ${JSON.stringify(obj)}`);
        return;
      }
      const name = obj.metadata?.name ?? '';
      const event = { at: Date.now(), kind: k.kind, type, name, resourceVersion: last };
      all.push(event);
      if (type === 'DELETED') {
        objects.delete(name);
        deletions.push(event);
      } else if (type === 'ADDED' || type === 'MODIFIED') {
        objects.set(name, obj);
      }
      const missing = [...expected].filter((n) => !k.holds(objects, n));
      if (missing.length > 0) gaps.push({ at: event.at, kind: k.kind, missing, after: event });
    }, (err: unknown) => {
      if (stopped) return;
      // An ended watch (the API server's own timeout, or an error) is reopened where it stopped:
      // an event missed would be a gap unseen.
      restarts.push(`${k.kind}: ${err instanceof Error ? err.message : String(err)}`);
      void open(k, objects, last).catch((e: unknown) => { restarts.push(`${k.kind} reopen failed: ${String(e)}`); });
    });
    aborts.push(abort);
  };

  const listed = await Promise.all(kinds(cp, namespace).map(async (k) => {
    const list = await k.list();
    const objects = new Map(list.items.map((o) => [o.metadata?.name ?? '', o]));
    states.set(k.kind, objects);
    await open(k, objects, list.metadata?.resourceVersion ?? '');
    return k;
  }));
  const whole = (name: string) => listed.every((k) => k.holds(states.get(k.kind) ?? new Map(), name));
  return {
    expect(name) {
      if (!whole(name)) throw new Error(`${name} is not whole in the watch's view of ${cp.name}`);
      expected.add(name);
    },
    whole,
    slices: () => [...(states.get('EndpointSlice')?.keys() ?? [])].filter((n) => n.startsWith('antrea-mc-')).sort(),
    deletions,
    events: (sinceMs = 0) => all.filter((e) => e.at >= sinceMs),
    gaps,
    restarts,
    errors,
    stop() {
      stopped = true;
      for (const a of aborts) a.abort();
    },
  };
}
