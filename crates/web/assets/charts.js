// mqwatch dashboard: time-series charts on uPlot (vendored, see crates/web/package.json). Owns `MQ.charts`, the
// live uPlot instance of every chart by its container id (the browser tests read their data from it), and the
// conversion of the API's series rows (minute points or hour/day rollups) into uPlot's columnar data.
"use strict";

MQ.charts = {};

const PALETTE = ["#2f6fdf", "#d9480f", "#2b8a3e", "#862e9c", "#e67700", "#0b7285"];

// Rows of `/series` → {x: seconds[], y: value[]}, sorted by time. Minute rows carry `minute_ms`/`value`, rollups
// `bucket_ms` and `avg`/`max`/`sum`; `field` picks which rollup column (default: sum for counts, max for levels).
MQ.seriesColumns = function (rows, field) {
  const pts = rows
    .map((r) => [
      (r.minute_ms ?? r.bucket_ms) / 1000,
      r.value ?? r[field || "sum"] ?? r.avg,
    ])
    .filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y))
    .sort((a, b) => a[0] - b[0]);
  return { x: pts.map((p) => p[0]), y: pts.map((p) => p[1]) };
};

// Aligns several {x, y} series on the union of their x values (missing points are null: gaps).
MQ.align = function (series) {
  const xs = [...new Set(series.flatMap((s) => s.x))].sort((a, b) => a - b);
  const cols = series.map((s) => {
    const at = new Map(s.x.map((x, i) => [x, s.y[i]]));
    return xs.map((x) => (at.has(x) ? at.get(x) : null));
  });
  return [xs, ...cols];
};

// The x range (seconds) each chart shows: the whole window asked for, so a single point sits at its time
// instead of uPlot stretching the axis over years.
MQ.ranges = {};

// Draws (or redraws) the chart in container `id`: `labels` name the y columns of `data` ([x, y1, y2, …]);
// `range` is [from, to] in seconds.
MQ.chart = function (id, labels, data, unit, range) {
  const box = document.getElementById(id);
  const old = MQ.charts[id];
  MQ.ranges[id] = range;
  const sameShape = old && old.series.length === labels.length + 1 &&
    labels.every((l, i) => old.series[i + 1].label === l);
  if (sameShape) {
    old.setData(data);
    return old;
  }
  if (old) old.destroy();
  box.replaceChildren();
  const width = Math.max(280, box.clientWidth || 480);
  const opts = {
    width,
    height: 200,
    scales: { x: { time: true, range: (u, min, max) => MQ.ranges[id] || [min, max] } },
    series: [
      {},
      ...labels.map((label, i) => ({
        label,
        stroke: PALETTE[i % PALETTE.length],
        width: 2,
        points: { size: 6 },
        value: (u, v) => (v === null || v === undefined ? "–" : MQ.num(v) + (unit ? " " + unit : "")),
      })),
    ],
    axes: [{}, { size: 60, values: (u, vals) => vals.map((v) => MQ.num(v)) }],
  };
  const u = new uPlot(opts, data, box);
  MQ.charts[id] = u;
  return u;
};

// Whether a chart has at least one non-null point in any series.
MQ.chartHasData = function (id) {
  const u = MQ.charts[id];
  return !!u && u.data.slice(1).some((col) => col.some((v) => v !== null && v !== undefined));
};

// Keeps charts as wide as their containers.
window.addEventListener("resize", () => {
  for (const [id, u] of Object.entries(MQ.charts)) {
    const box = document.getElementById(id);
    if (box && box.clientWidth) u.setSize({ width: Math.max(280, box.clientWidth), height: 200 });
  }
});
