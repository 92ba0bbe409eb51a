/** A static file server for the browser tests: one folder on 127.0.0.1, no directory listings, nothing outside it. */
import { readFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, normalize, resolve, sep } from "node:path";

const TYPES: Record<string, string> = {
  ".html": "text/html",
  ".js": "text/javascript",
  ".mjs": "text/javascript",
  ".css": "text/css",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
};

/** Serves `folder` on 127.0.0.1 at a free port: `url` ends with "/", `close()` stops it. */
export async function serve(folder: string): Promise<{ url: string; close: () => void }> {
  const dir = resolve(folder);
  const server = http.createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    const file = normalize(join(dir, path.endsWith("/") ? `${path}index.html` : path));
    if (!file.startsWith(dir + sep)) {
      res.statusCode = 403;
      res.end();
      return;
    }
    readFile(file).then(
      (body) => {
        res.setHeader("content-type", TYPES[extname(file)] ?? "application/octet-stream");
        res.end(body);
      },
      () => {
        res.statusCode = 404;
        res.end();
      },
    );
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, close: () => server.close() };
}
