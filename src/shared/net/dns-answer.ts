/** An address a name resolved to. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Who asks for a name: its realm, or none for the service's own and the operator's configured names. */
export interface DnsCaller {
  realm?: string;
}

/** Hostname → addresses; errors carry a `code` (ENOTFOUND, ETIMEOUT, EBUSY, …). */
export type Resolver = (hostname: string, caller?: DnsCaller) => Promise<ResolvedAddress[]>;
