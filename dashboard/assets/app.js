// The page of one role of a shuffledp run: it reads the role's state
// (GET state) and follows it through server-sent events (GET events). No
// other origin is contacted; every figure comes from the role itself.
"use strict";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
let role = "";

// num formats a figure with p significant digits ("–" when unknown).
function num(x, p) {
  if (x === null || x === undefined || !isFinite(x)) return "–";
  return String(Number(x.toPrecision(p)));
}

// setNum shows x in element id, keeping the exact value in data-value.
function setNum(id, x, p) {
  const el = $(id);
  el.textContent = num(x, p);
  if (x === null || x === undefined) el.removeAttribute("data-value");
  else el.dataset.value = String(x);
}

function setText(id, s) { $(id).textContent = s; }

// epsCell is an epsilon's table cell: the server's text, rounded up as
// every table prints it, with the exact value in data-value.
function epsCell(x) {
  if (x.epsilon === null || x.epsilon === undefined) return null;
  return x.epsilon_text ? { text: x.epsilon_text, value: x.epsilon } : x.epsilon;
}

// applyRole removes what is not this role's (the server's page never
// holds the shuffler's elements, and conversely).
function applyRole(r) {
  if (role === r) return;
  role = r;
  setText("role", r);
  document.title = "shuffledp " + r;
  document.querySelectorAll("[data-role]").forEach((el) => {
    if (el.dataset.role !== r) el.remove();
  });
}

function el(name, attrs, parent) {
  const e = document.createElementNS(SVG, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}

// chart draws series ([{cls, pts: [[x, y]...], dots}]) and optional
// horizontal lines ([{cls, y}]) into the svg, with its ranges labelled.
function chart(svg, series, hlines, opts) {
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const W = 400, H = 180, L = 44, R = 8, T = 8, B = 22;
  let xs = [], ys = [];
  series.forEach((s) => s.pts.forEach((p) => { xs.push(p[0]); ys.push(p[1]); }));
  (hlines || []).forEach((h) => ys.push(h.y));
  if (xs.length === 0) {
    const t = el("text", { x: W / 2, y: H / 2, "text-anchor": "middle" }, svg);
    t.textContent = "no data yet";
    return;
  }
  let x0 = Math.min(...xs), x1 = Math.max(...xs);
  let y0 = opts && opts.y0 !== undefined ? opts.y0 : Math.min(...ys), y1 = Math.max(...ys);
  if (opts && opts.y1 !== undefined) y1 = Math.max(y1, opts.y1);
  if (x1 === x0) { x0 -= 1; x1 += 1; }
  if (y1 === y0) { y1 = y0 + 1; }
  const sx = (x) => L + (x - x0) / (x1 - x0) * (W - L - R);
  const sy = (y) => H - B - (y - y0) / (y1 - y0) * (H - T - B);
  el("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "axis" }, svg);
  el("line", { x1: L, y1: T, x2: L, y2: H - B, class: "axis" }, svg);
  const label = (x, y, s, anchor) => { const t = el("text", { x: x, y: y, "text-anchor": anchor }, svg); t.textContent = s; };
  label(L - 4, sy(y1) + 4, num(y1, 3), "end");
  label(L - 4, sy(y0) + 4, num(y0, 3), "end");
  label(sx(x0), H - 6, "round " + num(x0, 6), "start");
  label(sx(x1), H - 6, num(x1, 6), "end");
  (hlines || []).forEach((h) => el("line", { x1: L, y1: sy(h.y), x2: W - R, y2: sy(h.y), class: "line " + h.cls }, svg));
  series.forEach((s) => {
    if (s.pts.length === 0) return;
    el("polyline", { class: "line " + s.cls, points: s.pts.map((p) => sx(p[0]).toFixed(1) + "," + sy(p[1]).toFixed(1)).join(" ") }, svg);
    if (s.dots && s.pts.length <= 60) s.pts.forEach((p) => el("circle", { cx: sx(p[0]), cy: sy(p[1]), r: 2.5, class: s.cls }, svg));
  });
}

function pts(list, fx, fy) {
  const out = [];
  list.forEach((e) => { const y = fy(e); if (y !== null && y !== undefined) out.push([fx(e), y]); });
  return out;
}

function row(tbody, cells) {
  const tr = document.createElement("tr");
  cells.forEach((c) => {
    const td = document.createElement("td");
    if (c === null || c === undefined) td.textContent = "–";
    else if (typeof c === "number") { td.textContent = num(c, 6); td.dataset.value = String(c); }
    else if (typeof c === "object") { td.textContent = c.text; td.dataset.value = String(c.value); } // an epsilon rounded up
    else td.textContent = c;
    tr.appendChild(td);
  });
  tbody.appendChild(tr);
}

const ROWS = 200; // rows shown in the round table (the last ones)

function render(s) {
  applyRole(s.role);
  const st = $("status");
  st.textContent = s.status;
  st.className = "pill " + (s.status === "running" ? "ok" : "");
  setNum("released", s.released, 12);
  $("planned").textContent = s.planned > 0 ? String(s.planned) : "–";
  $("planned").title = s.planned > 0 ? "" : "the server plans the rounds";
  $("released-bar").style.width = s.planned > 0 ? Math.min(100, 100 * s.released / s.planned) + "%" : "0";
  setNum("epsilon", s.epsilon, 6);
  if (s.epsilon_text) setText("epsilon", s.epsilon_text); // rounded up, as every table prints it
  setText("epsilon-label", s.epsilon_label || "");
  if (s.target_epsilon > 0) setNum("target", s.target_epsilon, 6); else setText("target", "none");
  setNum("delta", s.delta, 6);
  setNum("ledger-rounds", s.ledger_rounds, 12);
  const frac = s.target_epsilon > 0 && s.epsilon !== null ? s.epsilon / s.target_epsilon : 0;
  $("eps-bar").style.width = Math.min(100, 100 * frac) + "%";
  $("eps-bar").className = frac > 0.9 ? "warn" : "";
  const last = s.rounds.length ? s.rounds[s.rounds.length - 1] : null;
  setNum("round-seconds", last ? last.seconds : null, 3);
  setNum("round-reports", last ? last.reports : null, 12);
  const epsPts = role === "shuffler" ? pts(s.rounds, (r) => r.round, (r) => r.epsilon) : pts(s.evals, (e) => e.round, (e) => e.epsilon);
  chart($("chart-eps"), [{ cls: "eps", pts: epsPts, dots: role === "server" }],
    s.target_epsilon > 0 ? [{ cls: "target", y: s.target_epsilon }] : [], { y0: 0 });
  chart($("chart-time"), [{ cls: "time", pts: pts(s.rounds, (r) => r.round, (r) => r.seconds) }], [], { y0: 0 });
  if (role === "server") {
    const lab = s.eval_set === "validation" ? "Validation accuracy" : "Test accuracy";
    setText("acc-label", lab);
    setText("acc-chart-label", lab);
    const e = s.evals.length ? s.evals[s.evals.length - 1] : null;
    setNum("accuracy", e ? e.accuracy : null, 4);
    setNum("accuracy-ema", e ? e.accuracy_ema : null, 4);
    setNum("accuracy-round", e ? e.round : null, 12);
    chart($("chart-acc"), [{ cls: "acc", pts: pts(s.evals, (e) => e.round, (e) => e.accuracy), dots: true },
      { cls: "ema", pts: pts(s.evals, (e) => e.round, (e) => e.accuracy_ema), dots: true }], [], { y0: 0, y1: 1 });
    const tb = $("evals").tBodies[0];
    tb.textContent = "";
    s.evals.forEach((e) => row(tb, [e.round, epsCell(e), e.ledger_rounds, e.accuracy, e.accuracy_ema]));
  } else {
    setNum("dummies-total", s.dummies_total, 12);
    setNum("dummies-last", last ? last.dummies : null, 12);
    setNum("connected", s.connected, 12);
    chart($("chart-dummies"), [{ cls: "dummies", pts: pts(s.rounds, (r) => r.round, (r) => r.dummies) }], [], { y0: 0 });
  }
  const rb = $("rounds").tBodies[0];
  rb.textContent = "";
  const shown = s.rounds.slice(-ROWS);
  shown.forEach((r) => row(rb, role === "shuffler" ? [r.round, r.reports, r.seconds, epsCell(r), r.dummies, r.connected] : [r.round, r.reports, r.seconds]));
  setText("rounds-note", shown.length < s.rounds.length ? "the last " + shown.length + " of " + s.rounds.length + " rounds kept" : "");
  const ul = $("errors");
  ul.textContent = "";
  if (s.errors.length === 0) {
    const li = document.createElement("li");
    li.className = "muted";
    li.textContent = "none";
    ul.appendChild(li);
  }
  s.errors.slice().reverse().forEach((e) => {
    const li = document.createElement("li");
    li.textContent = e.time.replace("T", " ").replace(/\.\d+Z$/, "Z") + " " + e.message + (e.count > 1 ? " (×" + e.count + ")" : "");
    ul.appendChild(li);
  });
  const cb = $("config").tBodies[0];
  cb.textContent = "";
  s.config.forEach((f) => row(cb, [f.name, f.value]));
  setText("updated", s.updated.replace("T", " ").replace(/\.\d+Z$/, "Z"));
  document.body.dataset.version = String(s.version);
}

function connect() {
  const es = new EventSource("events");
  es.addEventListener("state", (ev) => {
    render(JSON.parse(ev.data));
    const c = $("conn");
    c.textContent = "live";
    c.className = "pill ok";
  });
  es.addEventListener("end", () => {
    es.close();
    const c = $("conn");
    c.textContent = "the " + (role || "role") + " stopped serving; last figures shown";
    c.className = "pill muted";
    document.body.dataset.ended = "true";
  });
  es.onerror = () => {
    const c = $("conn");
    if (document.body.dataset.ended) return;
    c.textContent = "reconnecting…";
    c.className = "pill bad";
  };
}

fetch("state").then((r) => r.json()).then(render).catch(() => {}).finally(connect);
