// Turning rows into the Markdown table and the SVG chart.

import type { Row } from "./protocol.js";

function ms(v: number): string {
  if (v >= 100) return v.toFixed(0);
  if (v >= 1) return v.toFixed(2);
  if (v >= 0.01) return v.toFixed(3);
  return v.toPrecision(2);
}

function err(v: number): string {
  return v === 0 ? "0" : v.toExponential(1);
}

/** Rows in bench order, then by library as listed. */
export function markdownTable(rows: Row[], notes: string[]): string {
  const lines = [
    "| bench | library | backend | n | median ms | min ms | max ms | baseline median ms | ratio | max abs err |",
    "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const r of rows) {
    let ratio = r.ratio.toPrecision(3);
    if (r.firstOverRepeat !== undefined) ratio += ` (first/repeat ${r.firstOverRepeat.toFixed(2)})`;
    lines.push(
      `| ${r.bench} | ${r.library} | ${r.backend} | ${r.n.toLocaleString("en-US")} | ${ms(r.medianMs)} | ${ms(r.minMs)} | ${ms(r.maxMs)} | ${ms(r.baselineMedianMs)} | ${ratio} | ${err(r.maxAbsErr)} |`,
    );
  }
  const out = [lines.join("\n"), ""];
  out.push(
    "Ratio = library median / hand-written median, both measured alternately in the library's own process. " +
      "B5 times are per call. B6 times are the first call at a batch size never seen before (the function warm on another size); " +
      "first/repeat compares it with a second call at the same size.",
  );
  const counters = rows.filter((r) => r.counters);
  if (counters.length) {
    out.push("", "Compiler counters:");
    for (const r of counters) {
      const c = r.counters!;
      out.push(
        `- ${r.bench} ${r.library}/${r.backend}: traces +${c.traces}, compiles +${c.compiles}, cache hits +${c.cacheHits} (${c.scope})`,
      );
    }
  }
  if (notes.length) {
    out.push("", "Notes:");
    for (const n of notes) out.push(`- ${n}`);
  }
  return out.join("\n");
}

const PALETTE = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d", "#bab0ac"];

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * Grouped bars of ratio per benchmark (one bar per library/backend), log
 * scale, bars growing from the hand-written baseline line at 1.0.
 */
export function svgChart(rows: Row[], title: string): string {
  const bars = rows.filter((r) => r.library !== "hand-written" && Number.isFinite(r.ratio) && r.ratio > 0);
  const benches = [...new Set(bars.map((r) => r.bench))];
  const series = [...new Set(bars.map((r) => `${r.library} (${r.backend})`))];
  const W = 960,
    H = 460,
    left = 60,
    right = 230,
    top = 40,
    bottom = 50;
  const plotW = W - left - right,
    plotH = H - top - bottom;
  const ratios = bars.map((r) => r.ratio);
  // A little headroom so no bar ends exactly on the plot's edge.
  const lo = Math.floor(Math.log10(Math.min(1, ...ratios)) - 0.15);
  const hi = Math.max(lo + 1, Math.ceil(Math.log10(Math.max(1, ...ratios)) + 0.15));
  const y = (v: number) => top + plotH * (1 - (Math.log10(v) - lo) / (hi - lo));
  const groupW = plotW / Math.max(1, benches.length);
  const barW = Math.min(22, (groupW * 0.8) / Math.max(1, series.length));
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${left}" y="22" font-size="15" font-weight="bold">${esc(title)}</text>`,
  ];
  for (let e = lo; e <= hi; e++) {
    const yy = y(10 ** e).toFixed(1);
    out.push(`<line x1="${left}" x2="${left + plotW}" y1="${yy}" y2="${yy}" stroke="#ddd"/>`);
    out.push(
      `<text x="${left - 6}" y="${yy}" text-anchor="end" dominant-baseline="middle">${10 ** e >= 1 ? 10 ** e : (10 ** e).toPrecision(1)}×</text>`,
    );
  }
  out.push(
    `<text transform="translate(16 ${top + plotH / 2}) rotate(-90)" text-anchor="middle">time / hand-written (log)</text>`,
  );
  const y1 = y(1);
  benches.forEach((bench, gi) => {
    const gx = left + gi * groupW + (groupW - barW * series.length) / 2;
    series.forEach((s, si) => {
      const r = bars.find((b) => b.bench === bench && `${b.library} (${b.backend})` === s);
      if (!r) return;
      const yv = y(r.ratio);
      const x = gx + si * barW;
      out.push(
        `<rect x="${x.toFixed(1)}" y="${Math.min(yv, y1).toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${Math.max(1, Math.abs(y1 - yv)).toFixed(1)}" fill="${PALETTE[si % PALETTE.length]}"><title>${esc(`${bench} ${s}: ${r.ratio.toPrecision(3)}×`)}</title></rect>`,
      );
    });
    out.push(
      `<text x="${(left + gi * groupW + groupW / 2).toFixed(1)}" y="${H - bottom + 18}" text-anchor="middle">${bench}</text>`,
    );
  });
  out.push(
    `<line x1="${left}" x2="${left + plotW}" y1="${y1.toFixed(1)}" y2="${y1.toFixed(1)}" stroke="black" stroke-width="1.5"/>`,
  );
  series.forEach((s, si) => {
    const ly = top + 10 + si * 20;
    out.push(
      `<rect x="${left + plotW + 16}" y="${ly - 9}" width="12" height="12" fill="${PALETTE[si % PALETTE.length]}"/>`,
    );
    out.push(`<text x="${left + plotW + 34}" y="${ly + 1}">${esc(s)}</text>`);
  });
  out.push(
    `<text x="${left}" y="${H - 10}" fill="#555">Black line at 1×: the hand-written JS loop (same process, alternating). Below it: faster. B5 per call; B6 first call at a new batch size.</text>`,
  );
  out.push("</svg>");
  return out.join("\n") + "\n";
}
