import type { HermesDatabase } from "@hermes/schema";
import {
  type Compilable,
  DummyDriver,
  Kysely,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from "kysely";

const PARAM = Symbol("hermes.param");

/** A named parameter slot inside a query built once and executed many times. */
interface ParamMarker {
  readonly [PARAM]: string;
}

function isParam(value: unknown): value is ParamMarker {
  return typeof value === "object" && value !== null && PARAM in value;
}

/**
 * A placeholder for a value supplied at execution time. Typed as `T` so Kysely type-checks the
 * query as if a real value were there.
 *
 * @example
 * const q = compileQuery<{ id: string }>((db) =>
 *   db.selectFrom("sessions").selectAll().where("id", "=", param<string>("id")));
 */
export function param<T = never>(name: string): T {
  return { [PARAM]: name } as unknown as T;
}

/** A query compiled once: its SQL text and, for each `?`, a named argument or a constant. */
export interface CompiledTemplate<A> {
  readonly sql: string;
  readonly slots: ReadonlyArray<{ readonly name: string } | { readonly value: unknown }>;
  /** Phantom field carrying the argument type. */
  readonly __args?: A;
}

/**
 * A Kysely instance that only compiles (no driver): queries are typed against
 * `HermesDatabase`, compiled to SQL once at module load, and run by better-sqlite3 through
 * cached prepared statements, so hot paths pay for neither compilation nor `prepare()`.
 */
export const queryBuilder = new Kysely<HermesDatabase>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});

/** Compiles a Kysely query with {@link param} placeholders into a reusable template. */
export function compileQuery<A extends Record<string, unknown> = Record<string, never>>(
  build: (db: Kysely<HermesDatabase>) => Compilable,
): CompiledTemplate<A> {
  const compiled = build(queryBuilder).compile();
  return {
    sql: compiled.sql,
    slots: compiled.parameters.map((p) => (isParam(p) ? { name: p[PARAM] } : { value: p })),
  };
}

/** Binds template arguments in slot order. */
export function bindArgs<A>(template: CompiledTemplate<A>, args: A): unknown[] {
  const record = args as Record<string, unknown>;
  return template.slots.map((slot) => {
    const value = "name" in slot ? record[slot.name] : slot.value;
    return value === undefined ? null : typeof value === "boolean" ? (value ? 1 : 0) : value;
  });
}
