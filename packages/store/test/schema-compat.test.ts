import { join } from "node:path";
import { openSessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { referenceSchema, schemaOf } from "./helpers/reference-schema.js";
import { copyOfSample, tempDir } from "./helpers/temp-dir.js";

describe("file compatibility with the reference schema", () => {
  it("the fixture lists the 26 objects of a v11 file", () => {
    expect(referenceSchema()).toHaveLength(26);
  });

  it("a fresh file holds exactly the reference's objects, same SQL text, and version 11", async () => {
    const path = join(tempDir(), "state.db");
    const store = await openSessionStore({ path });
    await store.close();
    expect(schemaOf(path)).toEqual(referenceSchema());
    const db = new Database(path, { readonly: true });
    expect(db.prepare("SELECT version FROM schema_version").all()).toEqual([{ version: 11 }]);
    db.close();
  });

  it("the reference's sample file opens without any schema change and keeps its rows", async () => {
    const path = copyOfSample();
    const before = schemaOf(path);
    const store = await openSessionStore({ path });
    expect(store.migration.applied).toEqual([]);
    expect(await store.sessionCount()).toBe(13);
    expect(await store.messageCount()).toBe(109);
    await store.close();
    expect(schemaOf(path)).toEqual(before);
    expect(schemaOf(path)).toEqual(referenceSchema());
  });
});
