/**
 * The Kubernetes envelope every kind of both API groups shares: object and list shapes, the
 * two condition shapes (Antrea's and metav1's), the resource descriptor REST paths are built
 * from, and the core/v1 types carried verbatim in payloads.
 *
 * Beware: `metadata` has the shape of client-node's V1ObjectMeta so that the kinds satisfy
 * client-node's `KubernetesObject` (informers, Watch), but objects fetched as plain JSON carry
 * `metadata.creationTimestamp`/`deletionTimestamp` as strings despite the `Date` type.
 */
import type {
  CoreV1EndpointPort,
  KubernetesListObject,
  V1EndpointAddress,
  V1EndpointSubset,
  V1ObjectMeta,
  V1ObjectReference,
  V1ServicePort,
} from '@kubernetes/client-node';

/** Identifies a served resource: enough to build REST paths and `apiVersion`/`kind`. */
export interface ResourceDescriptor {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  /** `<group>/<version>` */
  readonly apiVersion: string;
  readonly namespaced: boolean;
}

// ---------------------------------------------------------------------------------------
// Object envelope
// ---------------------------------------------------------------------------------------

/**
 * client-node's ObjectMeta as a plain object type (same fields, but not the class, so object
 * literals are fine). See the note on timestamps at the top of this file.
 */
export type ObjectMeta = Pick<V1ObjectMeta, keyof V1ObjectMeta>;

/** `{apiVersion?, kind?, metadata?}`; assignable to client-node's `KubernetesObject`. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** A list response (`<Kind>List`): `{apiVersion?, kind?, metadata?: {resourceVersion, continue}, items}`. */
export type KubeList<T extends KubeObject> = KubernetesListObject<T>;

// ---------------------------------------------------------------------------------------
// Conditions
// ---------------------------------------------------------------------------------------

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export function isConditionStatus(value: unknown): value is ConditionStatus {
  return value === 'True' || value === 'False' || value === 'Unknown';
}

/**
 * Antrea-style condition (ClusterSetCondition, ClusterCondition, ResourceCondition,
 * ResourceImportCondition, ResourceExportCondition): every field omitempty on the wire.
 */
export interface Condition<T extends string = string> {
  type?: T;
  status?: ConditionStatus;
  /** RFC 3339. */
  lastTransitionTime?: string;
  message?: string;
  reason?: string;
}

/** metav1.Condition (used by ServiceExport): all but observedGeneration are required. */
export interface MetaCondition {
  type: string;
  status: ConditionStatus;
  /** RFC 3339. */
  lastTransitionTime: string;
  /** May be empty. */
  message: string;
  /** CamelCase, non-empty. */
  reason: string;
  observedGeneration?: number;
}

// ---------------------------------------------------------------------------------------
// core/v1 types used verbatim in payloads
// ---------------------------------------------------------------------------------------

/** core/v1 types used verbatim in RI/RE payloads. */
export type EndpointSubset = V1EndpointSubset;
export type EndpointAddress = V1EndpointAddress;
export type EndpointPort = CoreV1EndpointPort;
export type ObjectReference = V1ObjectReference;
/** core/v1 ServicePort (`targetPort` is int-or-string). */
export type CoreServicePort = V1ServicePort;
