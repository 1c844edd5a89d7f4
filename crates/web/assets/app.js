// mqwatch dashboard: the page's state (selected cluster, topic, group and window, kept in the URL hash) and the
// refresh loop: every 5 s it reads the overview and findings, then the selected cluster's views and series, and
// hands them to the panels. Only the panels that apply to the cluster's engine are shown and read (a panel's
// `data-engines`; none: every engine): BookKeeper has no topics, groups or probe, RocketMQ no durability audit.
// A failed read shows its error and keeps the last view.
// `document.body.dataset.refreshes` counts finished refreshes (the browser tests wait on it).
"use strict";

const state = { cluster: "", topic: "", group: "", window: "minute" };
const LATENCY = ["p50", "p90", "p99", "p999"];
let running = null;
let queued = false;
let refreshes = 0;

function readHash() {
  const h = new URLSearchParams(location.hash.slice(1));
  for (const k of Object.keys(state)) if (h.has(k)) state[k] = h.get(k);
}

function writeHash() {
  const h = new URLSearchParams(Object.entries(state).filter(([, v]) => v));
  history.replaceState(null, "", "#" + h);
}

function select(key, value) {
  state[key] = value;
  if (key === "cluster") {
    state.topic = "";
    state.group = "";
  }
  writeHash();
  MQ.refresh();
}

// Shows the panels that apply to `engine` and hides the others; the ids of those shown.
function showPanels(engine) {
  const shown = new Set();
  for (const p of document.querySelectorAll("#cluster-section .panel")) {
    const engines = (p.dataset.engines || "").split(" ").filter(Boolean);
    p.hidden = engines.length > 0 && !engines.includes(engine);
    if (!p.hidden) shown.add(p.id);
  }
  return shown;
}

async function refreshCluster(overview) {
  const names = overview.clusters.map((c) => c.name);
  // Default: the first cluster with topics (charts to show), else the first.
  if (!names.includes(state.cluster)) {
    state.cluster = (overview.clusters.find((c) => c.topics > 0) || overview.clusters[0] || {}).name || "";
  }
  const clusterSelect = document.getElementById("cluster");
  MQ.syncOptions(clusterSelect, names);
  clusterSelect.value = state.cluster;
  if (!state.cluster) return;
  const engine = (overview.clusters.find((c) => c.name === state.cluster) || {}).engine || "";
  const shown = showPanels(engine);
  const base = `/api/v1/clusters/${encodeURIComponent(state.cluster)}`;
  const [nodes, durability, probe] = await Promise.all([
    MQ.getJson(`${base}/nodes`),
    shown.has("panel-durability") ? MQ.getJson(`${base}/durability`) : null,
    shown.has("panel-probe") ? MQ.getJson(`${base}/probe`) : null,
  ]);
  MQ.renderNodes(nodes, engine, overview.now_ms);
  if (durability) MQ.renderDurability(durability);
  const w = state.window;
  const now = Date.now() / 1000;
  const range = [now - (MQ.WINDOWS[w] || MQ.WINDOWS.minute).span / 1000, now];
  if (probe) {
    const brokers = MQ.renderProbe(probe);
    const rt = await Promise.all(brokers.map((b) =>
      MQ.series(state.cluster, "probe_roundtrip_p50_ms", b.subject, w, "max")));
    MQ.chart("chart-probe", brokers.length ? brokers.map((b) => b.name) : ["no broker probed"],
      brokers.length ? MQ.align(rt) : [[], []], "ms", range);
  }
  if (!shown.has("panel-traffic")) return;
  const [traffic, groups] = await Promise.all([MQ.getJson(`${base}/traffic`), MQ.getJson(`${base}/groups`)]);

  MQ.renderTrafficWindows(traffic);
  const topics = Object.keys(traffic.topic_produce || {}).sort();
  MQ.syncOptions(document.getElementById("traffic-topic"), topics, [""]);
  if (state.topic && !topics.includes(state.topic)) state.topic = "";
  document.getElementById("traffic-topic").value = state.topic;
  document.getElementById("traffic-window").value = state.window;

  MQ.renderGroups(groups, state.group, (g) => select("group", g));
  if (!groups.some((g) => g.group === state.group)) state.group = groups[0]?.group || "";

  // Latency is per topic: the selected one, else the top of the ranking, else the first topic with traffic.
  const latencyTopic = state.topic || traffic.ranking?.[0]?.topic || topics[0] || "";
  const topicSubject = state.topic ? `topic ${state.topic}` : "";
  const [produced, backlog, age, ...latency] = await Promise.all([
    MQ.series(state.cluster, "produce_messages", topicSubject, w, "sum"),
    state.group ? MQ.series(state.cluster, "backlog", `group ${state.group}`, w, "max") : { x: [], y: [] },
    state.group ? MQ.series(state.cluster, "backlog_age_ms", `group ${state.group}`, w, "max") : { x: [], y: [] },
    ...LATENCY.map((p) => latencyTopic
      ? MQ.series(state.cluster, `produce_latency_${p}_ms`, `topic ${latencyTopic}`, w, "max")
      : { x: [], y: [] }),
  ]);
  MQ.chart("chart-traffic", [state.topic ? `${state.topic} messages` : "all topics, messages"],
    [produced.x, produced.y], "", range);
  document.getElementById("group-name").textContent = state.group;
  MQ.chart("chart-backlog", [`${state.group || "no group"} backlog`], [backlog.x, backlog.y], "", range);
  MQ.chart("chart-age", ["oldest unconsumed, s"], [age.x, age.y.map((v) => v / 1000)], "s", range);
  document.getElementById("latency-topic").textContent = latencyTopic ? `topic ${latencyTopic}` : "";
  MQ.chart("chart-latency", LATENCY, MQ.align(latency), "ms", range);
  document.getElementById("latency-empty").hidden = latency.some((s) => s.x.length);
}

async function refreshOnce() {
  const errorBox = document.getElementById("error");
  try {
    const [overview, findings] = await Promise.all([MQ.getJson("/api/v1/overview"), MQ.getJson("/api/v1/findings")]);
    MQ.overview = overview;
    document.getElementById("simulated").hidden = !overview.clusters.some((c) => c.simulated);
    MQ.renderEstate(overview, state.cluster, (c) => select("cluster", c));
    MQ.renderAlarms(overview);
    MQ.renderFindings(findings, overview.now_ms);
    await refreshCluster(overview);
    MQ.renderEstate(overview, state.cluster, (c) => select("cluster", c));
    writeHash();
    errorBox.hidden = true;
    document.getElementById("updated").textContent = `updated ${MQ.time(overview.now_ms)}`;
  } catch (e) {
    errorBox.textContent = e.message;
    errorBox.hidden = false;
  } finally {
    refreshes++;
    document.body.dataset.refreshes = String(refreshes);
  }
}

// Runs a refresh now, or once more right after the one in flight.
MQ.refresh = function () {
  if (running) {
    queued = true;
    return running;
  }
  running = refreshOnce().finally(() => {
    running = null;
    if (queued) {
      queued = false;
      MQ.refresh();
    }
  });
  return running;
};

document.addEventListener("DOMContentLoaded", () => {
  readHash();
  document.getElementById("cluster").addEventListener("change", (e) => select("cluster", e.target.value));
  document.getElementById("traffic-topic").addEventListener("change", (e) => select("topic", e.target.value));
  document.getElementById("traffic-window").addEventListener("change", (e) => select("window", e.target.value));
  MQ.refresh();
  setInterval(() => { if (!running) MQ.refresh(); }, 5000);
});
