// mqwatch dashboard: the read-only panels. Each `MQ.render*` takes what the API answered and fills its table or
// chart: the estate (/api/v1/overview), traffic windows and the 10-minute ranking (/clusters/{c}/traffic), series
// charts (/clusters/{c}/series), consumer groups (/clusters/{c}/groups), the durability audit
// (/clusters/{c}/durability), the nodes (/clusters/{c}/nodes: brokers, name servers, bookies), the end-to-end
// probe per broker (/clusters/{c}/probe) and current findings (/api/v1/findings).
"use strict";

const el = MQ.el;

// What each window selector value asks /series for.
MQ.WINDOWS = {
  minute: { resolution: "minute", span: 3600e3 },
  hour: { resolution: "hour", span: 86400e3 },
  day: { resolution: "day", span: 30 * 86400e3 },
};

MQ.series = async function (cluster, metric, subject, window, field) {
  const w = MQ.WINDOWS[window] || MQ.WINDOWS.minute;
  const to = Date.now() + 1;
  const q = new URLSearchParams({ metric, from: String(Math.floor(to - w.span)), to: String(to), resolution: w.resolution });
  if (subject) q.set("subject", subject);
  const rows = await MQ.getJson(`/api/v1/clusters/${encodeURIComponent(cluster)}/series?${q}`);
  if (subject) return MQ.seriesColumns(rows, field);
  // No subject: every subject's rows, summed per time (the cluster total).
  const sum = new Map();
  for (const r of rows) {
    const [x, y] = [(r.minute_ms ?? r.bucket_ms) / 1000, r.value ?? r[field || "sum"]];
    if (Number.isFinite(x) && Number.isFinite(y)) sum.set(x, (sum.get(x) || 0) + y);
  }
  const xs = [...sum.keys()].sort((a, b) => a - b);
  return { x: xs, y: xs.map((x) => sum.get(x)) };
};

MQ.renderEstate = function (overview, selected, onSelect) {
  const rows = overview.clusters.map((c) => {
    const lc = c.lifecycle || {};
    const pending = (p) => (p ? `${MQ.node(p.node)} for ${MQ.duration(p.pending_ms)}` : "none");
    const states = Object.entries(c.nodes_by_state || {})
      .map(([s, n]) => `${s.replace("_", " ")} ${n}`).join(", ") || "none";
    return el("tr", { class: c.name === selected ? "selected" : null, "data-cluster": c.name },
      el("td", {}, el("a", { href: "#", onclick: (e) => { e.preventDefault(); onSelect(c.name); } }, c.name),
        c.simulated ? MQ.badge("simulated", "simulated") : null),
      el("td", {}, c.engine || "–"),
      el("td", {}, MQ.badge(c.worst || "healthy", c.worst || "healthy")),
      el("td", {}, lc.degraded ? MQ.badge("degraded", "warning") : "no"),
      el("td", {}, states),
      el("td", { title: (c.not_answering || []).join("\n") }, String((c.not_answering || []).length)),
      el("td", { class: "pending-startup" }, pending(lc.longest_pending_startup)),
      el("td", { class: "pending-shutdown" }, pending(lc.longest_pending_controlled_shutdown)),
      el("td", {}, `${c.findings.critical} critical, ${c.findings.warning} warning, ${c.findings.info} info`));
  });
  MQ.fillTable("clusters", rows, "no cycle finished yet");
};

MQ.renderTrafficWindows = function (report) {
  const produce = report.topic_produce || {};
  const rows = Object.entries(produce)
    .sort((a, b) => b[1].day.sum - a[1].day.sum)
    .slice(0, 20)
    .map(([topic, s]) => el("tr", {},
      el("td", {}, topic), el("td", {}, MQ.num(s.minute.tps)), el("td", {}, MQ.num(s.hour.tps)),
      el("td", {}, MQ.num(s.day.tps)), el("td", {}, MQ.num(s.day.sum))));
  MQ.fillTable("traffic-windows", rows, "no traffic counted yet");
  const ranking = (report.ranking || []).map((r, i) => el("tr", {},
    el("td", {}, String(i + 1)), el("td", {}, r.topic), el("td", {}, MQ.num(r.messages)), el("td", {}, MQ.bytes(r.bytes))));
  MQ.fillTable("ranking", ranking, "no topic produced in the last 10-minute step");
};

// Keeps a <select>'s options equal to `values` (after its fixed first options), preserving the selection.
MQ.syncOptions = function (select, values, fixed) {
  const want = [...(fixed || []), ...values];
  const have = [...select.options].map((o) => o.value);
  if (want.length === have.length && want.every((v, i) => v === have[i])) return;
  const current = select.value;
  select.replaceChildren(...want.map((v) => el("option", { value: v }, v || "(cluster total)")));
  if (want.includes(current)) select.value = current;
};

MQ.renderGroups = function (rows, selected, onSelect) {
  const status = (s) => {
    if (!s) return MQ.badge("no status", "none");
    const text = typeof s.status === "string" ? s.status : s.message;
    return el("span", { title: s.message }, MQ.badge(text, s.severity));
  };
  MQ.fillTable("groups", rows.map((g) => el("tr", { class: g.group === selected ? "selected" : null },
    el("td", {}, el("a", { href: "#", onclick: (e) => { e.preventDefault(); onSelect(g.group); } }, g.group)),
    el("td", {}, status(g.status), g.backlog_finding ? MQ.badge("backlog", "warning") : null),
    el("td", {}, MQ.num(g.backlog)),
    el("td", {}, MQ.duration(g.oldest_unconsumed_age_ms)),
    el("td", {}, String(g.logs)), el("td", {}, String(g.logs_without_commit)),
    el("td", {}, String(g.clients)))), "no consumer groups");
};

MQ.renderDurability = function (view) {
  const counts = view.ledger_counts;
  document.getElementById("durability-summary").textContent = counts
    ? `${MQ.num(counts.ledgers)} ledgers, ${MQ.num(counts.healthy)} healthy, ` +
      `${MQ.num(view.unavailable_ledgers || 0)} not fully checked`
    : view.partitions ? `${MQ.num(view.partitions)} partitions` : "";
  const rows = view.categories.map((c) => el("tr", { class: c.count ? "violating" : null },
    el("td", {}, c.kind.replaceAll("_", " ")),
    el("td", {}, c.count ? MQ.badge(String(c.count), c.violations[0]?.severity || "warning") : "0"),
    el("td", {}, c.violations.length
      ? el("details", {}, el("summary", {}, c.violations.slice(0, 3).map((v) => v.subject).join(", ") +
          (c.count > 3 ? ", …" : "")),
        el("ul", {}, c.violations.map((v) => el("li", {}, el("b", {}, v.subject), " ", v.message))))
      : "")));
  MQ.fillTable("durability", rows);
};

MQ.renderNodes = function (rows, engine, now) {
  document.getElementById("nodes-title").textContent = engine === "bookkeeper" ? "Bookies" : "Nodes";
  MQ.fillTable("nodes", rows.map((n) => el("tr", { class: n.answered ? null : "violating", "data-node": n.name },
    el("td", {}, `${n.role.replace("_", " ")} ${n.name}`, n.replica_of ? el("span", { class: "muted" }, ` (replica of ${n.replica_of})`) : null),
    el("td", {}, n.addr || ""),
    el("td", {}, n.rack || ""),
    el("td", {}, n.state ? `${n.state.replaceAll("_", " ")} for ${MQ.duration(n.ms_in_state)}` : (n.registration || "–")),
    el("td", {}, n.answered ? MQ.badge("yes", "healthy") : MQ.badge("no", "critical")),
    el("td", {}, MQ.ago(n.last_answer_ms, now)),
    el("td", {}, n.error || ""))), "no nodes seen");
};

// The probe view: one row per broker; returns the brokers' series subjects (for the round-trip chart).
MQ.renderProbe = function (view) {
  const ms = (a, b) => `${MQ.num(a)} / ${MQ.num(b)} ms`;
  document.getElementById("probe-summary").textContent = view.running
    ? `topic ${view.topic}, a message every ${MQ.duration(view.interval_ms)} per broker, ` +
      `lost after ${MQ.duration(view.sla_ms)}; last ${MQ.duration(view.window_ms)}` +
      (view.discovery_error ? `; brokers not listed: ${view.discovery_error}` : "")
    : "";
  const rows = view.brokers.map((b) => el("tr", { class: b.lost ? "violating" : null, "data-broker": b.broker.name },
    el("td", {}, b.broker.name), el("td", {}, b.broker.addr || ""),
    el("td", {}, MQ.num(b.sent)), el("td", {}, MQ.num(b.delivered)),
    el("td", {}, b.lost ? MQ.badge(`${b.lost}${b.send_failures ? ` (${b.send_failures} sends failed)` : ""}`, "critical") : "0"),
    el("td", {}, ms(b.produce_p50_ms, b.produce_p99_ms)),
    el("td", {}, ms(b.roundtrip_p50_ms, b.roundtrip_p99_ms)),
    el("td", {}, b.last_error || "")));
  MQ.fillTable("probe", rows, view.running
    ? "no probe message judged yet"
    : "the probe is off for this cluster ([cluster.probe] enabled = true turns it on)");
  return view.brokers.map((b) => ({ name: b.broker.name, subject: b.subject }));
};

MQ.renderFindings = function (findings, now) {
  const order = { critical: 0, warning: 1, info: 2 };
  const rows = [...findings]
    .sort((a, b) => order[a.severity] - order[b.severity] || a.kind.localeCompare(b.kind))
    .map((f) => el("tr", {},
      el("td", {}, MQ.badge(f.severity, f.severity)), el("td", {}, f.kind), el("td", {}, f.cluster),
      el("td", {}, MQ.subject(f.subject)), el("td", {}, MQ.ago(f.first_seen_ms, now)), el("td", {}, f.message)));
  MQ.fillTable("findings", rows, "no findings: healthy");
};
