// Builds the front end into dist/client: hashed, minified ES modules and CSS (esbuild, code
// split so the chart library loads with the Usage page only), a gzip and a Brotli copy of each
// asset, and index.html. Run by `pnpm build`; nothing is built when the server starts.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist", "client");
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, "assets"), { recursive: true });

const result = await build({
  entryPoints: [join(root, "client", "main.tsx")],
  bundle: true,
  splitting: true,
  format: "esm",
  target: ["es2022"],
  minify: true,
  outdir: join(out, "assets"),
  entryNames: "[name]-[hash]",
  chunkNames: "[name]-[hash]",
  assetNames: "[name]-[hash]",
  jsx: "automatic",
  jsxImportSource: "preact",
  metafile: true,
  legalComments: "linked",
  // The pages share display rules with the CLI through @hermes/core (names, money, snippets);
  // its Node-only modules (files, crypto) are never imported by the pages and are tree-shaken
  // away. Checked below: no built asset may import a `node:` module.
  external: ["node:*"],
  logLevel: "warning",
});

let entryJs = "";
let entryCss = "";
const sizes = [];
for (const [file, info] of Object.entries(result.metafile.outputs)) {
  // The metafile's paths are relative to the working directory.
  const path = join(process.cwd(), file);
  if (info.entryPoint?.endsWith("main.tsx")) {
    entryJs = basename(file);
    if (info.cssBundle) entryCss = basename(info.cssBundle);
  }
  if (!/\.(js|css)$/.test(file)) continue;
  const body = readFileSync(path);
  if (/["']node:[a-z/_]+["']/.test(body.toString("utf8")))
    throw new Error(`${basename(file)} imports a Node module: the pages must not`);
  const gz = gzipSync(body, { level: 9 });
  const br = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } });
  writeFileSync(`${path}.gz`, gz);
  writeFileSync(`${path}.br`, br);
  sizes.push({ file: basename(file), bytes: body.length, gzip: gz.length, brotli: br.length });
}
if (entryJs === "") throw new Error("esbuild produced no entry script");

writeFileSync(
  join(out, "index.html"),
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="hermes-csrf" content="%CSRF%">
<meta name="hermes-writable" content="%WRITABLE%">
<title>Hermes sessions</title>
<link rel="icon" href="data:,">
${entryCss ? `<link rel="stylesheet" href="/assets/${entryCss}">\n` : ""}<script type="module" src="/assets/${entryJs}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The session browser needs JavaScript.</noscript>
</body>
</html>
`,
);
writeFileSync(
  join(out, "build-sizes.json"),
  `${JSON.stringify({ entryJs, entryCss, assets: sizes }, null, 2)}\n`,
);
for (const s of sizes)
  console.log(
    `${s.file.padEnd(36)} ${String(s.bytes).padStart(8)} B  gzip ${String(s.gzip).padStart(7)}  br ${String(s.brotli).padStart(7)}`,
  );
