// The two API calls that put Events on the API server. Behind an interface so the sender can be
// tested without an API server.
import { CoreV1Api, type CoreV1Event, type KubeConfig } from '@kubernetes/client-node';
import { apiClient } from '../kube/shared-connections.js';

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

export function kubeSink(kc: KubeConfig): EventSink {
  const core = apiClient(kc, CoreV1Api);
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
