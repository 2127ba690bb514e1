export { type OpenVectorIndexOptions, openVectorIndex } from "./open.ts";
export { PostgresVectorIndex } from "./postgres.ts";
export { MAX_DIMENSIONS } from "./scan.ts";
export { SqliteVectorIndex } from "./sqlite.ts";
export type { VectorEntry, VectorHit, VectorIndex, VectorInput, VectorQueryOptions } from "./types.ts";
