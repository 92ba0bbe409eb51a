/**
 * Debian's headless Chromium for the browser tests, with WebGPU on SwiftShader
 * (a software adapter that runs real WGSL) and none of the background
 * networking that this machine's closed network refuses.
 */
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

export const CHROMIUM = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium";
/** CI sets BATCHWISE_REQUIRE_BROWSER=1: a missing browser then fails the run instead of skipping. */
export const REQUIRE_BROWSER = process.env["BATCHWISE_REQUIRE_BROWSER"] === "1";
export const haveChromium = existsSync(CHROMIUM);

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--enable-unsafe-webgpu",
      "--enable-features=Vulkan",
      "--use-vulkan=swiftshader",
      "--use-webgpu-adapter=swiftshader",
      "--no-sandbox",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-quic",
    ],
  });
}
