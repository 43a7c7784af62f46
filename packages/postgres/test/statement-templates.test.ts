import { Kysely, PostgresDialect, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { StatementTemplates, slots } from "../dist/search/statement-templates.js";

// Compiles only: the pool is never asked for a connection.
const db = new Kysely<{ t: { a: number; b: string } }>({
  dialect: new PostgresDialect({ pool: {} as never }),
});

function statement(
  templates: StatementTemplates,
  key: string,
  inputs: Record<string, unknown>,
  builds: string[],
) {
  return templates.compiled(db, key, inputs, () => {
    builds.push(key);
    const names = slots.array<string>("names");
    const q = db
      .selectFrom("t")
      .select("a")
      .where(sql<boolean>`b = ANY(${names}::text[]) AND ${names.length > 0}`)
      .where("a", ">", slots.value<number>("min"))
      .limit(slots.value<number>("limit"))
      .offset(3);
    return sql`${q}`;
  });
}

describe("statement templates", () => {
  it("build a shape once and put each call's inputs where their slots compiled", () => {
    const templates = new StatementTemplates();
    const builds: string[] = [];
    const first = statement(templates, "k", { names: ["x"], min: 1, limit: 10 }, builds);
    const second = statement(templates, "k", { names: ["y", "z"], min: 5, limit: 20 }, builds);
    expect(builds).toEqual(["k"]);
    expect(second.sql).toBe(first.sql);
    expect(first.parameters).toEqual([["x"], true, 1, 10, 3]);
    expect(second.parameters).toEqual([["y", "z"], true, 5, 20, 3]);
    expect(second.sql).toBe(
      '(select "a" from "t" where b = ANY($1::text[]) AND $2 and "a" > $3 limit $4 offset $5)',
    );
  });

  it("refuse a call without an input its template needs", () => {
    const templates = new StatementTemplates();
    statement(templates, "k", { names: ["x"], min: 1, limit: 10 }, []);
    expect(() => statement(templates, "k", { names: ["x"], limit: 10 }, [])).toThrow(/no input named min/);
  });

  it("keep at most their capacity of shapes, dropping the oldest", () => {
    const templates = new StatementTemplates(2);
    const builds: string[] = [];
    const inputs = { names: ["x"], min: 1, limit: 10 };
    for (const key of ["a", "b", "a", "c", "b", "a"]) statement(templates, key, inputs, builds);
    // a, b built; a reused; c evicts a; b reused; a built again (evicting b).
    expect(builds).toEqual(["a", "b", "c", "a"]);
  });
});
