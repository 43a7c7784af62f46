import {
  assembleLineage,
  BackendError,
  HermesStoreError,
  type LineageNode,
  SEARCH_LIMITS,
  searchArguments,
} from "@hermes/core";
import { describe, expect, it } from "vitest";

const node = (id: string, parent: string | null, depth: number): LineageNode => ({
  id,
  parent_session_id: parent,
  title: null,
  source: "cli",
  started_at: depth,
  ended_at: null,
  end_reason: null,
  message_count: 0,
  depth,
  link: parent === null ? null : "other",
});

describe("BackendError", () => {
  it("is a HermesStoreError with code BACKEND_ERROR, the driver's error in cause and its code", () => {
    const cause = new Error("relation does not exist");
    const error = new BackendError("PostgreSQL error 42P01", { cause, backendCode: "42P01" });
    expect(error).toBeInstanceOf(HermesStoreError);
    expect(error).toMatchObject({ name: "BackendError", code: "BACKEND_ERROR", backendCode: "42P01", cause });
    expect(new BackendError("no driver code")).toMatchObject({ backendCode: undefined });
    expect("cause" in new BackendError("no cause")).toBe(false);
  });
});

describe("assembleLineage", () => {
  it("puts ancestors root first and keeps each descendant once, the session itself never, up to the limit", () => {
    const self = node("c", "b", 0);
    const { depth: _depth, ...row } = self;
    const lineage = assembleLineage(
      row,
      [node("b", "a", 1), node("a", null, 2)],
      [node("d", "c", 1), node("e", "c", 1), node("d", "c", 2), node("c", "e", 2), node("f", "d", 2)],
      2,
    );
    expect(lineage.root_id).toBe("a");
    expect(lineage.session).toEqual(self);
    expect(lineage.ancestors.map((n) => n.id)).toEqual(["a", "b"]);
    expect(lineage.descendants.map((n) => n.id)).toEqual(["d", "e"]);
  });

  it("is its own root without ancestors", () => {
    const { depth: _depth, ...row } = node("solo", null, 0);
    expect(assembleLineage(row, [], [], 10)).toMatchObject({
      root_id: "solo",
      ancestors: [],
      descendants: [],
    });
  });
});

describe("searchArguments", () => {
  it("applies the defaults and keeps filters", () => {
    expect(searchArguments("docker", { roleFilter: ["user"] })).toEqual({
      query: "docker",
      sourceFilter: null,
      excludeSources: null,
      roleFilter: ["user"],
      limit: 20,
      offset: 0,
    });
  });

  it.each([
    ["a query that is not a string", 42, undefined, "query"],
    ["a query over the length limit", "x".repeat(SEARCH_LIMITS.maxQueryLength + 1), undefined, "query"],
    ["a limit over the maximum", "q", { limit: SEARCH_LIMITS.maxLimit + 1 }, "limit"],
    ["a negative offset", "q", { offset: -1 }, "offset"],
    ["a filter that is not an array of strings", "q", { sourceFilter: "cli" }, "sourceFilter"],
  ])("refuses %s (INVALID_ARGUMENT)", (_what, query, options, argument) => {
    expect(() => searchArguments(query, options as never)).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT", argument }),
    );
  });
});
