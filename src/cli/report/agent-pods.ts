// Why the chart's agent (or `leader run`) Pod is not running, in one line, read as `kubectl
// describe pod` would show it: a container waiting to pull its image or crash-looping, or a Pod
// the scheduler could not place. `status` lists these among what needs attention, and `join`
// shows them while it waits for Ready, instead of a bare "is the agent running?". Only what
// the Pod itself says is wrong is reported: no Pods at all is normal where nothing runs them.
import type { KubeConfig, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { apisOf } from '../../common/kube/typed-api.js';
import { httpStatus } from '../../common/kube/errors.js';

/** The chart's labels (templates/_helpers.tpl); `leader run`'s Pods add component=leader. */
export const AGENT_POD_SELECTOR = 'app.kubernetes.io/name=clusterset-agent,app.kubernetes.io/component!=leader';
export const LEADER_POD_SELECTOR = 'app.kubernetes.io/name=clusterset-agent,app.kubernetes.io/component=leader';

const IMAGE_REASONS = new Set(['ImagePullBackOff', 'ErrImagePull', 'ErrImageNeverPull', 'InvalidImageName', 'RegistryUnavailable']);
const START_REASONS = new Set(['CrashLoopBackOff', 'CreateContainerConfigError', 'CreateContainerError', 'RunContainerError']);

function containerProblem(namespace: string, podName: string, c: V1ContainerStatus): string | undefined {
  const pod = `${namespace}/${podName}`;
  const waiting = c.state?.waiting;
  const reason = waiting?.reason ?? '';
  const message = waiting?.message ? `: ${waiting.message}` : '';
  if (IMAGE_REASONS.has(reason)) {
    return `Pod ${pod}: container ${c.name} cannot pull image ${c.image} (${reason})${message}. ` +
      'Push the image where this cluster pulls from and set image.repository and image.tag (docs/install.md, "The image")';
  }
  if (START_REASONS.has(reason)) {
    const last = c.lastState?.terminated;
    const exited = last === undefined ? '' : `; last exit ${String(last.exitCode)}${last.reason ? ` (${last.reason})` : ''}`;
    return `Pod ${pod}: container ${c.name} is not running (${reason}, ${String(c.restartCount)} restart(s)${exited})${message}. ` +
      `Its log says why: kubectl logs -n ${namespace} ${podName} -c ${c.name} --previous`;
  }
  return undefined;
}

/** Why this Pod's agent is not running, in one line; undefined when nothing says it is wrong. */
export function agentPodProblem(pod: V1Pod): string | undefined {
  if (pod.metadata?.deletionTimestamp !== undefined) return undefined;
  const namespace = pod.metadata?.namespace ?? '';
  const name = `${namespace}/${pod.metadata?.name ?? ''}`;
  for (const c of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    const problem = containerProblem(namespace, pod.metadata?.name ?? '', c);
    if (problem !== undefined) return problem;
  }
  const phase = pod.status?.phase;
  if (phase === 'Pending') {
    const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
    if (scheduled?.status === 'False') {
      return `Pod ${name} is Pending, not scheduled (${scheduled.reason ?? 'Unschedulable'})${scheduled.message ? `: ${scheduled.message}` : ''}`;
    }
  }
  if (phase === 'Failed') return `Pod ${name} failed (${pod.status?.reason ?? 'Failed'})${pod.status?.message ? `: ${pod.status.message}` : ''}`;
  return undefined;
}

/**
 * Problems of the Pods matching `selector` in `namespace` (every namespace when undefined).
 * Not allowed to list Pods, or none: nothing to say (the caller still has its other signals).
 */
export async function readAgentPodProblems(kc: KubeConfig, selector: string, namespace: string | undefined): Promise<string[]> {
  const core = apisOf(kc, 'member').core;
  try {
    const pods = namespace === undefined
      ? await core.listPodForAllNamespaces({ labelSelector: selector })
      : await core.listNamespacedPod({ namespace, labelSelector: selector });
    return pods.items.map(agentPodProblem).filter((p): p is string => p !== undefined).sort();
  } catch (err) {
    if (httpStatus(err) === 403) return [];
    throw err;
  }
}
