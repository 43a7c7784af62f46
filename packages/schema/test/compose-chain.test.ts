import {
  composeChain,
  coreSchema,
  type EnsureStep,
  readSchemaVersion,
  runMigrations,
  type SchemaContribution,
  type VersionStep,
} from "@hermes/schema";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { executor, transactionRunner } from "./sqlite-executor.js";

const version = (v: number, log: string[]): VersionStep => ({
  version: v,
  name: `v${v}`,
  up: () => void log.push(`v${v}`),
});
const ensure = (name: string, log: string[]): EnsureStep => ({
  name,
  isSatisfied: () => log.includes(name),
  up: () => void log.push(name),
});

describe("composeChain", () => {
  it("orders version steps by version across contributions, keeps base/finalize in given order", () => {
    const log: string[] = [];
    const a: SchemaContribution = {
      base: [ensure("a-base", log)],
      versions: [version(11, log), version(3, log)],
      finalize: [ensure("a-final", log)],
    };
    const b: SchemaContribution = {
      base: [ensure("b-base", log)],
      versions: [version(10, log), version(2, log)],
      finalize: [ensure("b-final", log)],
    };
    const chain = composeChain(a, b);
    expect(chain.versions.map((s) => s.version)).toEqual([2, 3, 10, 11]);
    expect(chain.base.map((s) => s.name)).toEqual(["a-base", "b-base"]);
    expect(chain.finalize.map((s) => s.name)).toEqual(["a-final", "b-final"]);
    expect(composeChain(b, a).finalize.map((s) => s.name)).toEqual(["b-final", "a-final"]);
  });

  it("refuses two steps for the same version, within or across contributions", () => {
    const log: string[] = [];
    expect(() => composeChain({ versions: [version(10, log)] }, { versions: [version(10, log)] })).toThrow(
      "Two migration steps claim schema version 10",
    );
    expect(() => composeChain({ versions: [version(4, log), version(4, log)] })).toThrow(/version 4/);
  });

  it("accepts contributions without some parts", () => {
    expect(composeChain({}, coreSchema).base.map((s) => s.name)).toEqual([
      "core-tables",
      "reconcile-columns",
    ]);
  });
});

describe("runMigrations (one in-memory file, core steps only)", () => {
  it("stamps a fresh file with 11 in one transaction; a second run takes no lock", async () => {
    const sqlite = new Database(":memory:");
    const db = executor(sqlite);
    const tx = transactionRunner(sqlite);
    const first = await runMigrations(db, composeChain(coreSchema), { transaction: tx });
    expect(first).toMatchObject({ fromVersion: null, toVersion: 11, newerVersion: false, warnings: [] });
    expect(first.applied).toEqual(["core-tables", "stamp-v11", "title-unique-index"]);
    expect(tx.calls).toEqual(["migrate"]);
    const second = await runMigrations(db, composeChain(coreSchema), { transaction: tx });
    expect(second).toEqual({
      fromVersion: 11,
      toVersion: 11,
      applied: [],
      warnings: [],
      newerVersion: false,
    });
    expect(tx.calls).toEqual(["migrate"]);
  });

  it("runs only the version steps above the recorded version, in order, then records the target", async () => {
    const sqlite = new Database(":memory:");
    sqlite.exec(
      "CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (9)",
    );
    const log: string[] = [];
    const chain = composeChain(coreSchema, {
      versions: [version(11, log), version(9, log), version(10, log)],
    });
    const report = await runMigrations(executor(sqlite), chain, { transaction: transactionRunner(sqlite) });
    expect(log).toEqual(["v10", "v11"]);
    expect(report.fromVersion).toBe(9);
    expect(report.toVersion).toBe(11);
    expect(report.applied).toEqual(["core-tables", "v10", "v11", "stamp-v11", "title-unique-index"]);
  });

  it("a step that throws rolls the whole upgrade back: same version, no new table", async () => {
    const sqlite = new Database(":memory:");
    sqlite.exec(
      "CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (5)",
    );
    const failing: VersionStep = {
      version: 10,
      name: "v10",
      up: () => {
        throw new Error("boom");
      },
    };
    const chain = composeChain(coreSchema, { versions: [failing] });
    await expect(
      runMigrations(executor(sqlite), chain, { transaction: transactionRunner(sqlite) }),
    ).rejects.toThrow("boom");
    expect(readSchemaVersion(executor(sqlite))).toBe(5);
    const tables = sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all();
    expect(tables).toEqual([{ name: "schema_version" }]);
  });

  it("leaves a file with a newer version untouched and says so", async () => {
    const sqlite = new Database(":memory:");
    sqlite.exec(
      "CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (12)",
    );
    const tx = transactionRunner(sqlite);
    const report = await runMigrations(executor(sqlite), composeChain(coreSchema), { transaction: tx });
    expect(report).toEqual({ fromVersion: 12, toVersion: 12, applied: [], warnings: [], newerVersion: true });
    expect(tx.calls).toEqual([]);
    expect(sqlite.prepare("SELECT COUNT(*) AS n FROM sqlite_master").get()).toEqual({ n: 1 });
  });
});
