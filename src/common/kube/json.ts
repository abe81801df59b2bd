// The one test for "a JSON object" used wherever wire JSON is inspected (API answers, error
// bodies, ResourceImport payloads).

export type Json = Record<string, unknown>;

/** A JSON object: not null, not an array. */
export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
