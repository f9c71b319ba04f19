declare module '../../kernel/index.js' {
  interface LogEvents {
    'egress.started': { host: string; port: number; allowed: number };
    /** SPEC.md: the proxy refused a connection; host and port as asked, never a URL path or body. */
    'egress.refused': { host: string; port: number; reason: RefusalReason };
    'egress.allow_list_set': { allowed: number };
  }
}

/** Why a destination was refused. */
export type RefusalReason = 'bad_request' | 'not_allowed' | 'private_address' | 'dns_failed' | 'connect_failed';
