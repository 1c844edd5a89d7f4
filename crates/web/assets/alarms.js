// mqwatch dashboard: alarms and silences. Renders the alarms of /api/v1/overview (each marked "acknowledged #id"
// or "silenced #id" when an active silence mutes it: an acknowledgement is the server's silence of exactly that
// alarm, commented "acknowledged <key>") and the active silences; acknowledges a pending or firing alarm
// (POST /api/v1/alarms/{key}/ack, 24 h), silences an alarm (POST /api/v1/silences, matching its kind, cluster and
// subject exactly, for the chosen duration) and deletes a silence (DELETE /api/v1/silences/{id}), each with the
// bearer token typed into the token field. The token is kept in this tab's sessionStorage only.
"use strict";

MQ.token = function () {
  return document.getElementById("token").value.trim();
};

MQ.say = function (text, isError) {
  const s = document.getElementById("silence-status");
  s.textContent = text;
  s.className = isError ? "error" : "muted";
};

async function write(method, path, body) {
  const token = MQ.token();
  if (!token) throw new Error("type the [server] token first");
  const r = await fetch(path, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!r.ok) throw new Error(`${r.status}: ${(await r.text()).trim()}`);
  return r.status === 204 ? null : r.json();
}

MQ.silence = async function (alarm) {
  const duration = document.getElementById("silence-duration").value;
  try {
    const s = await write("POST", "/api/v1/silences", {
      kind: alarm.kind,
      cluster: alarm.cluster,
      subject: alarm.subject,
      duration,
      created_by: "dashboard",
      comment: `silenced from the dashboard: ${alarm.message}`,
    });
    MQ.say(`silence #${s.id} added for ${duration}`);
  } catch (e) {
    MQ.say(`silencing failed: ${e.message}`, true);
  }
  MQ.refresh();
};

MQ.ack = async function (alarm) {
  try {
    const s = await write("POST", `/api/v1/alarms/${encodeURIComponent(alarm.key)}/ack`, { by: "dashboard" });
    MQ.say(`${alarm.key} acknowledged (silence #${s.id}, until ${MQ.time(s.expires_ms)})`);
  } catch (e) {
    MQ.say(`acknowledging failed: ${e.message}`, true);
  }
  MQ.refresh();
};

MQ.unsilence = async function (id) {
  try {
    await write("DELETE", `/api/v1/silences/${id}`);
    MQ.say(`silence #${id} deleted`);
  } catch (e) {
    MQ.say(`deleting silence #${id} failed: ${e.message}`, true);
  }
  MQ.refresh();
};

MQ.renderAlarms = function (overview) {
  const el = MQ.el;
  const showResolved = document.getElementById("show-resolved").checked;
  const order = { firing: 0, pending: 1, resolved: 2 };
  const alarms = overview.alarms
    .filter((a) => showResolved || a.state !== "resolved")
    .sort((a, b) => order[a.state] - order[b.state] || b.since_ms - a.since_ms);
  const acks = new Set(overview.silences.filter((s) => (s.comment || "").startsWith("acknowledged ")).map((s) => s.id));
  const muted = (id) => acks.has(id)
    ? MQ.badge(`acknowledged #${id}`, "silenced acknowledged")
    : MQ.badge(`silenced #${id}`, "silenced");
  const rows = alarms.map((a) => el("tr", { class: `alarm ${a.state}${a.silenced_by ? " silenced" : ""}`, "data-key": a.key },
    el("td", {}, MQ.badge(a.state, a.state)),
    el("td", {}, MQ.badge(a.severity, a.severity)),
    el("td", {}, a.kind), el("td", {}, a.cluster), el("td", {}, a.subject),
    el("td", {}, MQ.ago(a.since_ms, overview.now_ms)),
    el("td", {}, a.message),
    el("td", {}, a.silenced_by
      ? muted(a.silenced_by)
      : a.state === "resolved" ? "" : [
        el("button", { class: "ack", title: "acknowledge: mute exactly this alarm for 24 h", onclick: () => MQ.ack(a) }, "ack"),
        " ",
        el("button", { class: "silence", onclick: () => MQ.silence(a) }, "silence"),
      ])));
  MQ.fillTable("alarms", rows, "no alarms");

  const matcher = (m) => [m.kind, m.cluster, m.subject].filter(Boolean).join(" / ") || "everything";
  MQ.fillTable("silences", overview.silences.map((s) => el("tr", { "data-silence": s.id },
    el("td", {}, `#${s.id}`), el("td", {}, matcher(s.matcher)),
    el("td", {}, `${MQ.time(s.expires_ms)} (in ${MQ.duration(s.expires_ms - overview.now_ms)})`),
    el("td", {}, s.created_by), el("td", {}, s.comment),
    el("td", {}, el("button", { onclick: () => MQ.unsilence(s.id) }, "delete")))), "no active silences");

  const token = document.getElementById("token");
  token.disabled = !overview.writes;
  token.placeholder = overview.writes ? "[server] token" : "writes are off: no [server] token configured";
};

document.addEventListener("DOMContentLoaded", () => {
  const token = document.getElementById("token");
  token.value = sessionStorage.getItem("mqwatch-token") || "";
  token.addEventListener("change", () => sessionStorage.setItem("mqwatch-token", token.value.trim()));
  document.getElementById("show-resolved").addEventListener("change", () => MQ.refresh());
});
