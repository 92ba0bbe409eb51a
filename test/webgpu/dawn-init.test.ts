/**
 * initWebGPU in Node on Linux without a Vulkan loader: Dawn's default backends are
 * Vulkan's, whose failed probe Dawn reports by printing to the process's stderr from
 * native code. Where libvulkan.so.1 cannot be found the default attempt is skipped
 * (the OpenGL ES backend is used directly), so that warning is never printed;
 * BATCHWISE_DEBUG=webgpu says why.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { vulkanLoaderMissing } from "../../runtime/webgpu/device.js";
import { REQUIRE_WEBGPU } from "../helpers/webgpu.js";

/** A file system holding `files` (exact paths) and an ld.so.cache of `cache` (or none). */
function fakeFs(files: readonly string[], cache?: string) {
  return {
    existsSync: (p: string) => files.includes(p),
    readFileSync: (p: string) => {
      if (p !== "/etc/ld.so.cache" || cache === undefined) throw new Error(`ENOENT: ${p}`);
      return Buffer.from(cache);
    },
  };
}

describe("vulkanLoaderMissing", () => {
  const linux = { platform: "linux", arch: "x64" };
  it("is true only on Linux when neither the library directories nor ld.so.cache have libvulkan.so.1", () => {
    expect(vulkanLoaderMissing(linux, fakeFs([], "\0libEGL.so.1\0/usr/lib/x86_64-linux-gnu/libEGL.so.1\0"))).toBe(true);
    expect(vulkanLoaderMissing(linux, fakeFs([], "\0libvulkan.so.1\0/usr/lib/x86_64-linux-gnu/libvulkan.so.1\0"))).toBe(
      false,
    );
    expect(vulkanLoaderMissing(linux, fakeFs(["/usr/lib/x86_64-linux-gnu/libvulkan.so.1"], ""))).toBe(false);
    expect(
      vulkanLoaderMissing({ platform: "linux", arch: "arm64" }, fakeFs(["/lib/aarch64-linux-gnu/libvulkan.so.1"], "")),
    ).toBe(false);
    expect(
      vulkanLoaderMissing({ ...linux, libraryPath: "/opt/a::/opt/vk" }, fakeFs(["/opt/vk/libvulkan.so.1"], "")),
    ).toBe(false);
    // Cannot tell (no ld.so.cache, as with musl): keep trying Dawn's default first.
    expect(vulkanLoaderMissing(linux, fakeFs([]))).toBe(false);
    expect(vulkanLoaderMissing(linux, null)).toBe(false);
    expect(vulkanLoaderMissing({ platform: "darwin", arch: "arm64" }, fakeFs([], ""))).toBe(false);
    expect(vulkanLoaderMissing({ platform: "win32", arch: "x64" }, fakeFs([], ""))).toBe(false);
  });
});

describe("initWebGPU without a Vulkan loader", () => {
  it.skipIf(!vulkanLoaderMissing())("prints no Vulkan warning, and says why under BATCHWISE_DEBUG=webgpu", (ctx) => {
    const script = `import { initWebGPU } from ${JSON.stringify(fileURLToPath(new URL("../../src/index.ts", import.meta.url)))};
try {
  const b = await initWebGPU();
  console.log(JSON.stringify({ dawnFlags: b.adapter.dawnFlags }));
  b.destroy();
} catch (e) {
  console.log(JSON.stringify({ error: e.message }));
}`;
    const env: NodeJS.ProcessEnv = { ...process.env, BATCHWISE_DEBUG: "webgpu" };
    delete env["BATCHWISE_DAWN_FLAGS"];
    const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      encoding: "utf8",
      env,
    });
    const out = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { dawnFlags?: string[]; error?: string };
    if (out.error !== undefined) {
      if (REQUIRE_WEBGPU) throw new Error(`no WebGPU adapter: ${out.error}`);
      ctx.skip();
    }
    expect(out.dawnFlags).toEqual(["backend=opengles"]);
    expect(r.stderr).not.toMatch(/Vulkan: libvulkan|Couldn't load Vulkan/);
    expect(r.stderr).toContain("[batchwise:webgpu] no Vulkan loader (libvulkan.so.1) on this system");
  });
});
