// Builds the extension with esbuild:
//   the page script    src/page/main.ts for the "Show Context" webview, bundled for the browser and
//                      inlined into both builds below as VTCODE_CONTEXT_PAGE_SCRIPT (contextmap.ts)
//   dist/extension.js  the bundle VS Code loads (vscode external, everything else inlined)
//   out/*.js           the vscode-free modules as CommonJS, for `node --test`
// Usage: node scripts/build.mjs [--production]
import * as esbuild from 'esbuild';
import { fileURLToPath } from 'node:url';
import * as path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const production = process.argv.includes('--production');

const page = await esbuild.build({
  absWorkingDir: root,
  entryPoints: ['src/page/main.ts'],
  bundle: true,
  platform: 'browser',
  format: 'iife',
  target: 'es2020',
  write: false,
  minify: production,
  logLevel: 'warning',
});
const pageScript = page.outputFiles[0].text;
// the script sits inside <script> of the page: nothing in it may end that element early
if (/<\/script|<!--/i.test(pageScript)) throw new Error('src/page/main.ts: the bundled page script contains </script or <!--');
const define = { VTCODE_CONTEXT_PAGE_SCRIPT: JSON.stringify(pageScript) };

await esbuild.build({
  absWorkingDir: root,
  entryPoints: ['src/extension.ts'],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node18',
  external: ['vscode'],
  outfile: 'dist/extension.js',
  define,
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'warning',
});

await esbuild.build({
  absWorkingDir: root,
  entryPoints: ['src/display.ts', 'src/tracker.ts', 'src/protocol.ts', 'src/contextmap.ts', 'src/server.ts', 'src/delta.ts', 'src/receipt.ts', 'src/ask.ts', 'src/reopen.ts'],
  bundle: false,
  define,
  platform: 'node',
  format: 'cjs',
  target: 'node18',
  outdir: 'out',
  logLevel: 'warning',
});
