/** Minimal SQL surface shared by the PGlite and PostgreSQL drivers. */
export interface SqlExecutor {
  query<Row = Record<string, unknown>>(text: string, params?: unknown[]): Promise<QueryResult<Row>>;
  /** Runs several statements separated by semicolons, without parameters (migrations). */
  exec(text: string): Promise<void>;
}

export interface QueryResult<Row> {
  rows: Row[];
  /** Rows inserted, updated or deleted (or returned, for SELECT). */
  rowCount: number;
}

export interface Sql extends SqlExecutor {
  readonly kind: "pglite" | "postgres";
  /** Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The PostgreSQL type OID of bigint, whose text form we parse ourselves so both drivers agree. */
export const INT8_OID = 20;
