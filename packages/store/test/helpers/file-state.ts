import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";

/** What a read must leave exactly as it was: the file's bytes, its mode, and its folder's entries. */
export interface FileState {
  sha256: string;
  mode: string;
  listing: string[];
}

export function fileState(path: string): FileState {
  return {
    sha256: createHash("sha256").update(readFileSync(path)).digest("hex"),
    mode: (statSync(path).mode & 0o7777).toString(8),
    listing: readdirSync(dirname(path)).sort(),
  };
}
