import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // Examples import "batchwise" as a user would; here that is this repository's source (as in tsconfig.json's paths).
  resolve: {
    alias: [
      { find: /^batchwise$/, replacement: fileURLToPath(new URL("./src/index.ts", import.meta.url)) },
      { find: /^batchwise\/runtime$/, replacement: fileURLToPath(new URL("./src/runtime-entry.ts", import.meta.url)) },
    ],
  },
  test: {
    include: ["test/**/*.test.ts"],
    // Does nothing unless BATCHWISE_TEST_BACKEND is set (runs the suite on another backend).
    setupFiles: ["test/helpers/backend-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
