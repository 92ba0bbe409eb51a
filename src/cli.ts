#!/usr/bin/env node
/**
 * The `batchwise` command (package.json `bin`): `batchwise bundle | dump | inspect`,
 * see `batchwise --help` and src/cli/main.ts.
 */
import { main } from "./cli/main.js";

process.exitCode = await main(process.argv.slice(2), {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
});
