import type {
  HermesDatabase,
  MessageRow,
  NewMessage,
  NewSession,
  SessionRow,
  StateMetaRow,
} from "@hermes/schema";
import { describe, expectTypeOf, it } from "vitest";
import { DATABASE_SHAPES, type DatabaseShapes } from "./table-shapes.js";

// Type-level tests, run by `tsc` through vitest's typecheck mode (schema project only).
describe("HermesDatabase types", () => {
  it("DATABASE_SHAPES is exactly the shape of the interfaces", () => {
    // Assigning the literal to DatabaseShapes already fails on a wrong boolean or a missing
    // or extra column; this pins the other direction (no widening to `boolean`).
    expectTypeOf(DATABASE_SHAPES).toEqualTypeOf<DatabaseShapes>();
    expectTypeOf<keyof HermesDatabase>().toEqualTypeOf<
      "sessions" | "messages" | "state_meta" | "schema_version"
    >();
  });

  it("rows: nullable columns are T | null, never optional", () => {
    expectTypeOf<SessionRow["title"]>().toEqualTypeOf<string | null>();
    expectTypeOf<SessionRow["started_at"]>().toEqualTypeOf<number>();
    expectTypeOf<SessionRow["message_count"]>().toEqualTypeOf<number | null>();
    expectTypeOf<MessageRow["id"]>().toEqualTypeOf<number>();
    expectTypeOf<MessageRow["tool_calls"]>().toEqualTypeOf<string | null>();
    expectTypeOf<StateMetaRow["key"]>().toEqualTypeOf<string>();
  });

  it("inserts: Generated columns may be left out, required ones may not", () => {
    expectTypeOf<{ id: string; source: string; started_at: number }>().toExtend<NewSession>();
    expectTypeOf<{ id: string; source: string }>().not.toExtend<NewSession>();
    expectTypeOf<{ session_id: string; role: string; timestamp: number }>().toExtend<NewMessage>();
  });
});
