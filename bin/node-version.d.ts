/** The oldest Node.js the CLI runs on: the newest floor among its dependencies' `engines`. */
export declare const MINIMUM_NODE: string;
/** Why `version` (as in `process.versions.node`) cannot run the CLI, in one line; undefined when it can. */
export declare function nodeVersionProblem(version: string): string | undefined;
