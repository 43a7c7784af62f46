import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// Issue #20: each published package's `src/index.ts` exports only what its README documents.
// The entry point is read with the TypeScript parser (types included); a name counts as
// documented when it appears as a whole word anywhere in the package's README.

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** What an entry point exports, and the statements that hide names from a reader. */
interface Surface {
  readonly names: string[];
  readonly problems: string[];
}

function hasModifier(node: ts.Node, kind: ts.SyntaxKind): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === kind);
}

/**
 * The names a module exports, read from its source alone. `export *` (also `export type *`)
 * and default exports are problems, not names: the surface must read in one file (STYLE.md).
 */
function exportedNames(fileName: string, text: string): Surface {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const names: string[] = [];
  const problems: string[] = [];
  const where = (node: ts.Node) =>
    `${fileName}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement)) {
      const clause = statement.exportClause;
      if (clause === undefined) problems.push(`${where(statement)}: export * (name the exports)`);
      else if (ts.isNamespaceExport(clause)) names.push(clause.name.text);
      else for (const element of clause.elements) names.push(element.name.text);
    } else if (ts.isExportAssignment(statement)) {
      problems.push(`${where(statement)}: default export (export a name)`);
    } else if (hasModifier(statement, ts.SyntaxKind.ExportKeyword)) {
      if (ts.isVariableStatement(statement)) {
        for (const declaration of statement.declarationList.declarations) {
          if (ts.isIdentifier(declaration.name)) names.push(declaration.name.text);
          else problems.push(`${where(declaration)}: destructured export (export each name)`);
        }
      } else {
        const name = (statement as ts.DeclarationStatement).name;
        if (
          name === undefined ||
          !ts.isIdentifier(name) ||
          hasModifier(statement, ts.SyntaxKind.DefaultKeyword)
        ) {
          problems.push(`${where(statement)}: default export (export a name)`);
        } else names.push(name.text);
      }
    }
  }
  return { names, problems };
}

/** Whether `name` appears in `text` as a word of its own (not inside a longer identifier). */
function mentions(text: string, name: string): boolean {
  const escaped = name.replace(/[$]/g, "\\$");
  return new RegExp(`(?<![\\w$])${escaped}(?![\\w$])`).test(text);
}

interface PublishedPackage {
  readonly name: string;
  readonly dir: string;
}

/** Every package of the workspace that is published with an entry point (`exports["."]`). */
function publishedPackages(): PublishedPackage[] {
  const found: PublishedPackage[] = [];
  for (const group of ["packages", "apps"]) {
    for (const entry of readdirSync(join(ROOT, group), { withFileTypes: true })) {
      const manifestPath = join(ROOT, group, entry.name, "package.json");
      if (!entry.isDirectory() || !existsSync(manifestPath)) continue;
      const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as {
        name: string;
        private?: boolean;
        exports?: Record<string, unknown>;
      };
      if (manifest.private !== true && manifest.exports?.["."] !== undefined) {
        found.push({ name: manifest.name, dir: join(group, entry.name) });
      }
    }
  }
  return found.sort((a, b) => a.name.localeCompare(b.name));
}

const PACKAGES = publishedPackages();

describe("the published packages", () => {
  it("are found (a package that moves or stops being published is noticed here)", () => {
    expect(PACKAGES.map((p) => p.name)).toEqual([
      "@hermes/conformance",
      "@hermes/core",
      "@hermes/postgres",
      "@hermes/schema",
      "@hermes/search",
      "@hermes/store",
      "@hermes/web",
    ]);
  });
});

describe.each(PACKAGES)("public surface of $name", ({ dir }) => {
  const indexPath = join(ROOT, dir, "src/index.ts");
  const readmePath = join(ROOT, dir, "README.md");
  const surface = exportedNames(relative(ROOT, indexPath), readFileSync(indexPath, "utf8"));

  it("names every export in src/index.ts (no export *, no default export)", () => {
    expect(surface.problems).toEqual([]);
    expect(surface.names.length).toBeGreaterThan(0);
  });

  it("exports only names its README mentions", () => {
    const readme = readFileSync(readmePath, "utf8");
    const undocumented = surface.names.filter((name) => !mentions(readme, name));
    expect(undocumented, `exported by ${dir}/src/index.ts, not mentioned in ${dir}/README.md`).toEqual([]);
  });
});

describe("the check itself", () => {
  const source = [
    'export { a, type B, c as d } from "./x.js";',
    'export type { E } from "./y.js";',
    'export * as ns from "./z.js";',
    "export const f = 1, g = 2;",
    "export function h() {}",
    "export interface I {}",
    "export type J = string;",
    "export class K {}",
    "export enum L { M }",
    "const hidden = 1;",
    'export * from "./w.js";',
    'export type * from "./v.js";',
    "export default hidden;",
  ].join("\n");

  it("reads every kind of export, types included, and refuses export * and defaults", () => {
    const { names, problems } = exportedNames("index.ts", source);
    expect(names).toEqual(["a", "B", "d", "E", "ns", "f", "g", "h", "I", "J", "K", "L"]);
    expect(problems).toEqual([
      "index.ts:11: export * (name the exports)",
      "index.ts:12: export * (name the exports)",
      "index.ts:13: default export (export a name)",
    ]);
  });

  it("matches whole words only", () => {
    expect(mentions("`runSearch(db, plan)` and $ref", "runSearch")).toBe(true);
    expect(mentions("runSearchOptions", "runSearch")).toBe(false);
    expect(mentions("a planSearch b", "Search")).toBe(false);
    expect(mentions("uses $ref here", "$ref")).toBe(true);
  });
});
