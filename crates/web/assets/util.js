// mqwatch dashboard: shared helpers. Owns the `MQ` namespace every other script adds to: JSON fetching, an
// element builder that only ever sets text (never HTML, so names from a cluster cannot inject markup), and the
// formatting of numbers, durations, times and subjects.
"use strict";

const MQ = (window.MQ = window.MQ || {});

// Reads send the typed token too, so a server with `[server] read_token` can be read with it.
MQ.getJson = async function (path) {
  const headers = { Accept: "application/json" };
  const token = document.getElementById("token")?.value.trim();
  if (token) headers.Authorization = `Bearer ${token}`;
  const r = await fetch(path, { headers });
  if (!r.ok) {
    throw new Error(`${path}: ${r.status} ${(await r.text()).trim()}`);
  }
  return r.json();
};

// el("td", {class: "x", title: "t"}, "text", childNode, …)
MQ.el = function (tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
};

// Replaces a table body's rows; `empty` is shown in one cell when there are none.
MQ.fillTable = function (id, rows, empty) {
  const body = document.querySelector(`#${id} tbody`);
  const cols = document.querySelectorAll(`#${id} thead th`).length || 1;
  body.replaceChildren(
    ...(rows.length ? rows : [MQ.el("tr", { class: "empty" }, MQ.el("td", { colspan: cols }, empty || "none"))])
  );
};

MQ.num = function (n) {
  if (n === null || n === undefined) return "–";
  if (typeof n !== "number") return String(n);
  if (Math.abs(n) >= 1e9) return (n / 1e9).toFixed(1) + " G";
  if (Math.abs(n) >= 1e6) return (n / 1e6).toFixed(1) + " M";
  if (Math.abs(n) >= 1e4) return (n / 1e3).toFixed(1) + " k";
  return Number.isInteger(n) ? String(n) : n.toFixed(2);
};

MQ.bytes = function (n) {
  if (n === null || n === undefined) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return (i ? n.toFixed(1) : String(n)) + " " + units[i];
};

MQ.duration = function (ms) {
  if (ms === null || ms === undefined) return "–";
  const s = Math.round(ms / 1000);
  if (s < 60) return s + " s";
  if (s < 3600) return Math.floor(s / 60) + " min " + (s % 60) + " s";
  if (s < 86400) return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
  return Math.floor(s / 86400) + " d " + Math.floor((s % 86400) / 3600) + " h";
};

MQ.time = function (ms) {
  if (!ms) return "–";
  return new Date(ms).toISOString().replace("T", " ").slice(0, 19) + " UTC";
};

MQ.ago = function (ms, now) {
  if (!ms) return "–";
  return MQ.duration(Math.max(0, (now || Date.now()) - ms)) + " ago";
};

MQ.badge = function (text, kind) {
  return MQ.el("span", { class: `badge ${kind || text || "none"}` }, text || "–");
};

// A node reference as the API writes it ({role, name, addr?}).
MQ.node = function (n) {
  if (!n) return "–";
  return `${n.role || "node"} ${n.name}`;
};

// The display form of a finding's subject (as alarm keys and silences spell it).
MQ.subject = function (s) {
  if (!s || typeof s !== "object") return String(s || "");
  switch (s.type) {
    case "cluster": return "cluster";
    case "node": return MQ.node(s.node);
    case "topic": return `topic ${s.topic}`;
    case "group": return `group ${s.group.name}${s.topic ? " topic " + s.topic : ""}`;
    case "client": return `client ${s.client_id}`;
    case "log": {
      const l = s.log || {};
      if (l.type === "ledger") return `ledger ${l.id}`;
      if (l.type === "partition") return `partition ${l.topic}-${l.partition}`;
      if (l.type === "queue") return `queue ${l.topic}@${l.broker}#${l.queue_id}`;
      return JSON.stringify(l);
    }
    default: return JSON.stringify(s);
  }
};
