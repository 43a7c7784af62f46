import { openSessionStore, type SessionStore } from "@hermes/store";
import { afterEach, beforeEach, expect } from "vitest";
import { type FileState, fileState } from "./file-state.js";
import { copyOfFixture } from "./temp-dir.js";

/** The store and path of {@link untouchedFixture}, set anew before each test. */
export interface UntouchedFixture {
  path: string;
  store: SessionStore;
}

/**
 * Before each test of the calling `describe`, a copy of `fixture` opened by default; after it,
 * the store closed and the file checked exactly as it was (bytes, mode, folder): a newer
 * agent's file is only read.
 */
export function untouchedFixture(fixture: string): UntouchedFixture {
  const current = {} as UntouchedFixture;
  let before: FileState;
  beforeEach(async () => {
    current.path = copyOfFixture(fixture);
    before = fileState(current.path);
    current.store = await openSessionStore(current.path);
  });
  afterEach(async () => {
    await current.store.close();
    expect(fileState(current.path)).toEqual(before);
  });
  return current;
}
