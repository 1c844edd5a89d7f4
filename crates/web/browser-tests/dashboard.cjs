// Drives the mqwatch dashboard in headless Chromium (Debian's /usr/bin/chromium through playwright-core) and
// reports what it saw as one JSON line "RESULT {…}". Run by the Rust tests (mqwatch-testkit::browser) with one
// JSON argument:
//   url          the dashboard (mqwatch serve or demo)
//   out          directory for screenshots
//   name         screenshot name prefix
//   charts       chart container ids that must show data points (uPlot data length > 0, series pixels drawn)
//   alarmKind    an alarm of this finding kind ("*": any) must show in the alarms table; it is then silenced
//                through the UI (token typed, "silence" clicked) and must show as silenced
//   ack          when true, another pending or firing alarm is then acknowledged through the UI ("ack" clicked)
//                and must show as "acknowledged #id"
//   probe        when true, the end-to-end probe panel must list brokers with delivered messages
//   token        the [server] token to type
//   simulated    whether the "simulated" label must be visible
//   clusters     then, for each {name, visible: [panel ids], hidden: [panel ids], charts: [chart ids], nodes: n}:
//                the cluster is picked in the cluster selector; the panels must be shown / hidden as listed, the
//                charts must show data points, and the nodes table must list at least n nodes
//   deadlineMs   how long to wait for each of these
// Exits non-zero (with the reason on stderr) when an expectation is not met.
"use strict";

const { chromium } = require("playwright-core");
const path = require("path");

const cfg = JSON.parse(process.argv[2]);
const deadline = cfg.deadlineMs || 60000;

async function until(what, page, probe) {
  const start = Date.now();
  let last;
  for (;;) {
    last = await page.evaluate(probe.fn, probe.arg);
    if (last && last.ok) return last;
    if (Date.now() - start > deadline) {
      throw new Error(`timed out after ${deadline} ms waiting for ${what}; last: ${JSON.stringify(last)}`);
    }
    await page.waitForTimeout(250);
  }
}

// In the page: a chart's point count and how many canvas pixels carry its first series' colour.
function chartProbe(id) {
  const u = window.MQ && MQ.charts[id];
  if (!u) return { ok: false, why: "no chart yet" };
  const points = u.data[0].length;
  const values = u.data.slice(1).flat().filter((v) => v !== null && v !== undefined).length;
  const canvas = document.querySelector(`#${id} canvas`);
  const px = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  const [r, g, b] = [0x2f, 0x6f, 0xdf];
  let coloured = 0, painted = 0;
  for (let i = 0; i < px.length; i += 4) {
    if (px[i + 3] > 0) painted++;
    if (px[i + 3] > 128 && Math.abs(px[i] - r) < 40 && Math.abs(px[i + 1] - g) < 40 && Math.abs(px[i + 2] - b) < 40) coloured++;
  }
  return { ok: points > 0 && values > 0 && coloured > 0, points, values, coloured, painted };
}

function alarmProbe(kind) {
  const rows = [...document.querySelectorAll("#alarms tr.alarm")]
    .filter((tr) => (kind === "*" || tr.children[2].textContent === kind) &&
      !tr.classList.contains("resolved") && !tr.classList.contains("silenced"));
  if (!rows.length) return { ok: false, alarms: document.querySelector("#alarms tbody").textContent };
  const tr = rows[0];
  return {
    ok: true, key: tr.dataset.key, silenced: tr.classList.contains("silenced"),
    text: tr.textContent, kind: tr.children[2].textContent, subject: tr.children[4].textContent,
    cluster: tr.children[3].textContent,
  };
}

function ackableProbe(silencedKey) {
  const tr = [...document.querySelectorAll("#alarms tr.alarm")].find((t) => t.dataset.key !== silencedKey &&
    !t.classList.contains("resolved") && !t.classList.contains("silenced") && t.querySelector("button.ack"));
  if (!tr) return { ok: false, alarms: document.querySelector("#alarms tbody").textContent };
  return { ok: true, key: tr.dataset.key, kind: tr.children[2].textContent, cluster: tr.children[3].textContent,
    subject: tr.children[4].textContent };
}

function ackedProbe(key) {
  const tr = [...document.querySelectorAll("#alarms tr.alarm")].find((t) => t.dataset.key === key);
  const badge = tr && tr.querySelector(".badge.acknowledged");
  return { ok: !!badge, badge: badge && badge.textContent,
    status: document.getElementById("silence-status").textContent };
}

function probeProbe() {
  const rows = [...document.querySelectorAll("#probe tbody tr[data-broker]")].map((tr) => ({
    broker: tr.dataset.broker, sent: Number(tr.children[2].textContent), delivered: Number(tr.children[3].textContent),
    roundtrip: tr.children[6].textContent,
  }));
  const visible = document.getElementById("panel-probe").offsetParent !== null;
  return { ok: visible && rows.length > 0 && rows.some((r) => r.delivered > 0), visible, rows,
    summary: document.getElementById("probe-summary").textContent };
}

function panelsProbe(want) {
  const shown = (id) => document.getElementById(id).offsetParent !== null;
  const wrong = [...want.visible.filter((id) => !shown(id)).map((id) => `${id} hidden`),
    ...want.hidden.filter(shown).map((id) => `${id} shown`)];
  const nodes = document.querySelectorAll("#nodes tbody tr[data-node]").length;
  // Two refreshes after the pick: the one in flight then (if any) read the cluster picked before.
  const refreshed = Number(document.body.dataset.refreshes || 0) >= want.after + 2;
  return { ok: refreshed && document.getElementById("cluster").value === want.name && !wrong.length &&
    nodes >= (want.nodes || 0), wrong, nodes, title: document.getElementById("nodes-title").textContent };
}

function silencedProbe(key) {
  const tr = [...document.querySelectorAll("#alarms tr.alarm")].find((t) => t.dataset.key === key);
  const badge = tr && tr.querySelector(".badge.silenced");
  const silences = [...document.querySelectorAll("#silences tr[data-silence]")].map((t) => t.dataset.silence);
  return {
    ok: !!badge && silences.length > 0, badge: badge && badge.textContent, silences,
    status: document.getElementById("silence-status").textContent,
  };
}

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.MQWATCH_CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  const result = { charts: {}, errors: [] };
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    page.on("pageerror", (e) => result.errors.push(`pageerror: ${e.message}`));
    page.on("console", (m) => { if (m.type() === "error") result.errors.push(`console: ${m.text()}`); });
    page.on("response", (r) => { if (r.status() >= 400) result.errors.push(`HTTP ${r.status()} for ${r.url()}`); });
    await page.goto(cfg.url, { waitUntil: "load" });
    await until("a first refresh", page, { fn: () => ({ ok: Number(document.body.dataset.refreshes || 0) > 0 }) });

    for (const id of cfg.charts || []) {
      result.charts[id] = await until(`chart ${id} to show data`, page, { fn: chartProbe, arg: id });
    }
    result.simulatedLabel = await page.evaluate(() => document.getElementById("simulated").offsetParent !== null);
    if (cfg.simulated !== undefined && result.simulatedLabel !== cfg.simulated) {
      throw new Error(`simulated label visible: ${result.simulatedLabel}, expected ${cfg.simulated}`);
    }
    result.estate = await page.evaluate(() => document.querySelector("#clusters tbody").innerText);

    if (cfg.alarmKind) {
      const alarm = await until(`an alarm of kind ${cfg.alarmKind}`, page, { fn: alarmProbe, arg: cfg.alarmKind });
      result.alarm = alarm;
      await page.screenshot({ path: path.join(cfg.out, `${cfg.name}.png`), fullPage: true });
      await page.fill("#token", cfg.token);
      await page.dispatchEvent("#token", "change");
      await page.click(`#alarms tr.alarm[data-key="${alarm.key.replace(/"/g, '\\"')}"] button.silence`);
      result.silenced = await until("the alarm to show as silenced", page, { fn: silencedProbe, arg: alarm.key });
      await page.screenshot({ path: path.join(cfg.out, `${cfg.name}-silenced.png`), fullPage: true });
      if (cfg.ack) {
        const other = await until("another alarm to acknowledge", page, { fn: ackableProbe, arg: alarm.key });
        result.ackAlarm = other;
        await page.click(`#alarms tr.alarm[data-key="${other.key.replace(/"/g, '\\"')}"] button.ack`);
        result.acked = await until("the alarm to show as acknowledged", page, { fn: ackedProbe, arg: other.key });
      }
    } else {
      await page.screenshot({ path: path.join(cfg.out, `${cfg.name}.png`), fullPage: true });
    }
    if (cfg.probe) {
      result.probe = await until("the probe panel to list brokers", page, { fn: probeProbe });
    }
    result.clusters = {};
    for (const want of cfg.clusters || []) {
      const after = await page.evaluate(() => Number(document.body.dataset.refreshes || 0));
      await page.selectOption("#cluster", want.name);
      const seen = { visible: [], hidden: [], nodes: 0, ...want, after };
      const r = await until(`cluster ${want.name}'s panels`, page, { fn: panelsProbe, arg: seen });
      r.charts = {};
      for (const id of want.charts || []) {
        r.charts[id] = await until(`chart ${id} of ${want.name} to show data`, page, { fn: chartProbe, arg: id });
      }
      result.clusters[want.name] = r;
      await page.screenshot({ path: path.join(cfg.out, `${cfg.name}-${want.name}.png`), fullPage: true });
    }
    if (result.errors.length) throw new Error(`the page logged errors: ${result.errors.join("; ")}`);
    console.log("RESULT " + JSON.stringify(result));
  } catch (e) {
    console.log("PARTIAL " + JSON.stringify(result));
    console.error(e.stack || String(e));
    process.exitCode = 1;
  } finally {
    await browser.close();
  }
})();
