/**
 * Vite config of the playground page: `npm run playground` serves it,
 * `npm run playground:build` writes a static site to playground/dist.
 * The page imports batchwise from the repository's sources (../src).
 */
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const here = dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: here,
  // Relative asset URLs: the built page works from any folder or static host.
  base: "./",
  server: { fs: { allow: [dirname(here)] } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    // Graphviz's WASM build is one large module, loaded on first use.
    chunkSizeWarningLimit: 2048,
  },
});
