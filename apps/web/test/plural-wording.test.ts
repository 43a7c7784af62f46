import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const client = resolve(dirname(fileURLToPath(import.meta.url)), "../client");

/** Every `.tsx`/`.ts` file of the front end, as `[path, text]`. */
function sources(dir = client): Array<[string, string]> {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e): Array<[string, string]> => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return /\.tsx?$/.test(e.name) ? [[path, readFileSync(path, "utf8")]] : [];
  });
}

describe("the web front end words counts in the right number", () => {
  it("no count is followed by a fixed plural noun: counts go through countOf ('1 session', '2 sessions')", () => {
    // `{n} sessions` in JSX or `${n} sessions` in a template: "1 sessions" when n is 1.
    const fixedPlural =
      /\}\s*(sessions|messages|matches|tool calls|days|hits)\b|\b(session|message|day)\(s\)/;
    const offenders = sources()
      .flatMap(([path, text]) =>
        text.split("\n").map((line, i) => ({ where: `${path.slice(client.length + 1)}:${i + 1}`, line })),
      )
      .filter(({ line }) => fixedPlural.test(line))
      .map(({ where, line }) => `${where}: ${line.trim()}`);
    expect(offenders).toEqual([]);
  });
});
