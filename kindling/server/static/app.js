// kindling dashboard: jobs list and job pages, drawn from the job manager's REST API.
"use strict";

const COLORS = ["#2b6cb0", "#dd6b20", "#2f8132", "#805ad5"];
let timer = null;

async function api(path, options) {
  const response = await fetch(path, options);
  const text = await response.text();
  const body = text ? JSON.parse(text) : null;
  if (!response.ok) throw new Error((body && body.errors || [response.statusText]).join("; "));
  return body;
}

function escapeHtml(value) {
  return String(value).replace(/[&<>"']/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
}

function time(ms) { return ms > 0 ? new Date(ms).toLocaleString() : "-"; }

function duration(ms) {
  const s = Math.floor(ms / 1000);
  return s >= 3600 ? `${Math.floor(s / 3600)}h ${Math.floor(s % 3600 / 60)}m` : s >= 60 ? `${Math.floor(s / 60)}m ${s % 60}s` : `${s}s`;
}

function number(value) {
  if (value === null || value === undefined || isNaN(value)) return "-";
  return Math.abs(value) >= 1000 ? Math.round(value).toLocaleString() : (Math.round(value * 10) / 10).toString();
}

// A line plot of series [{name, points: [[x, y], ...]}] into an <svg class="plot">.
function plot(svg, series, unit) {
  const width = 420, height = 160, left = 48, bottom = 18, top = 8, right = 8;
  const all = series.flatMap(s => s.points);
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  if (!all.length) {
    svg.innerHTML = `<text class="label" x="${width / 2 - 30}" y="${height / 2}">no data yet</text>`;
    return;
  }
  const xs = all.map(p => p[0]), ys = all.map(p => p[1]);
  const x0 = Math.min(...xs), x1 = Math.max(...xs, x0 + 1);
  const y0 = Math.min(0, ...ys), y1 = Math.max(...ys, y0 + 1);
  const sx = x => left + (x - x0) / (x1 - x0) * (width - left - right);
  const sy = y => height - bottom - (y - y0) / (y1 - y0) * (height - top - bottom);
  let html = `<line class="axis" x1="${left}" y1="${height - bottom}" x2="${width - right}" y2="${height - bottom}"/>`;
  html += `<line class="axis" x1="${left}" y1="${top}" x2="${left}" y2="${height - bottom}"/>`;
  html += `<text class="label" x="2" y="${top + 8}">${number(y1)}${unit}</text>`;
  html += `<text class="label" x="2" y="${height - bottom}">${number(y0)}${unit}</text>`;
  html += `<text class="label" x="${left}" y="${height - 4}">${new Date(x0).toLocaleTimeString()}</text>`;
  html += `<text class="label" x="${width - right - 60}" y="${height - 4}">${new Date(x1).toLocaleTimeString()}</text>`;
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const path = s.points.map(p => `${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join(" ");
    html += `<polyline class="line" stroke="${color}" points="${path}"><title>${escapeHtml(s.name)}</title></polyline>`;
    for (const p of s.points) {
      html += `<circle class="point" r="2" fill="${color}" cx="${sx(p[0]).toFixed(1)}" cy="${sy(p[1]).toFixed(1)}"><title>${escapeHtml(s.name)}: ${number(p[1])}${unit}</title></circle>`;
    }
  });
  svg.innerHTML = html;
}

// A horizontal bar chart of [{label, value}] into an <svg class="bars">: a sink's totals per key, as Kibana charts an index.
function bars(svg, items, unit) {
  const width = 420, row = 20, left = 120, right = 70, top = 4;
  const height = top * 2 + row * Math.max(items.length, 1);
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  if (!items.length) {
    svg.innerHTML = `<text class="label" x="${left}" y="${top + 14}">no documents yet</text>`;
    return;
  }
  const max = Math.max(...items.map(i => Math.abs(i.value)), 1e-9);
  svg.innerHTML = items.map((item, n) => {
    const y = top + n * row, w = Math.abs(item.value) / max * (width - left - right);
    return `<text class="label" x="2" y="${y + 14}">${escapeHtml(item.label).slice(0, 18)}</text>
      <rect class="bar" data-label="${escapeHtml(item.label)}" data-value="${item.value}" x="${left}" y="${y + 3}" width="${w.toFixed(1)}" height="${row - 6}"
        fill="${COLORS[0]}"><title>${escapeHtml(item.label)}: ${item.value}${unit}</title></rect>
      <text class="label" x="${(left + w + 4).toFixed(1)}" y="${y + 14}">${number(item.value)}${unit}</text>`;
  }).join("");
}

// What a sink's rows chart as: the key columns (or the first text column) as labels, the first numeric other column as values.
function chartOf(sink) {
  const columns = sink.columns, rows = sink.rows;
  let keys = sink.key.filter(k => columns.includes(k));
  if (!keys.length) keys = columns.filter((c, i) => rows.some(r => typeof r[i] === "string")).slice(0, 1);
  const valueIndex = columns.findIndex((c, i) => !keys.includes(c) && rows.length && rows.every(r => r[i] === null || typeof r[i] === "number"));
  if (valueIndex < 0) return null;
  const keyIndexes = keys.map(k => columns.indexOf(k));
  const items = rows.filter(r => r[valueIndex] !== null)
    .map(r => ({label: keyIndexes.map(i => String(r[i])).join(", "), value: r[valueIndex]}))
    .sort((a, b) => a.label < b.label ? -1 : a.label > b.label ? 1 : 0);
  return {column: columns[valueIndex], keys, items};
}

function sinkContentsHtml(contents) {
  if (!contents.sinks.length) {
    return '<p class="muted">No sink of this job can be read back here (Elasticsearch and OpenSearch indices can).</p>';
  }
  const when = `read ${time(contents.timestamp)}` + (contents.stale ? " (the job is not running: as last read)" : "");
  return contents.sinks.map((sink, n) => {
    if (sink.error) return `<div class="sink"><h3>${escapeHtml(sink.name)}</h3><p>Cannot read the sink: ${escapeHtml(sink.error)}</p></div>`;
    const chart = chartOf(sink);
    const head = sink.columns.map(c => `<th>${escapeHtml(c)}</th>`).join("");
    const body = sink.rows.slice(0, 20).map(r => `<tr>${r.map(v => `<td>${escapeHtml(v === null ? "NULL" : v)}</td>`).join("")}</tr>`).join("");
    return `<div class="sink" data-uid="${escapeHtml(sink.uid)}"><h3>${escapeHtml(sink.name)} · ${escapeHtml(sink.location)}</h3>
      <p class="muted">${number(sink.total)} documents${sink.rows.length < sink.total ? ` (first ${sink.rows.length} shown)` : ""} · ${when}</p>
      ${chart ? `<div class="plot-box"><h3>${escapeHtml(chart.column)} by ${escapeHtml(chart.keys.join(", ") || "document")}</h3><svg class="bars" id="sink-chart-${n}"></svg></div>` : ""}
      <table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table></div>`;
  }).join("");
}

let contentsInFlight = false;

// Sink contents come from the job's driver (a search of the index), so they load beside the page, one request at a time.
async function showSinkContents(jid) {
  if (contentsInFlight) return;
  contentsInFlight = true;
  try {
    const contents = await api(`/kindling/jobs/${jid}/sink-contents?limit=50`);
    const page = document.getElementById("job-page");
    if (!page || page.dataset.jid !== jid) return;
    document.getElementById("sink-contents").innerHTML = sinkContentsHtml(contents);
    contents.sinks.forEach((sink, n) => {
      const svg = document.getElementById(`sink-chart-${n}`);
      if (svg) bars(svg, chartOf(sink).items, "");
    });
  } catch (error) {
    const box = document.getElementById("sink-contents");
    if (box) box.innerHTML = `<p class="muted">Cannot read the sinks: ${escapeHtml(error.message)}</p>`;
  } finally {
    contentsInFlight = false;
  }
}

async function showCluster() {
  const o = await api("/overview");
  document.getElementById("cluster").textContent =
    `${o["flink-version"]} · task managers ${o.taskmanagers} · running ${o["jobs-running"]} · finished ${o["jobs-finished"]} · canceled ${o["jobs-cancelled"]} · failed ${o["jobs-failed"]}`;
}

async function showJobs(view) {
  const jobs = (await api("/jobs/overview")).jobs;
  const rates = {};
  await Promise.all(jobs.map(async job => {
    const m = await api(`/jobs/${job.jid}/metrics?get=numRecordsInPerSecond`);
    rates[job.jid] = m.length ? Number(m[0].value) : null;
  }));
  const rows = jobs.map(job => `<tr class="job-row" data-jid="${job.jid}">
      <td><a class="job-link" href="#/job/${job.jid}">${escapeHtml(job.name)}</a><div class="muted">${job.jid}</div></td>
      <td><span class="state ${job.state}">${job.state}</span></td>
      <td>${time(job["start-time"])}</td><td>${duration(job.duration)}</td>
      <td class="throughput">${number(rates[job.jid])}</td></tr>`).join("");
  const managers = (await api("/taskmanagers")).taskmanagers;
  const names = Object.fromEntries(jobs.map(job => [job.jid, job.name]));
  const managerRows = managers.map(tm => `<tr class="tm-row" data-kind="${escapeHtml(tm.kind || "")}">
      <td>${escapeHtml(tm.kind === "executor" ? "Spark executor" : "Spark driver")}</td><td>${escapeHtml(tm.id)}</td>
      <td>${escapeHtml(names[tm.jobId] || tm.jobId || "")}</td><td>${tm.slotsNumber}</td><td>${tm.slotsNumber - tm.freeSlots}</td>
      <td>${duration(tm.timeSinceLastHeartbeat)}</td></tr>`).join("");
  view.innerHTML = `<h1>Jobs</h1>
    <table id="jobs"><thead><tr><th>Job</th><th>State</th><th>Started</th><th>Duration</th><th>Records in/s</th></tr></thead>
    <tbody>${rows || '<tr><td colspan="5" class="muted">No jobs yet: submit one with "kindling run -d pipeline.py".</td></tr>'}</tbody></table>
    <h2>Task managers</h2>
    <table id="taskmanagers"><thead><tr><th>Kind</th><th>Id</th><th>Job</th><th>Slots</th><th>Busy</th><th>Last heartbeat</th></tr></thead>
    <tbody>${managerRows || '<tr><td colspan="6" class="muted">None: no job is running.</td></tr>'}</tbody></table>`;
}

async function act(jid, action) {
  const message = document.getElementById("message");
  message.textContent = `${action}…`;
  try {
    let request, path;
    if (action === "cancel") {
      await api(`/jobs/${jid}?mode=cancel`, {method: "PATCH"});
      message.textContent = "Cancelled.";
      return;
    }
    if (action === "stop") {
      request = await api(`/jobs/${jid}/stop`, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({drain: false})});
    } else {
      request = await api(`/jobs/${jid}/savepoints`, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({"cancel-job": false})});
    }
    path = `/jobs/${jid}/savepoints/${request["request-id"]}`;
    for (;;) {
      const status = await api(path);
      if (status.status.id === "COMPLETED") {
        const op = status.operation || {};
        message.textContent = op["failure-cause"] ? `Failed: ${op["failure-cause"]["stack-trace"]}` : `Savepoint completed: ${op.location}`;
        return;
      }
      await new Promise(resolve => setTimeout(resolve, 1000));
    }
  } catch (error) {
    message.textContent = `Failed: ${error.message}`;
  }
}

function seriesOf(timeline, value) {
  return Object.entries(timeline.queries).map(([uid, q]) => ({
    name: q.name,
    points: q.points.filter(p => p.timestamp && value(p) !== null && value(p) !== undefined).map(p => [p.timestamp, value(p)]),
  }));
}

function reconciliationHtml(r) {
  if (r.status === "NONE") return '<p class="muted">Not reconciled yet.</p>';
  if (r.status === "RUNNING") return `<p class="muted">Running since ${time(r["start-time"])}…</p>`;
  if (r.status === "FAILED") return `<p><b>FAILED</b> ${time(r["end-time"])}: ${escapeHtml(r.error || "")}</p>`;
  const report = r.report;
  const rows = report.sinks.map(s => `<tr><td>${escapeHtml(s.sink)}</td><td>${s.result}</td><td>${s.batch_id}</td><td>${number(s.matched)}</td>
    <td>${number(s.missing.length)}</td><td>${number(s.extra.length)}</td><td>${number(s.differing.length)}</td><td>${number(s.dropped_late.count)}</td>
    <td>${number(s.open_windows)}</td></tr>`).join("");
  return `<p><b>${report.result}</b> · ${time(r["end-time"])} · ${report.seconds} s</p>
    <table><thead><tr><th>Sink</th><th>Result</th><th>Micro-batch</th><th>Matched</th><th>Missing</th><th>Extra</th><th>Differing</th>
    <th>Dropped late</th><th>Open windows</th></tr></thead><tbody>${rows}</tbody></table>`;
}

async function showJob(view, jid) {
  const [job, timeline, checkpoints, exceptions, checkpointConfig, reconciliation] = await Promise.all([
    api(`/jobs/${jid}`), api(`/kindling/jobs/${jid}/timeline`), api(`/jobs/${jid}/checkpoints`), api(`/jobs/${jid}/exceptions`),
    api(`/jobs/${jid}/checkpoints/config`), api(`/kindling/jobs/${jid}/reconciliation`),
  ]);
  if (!document.getElementById("job-page") || document.getElementById("job-page").dataset.jid !== jid) {
    view.innerHTML = `<div id="job-page" data-jid="${jid}">
      <h1><span id="job-name"></span> <span id="job-state" class="state"></span></h1>
      <div class="muted" id="job-meta"></div>
      <p><button id="btn-savepoint">Trigger savepoint</button><button id="btn-stop">Stop with savepoint</button><button id="btn-cancel" class="danger">Cancel</button><button id="btn-reconcile">Reconcile</button></p>
      <div id="message" class="muted"></div>
      <div class="plots">
        <div class="plot-box"><h3>Records per second (in, out)</h3><svg class="plot" id="plot-throughput"></svg></div>
        <div class="plot-box"><h3>Source lag (records)</h3><svg class="plot" id="plot-lag"></svg></div>
        <div class="plot-box"><h3>Watermark delay</h3><svg class="plot" id="plot-watermark"></svg></div>
        <div class="plot-box"><h3>Batch duration</h3><svg class="plot" id="plot-duration"></svg></div>
      </div>
      <h2>Sink contents (what the job's sinks hold now)</h2><div id="sink-contents"><p class="muted">Reading the sinks…</p></div>
      <h2>Vertices (as Spark plans each query)</h2><div id="vertices"></div>
      <h2>Checkpoints (micro-batches)</h2><div id="checkpoint-config" class="muted"></div><div id="checkpoints"></div>
      <h2>Reconciliation (the output against a batch run of the job's SQL or Table API program over its checkpoint's input)</h2><div id="reconciliation"></div>
      <h2>Exceptions</h2><div id="exceptions"></div></div>`;
    document.getElementById("btn-savepoint").onclick = () => act(jid, "savepoint");
    document.getElementById("btn-stop").onclick = () => act(jid, "stop");
    document.getElementById("btn-cancel").onclick = () => act(jid, "cancel");
    document.getElementById("btn-reconcile").onclick = async () => {
      try {
        await api(`/kindling/jobs/${jid}/reconciliation`, {method: "POST"});
        document.getElementById("message").textContent = "Reconciliation started.";
      } catch (error) {
        document.getElementById("message").textContent = `Failed: ${error.message}`;
      }
    };
  }
  showSinkContents(jid);
  document.getElementById("reconciliation").innerHTML = reconciliationHtml(reconciliation);
  document.getElementById("job-name").textContent = job.name;
  const state = document.getElementById("job-state");
  state.textContent = job.state;
  state.className = `state ${job.state}`;
  document.getElementById("job-meta").textContent =
    `${job.jid} · started ${time(job["start-time"])} · ${duration(job.duration)}` + (job.lastSavepoint ? ` · last savepoint ${job.lastSavepoint}` : "");
  const inputs = seriesOf(timeline, p => p.numRecordsInPerSecond).map(s => ({...s, name: `${s.name} in`}));
  const outputs = seriesOf(timeline, p => p.numRecordsOutPerSecond).map(s => ({...s, name: `${s.name} out`}));
  plot(document.getElementById("plot-throughput"), inputs.concat(outputs), "/s");
  plot(document.getElementById("plot-lag"), seriesOf(timeline, p => p.pendingRecords), "");
  plot(document.getElementById("plot-watermark"), seriesOf(timeline, p => p.watermark === null ? null : (p.timestamp - p.watermark) / 1000), " s");
  plot(document.getElementById("plot-duration"), seriesOf(timeline, p => p.batchDuration), " ms");
  const ratio = v => v === null || v === undefined ? "–" : `${Math.round(v)} ms/s`;
  const records = (n, complete) => complete ? number(n) : "–";
  const vertexRows = job.vertices.map(v => {
    const m = v.metrics, k = v["kindling-metrics"] || {};
    const watermark = k.currentInputWatermark === null || k.currentInputWatermark === undefined ? "–" : time(k.currentInputWatermark);
    return `<tr class="vertex-row" data-kind="${v.kind}"><td>${escapeHtml(v.name)}</td><td>${v.kind}</td><td>${v.parallelism}</td><td>${v.status}</td>
      <td>${records(m["read-records"], m["read-records-complete"])}</td><td>${records(m["write-records"], m["write-records-complete"])}</td>
      <td>${ratio(k.busyTimeMsPerSecond)}</td><td>${ratio(k.backPressuredTimeMsPerSecond)}</td><td>${ratio(k.idleTimeMsPerSecond)}</td><td>${watermark}</td></tr>`;
  }).join("");
  document.getElementById("vertices").innerHTML = `<table><thead><tr><th>Name</th><th>Kind</th><th>Parallelism</th><th>Status</th>
    <th>Records received</th><th>Records sent</th><th>Busy</th><th>Back-pressured</th><th>Idle</th><th>Watermark</th></tr></thead>
    <tbody>${vertexRows}</tbody></table>`;
  document.getElementById("checkpoint-config").textContent =
    `mode ${checkpointConfig.mode} · interval ${checkpointConfig.interval} ms · state backend ${checkpointConfig.state_backend} · ${checkpointConfig.checkpoint_storage}`;
  const history = checkpoints.history.slice(0, 10).map(c => `<tr><td>${c.id}</td><td>${c.status}</td><td>${time(c.trigger_timestamp)}</td>
      <td>${c.end_to_end_duration} ms</td><td>${number(c.state_size)} B</td><td>${number(c.processed_data)}</td><td>${escapeHtml(c.operator || "")}</td></tr>`).join("");
  document.getElementById("checkpoints").innerHTML = `<p class="muted">completed ${checkpoints.counts.completed} · restored ${checkpoints.counts.restored}` +
    (checkpoints.latest.savepoint ? ` · latest savepoint ${escapeHtml(checkpoints.latest.savepoint.external_path)}` : "") + `</p>
    <table><thead><tr><th>ID</th><th>Status</th><th>Time</th><th>Duration</th><th>State size</th><th>Records</th><th>Query</th></tr></thead><tbody>${history}</tbody></table>`;
  const entries = exceptions.exceptionHistory.entries;
  document.getElementById("exceptions").innerHTML = entries.length
    ? entries.map(e => `<p><b>${escapeHtml(e.exceptionName)}</b> ${time(e.timestamp)} (${escapeHtml(e.taskName || "")})</p><pre>${escapeHtml(e.stacktrace)}</pre>`).join("")
    : '<p class="muted">No exceptions.</p>';
}

async function render() {
  const view = document.getElementById("view");
  const match = location.hash.match(/^#\/job\/([0-9a-f]{32})/);
  try {
    await showCluster();
    if (match) await showJob(view, match[1]);
    else await showJobs(view);
  } catch (error) {
    view.innerHTML = `<p class="muted">Error: ${escapeHtml(error.message)}</p>`;
  }
}

function schedule() {
  clearTimeout(timer);
  render().finally(() => { timer = setTimeout(schedule, 2000); });
}

window.addEventListener("hashchange", () => {
  document.getElementById("view").innerHTML = '<p class="muted">Loading…</p>';
  schedule();
});
schedule();
