// The two API calls that put Events on the API server. Behind an interface so the sender can be
// tested without an API server.
import type { CoreV1Event, KubeConfig } from '@kubernetes/client-node';
import { apisOf } from '../kube/typed-api.js';

/** What a PATCH of an existing Event sets (client-go's patch carries the same three fields). */
export interface EventUpdate {
  readonly count: number;
  readonly lastTimestamp: Date;
  readonly message: string;
}

/** The two API calls the recorder makes; injectable so tests need no API server. */
export interface EventSink {
  create(namespace: string, body: CoreV1Event): Promise<unknown>;
  patch(namespace: string, name: string, update: EventUpdate): Promise<unknown>;
}

export function kubeSink(kc: KubeConfig, who: string): EventSink {
  const { core } = apisOf(kc, who);
  return {
    create: (namespace, body) => core.createNamespacedEvent({ namespace, body }),
    patch: (namespace, name, update) => core.patchNamespacedEvent({
      namespace, name,
      body: [
        { op: 'replace', path: '/count', value: update.count },
        { op: 'replace', path: '/lastTimestamp', value: update.lastTimestamp.toISOString() },
        { op: 'replace', path: '/message', value: update.message },
      ],
    }),
  };
}
