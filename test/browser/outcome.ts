/** What test/browser/page.ts reports through `window.__result` (each check is a max abs error). */
export interface Outcome {
  readonly adapter: string;
  readonly backendName: string;
  readonly checks: Record<string, number>;
  readonly traces: Record<string, number>;
  readonly error?: string;
}
