// aieval web viewer: a one-page app over the server's JSON API.
// Every piece of run data is untrusted (prompts, predictions, judge reasons), so it only ever
// reaches the page through textContent or SVG attributes, never through HTML parsing.
"use strict";

(() => {
  const SVG_NS = "http://www.w3.org/2000/svg";
  const LIVE_STATUSES = new Set(["pending", "queued", "created", "running"]);
  const GRADES = ["A", "B", "C", "D", "F"];
  const PAGE_SIZE = 50;
  const CHANGES_SHOWN = 20;

  // ---------------------------------------------------------------- DOM helpers

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    append(node, children);
    return node;
  }

  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG_NS, tag);
    setAttrs(node, attrs);
    append(node, children);
    return node;
  }

  function setAttrs(node, attrs) {
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.setAttribute("class", value);
      else if (key === "text") node.textContent = String(value);
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
  }

  function append(node, children) {
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }

  function link(href, text, attrs) {
    if (href === null) {
      // an id no address can carry (see pathPart): shown, not linked
      return el("span", { ...(attrs || {}), class: "no-address", title: NO_ADDRESS }, text);
    }
    return el("a", { href, ...(attrs || {}) }, text);
  }

  const NO_ADDRESS = "This id holds a lone surrogate, which no address can carry (UTF-8 " +
    "cannot encode it), so its sample has no page of its own; the API lists it in full";

  // an id as one address segment; null for an id holding a lone surrogate (stored exactly,
  // but encodeURIComponent refuses it and no server could read it back from a URL)
  function pathPart(id) {
    try {
      return encodeURIComponent(id);
    } catch (_) {
      return null;
    }
  }

  function section(title, ...children) {
    // a count in brackets ("Regressions (12)") is not part of the section's stable id
    const id = "s-" + title.replace(/\s*\(.*\)$/, "").toLowerCase().replace(/[^a-z0-9]+/g, "-");
    return el("section", { class: "card", "aria-labelledby": id },
      el("h2", { id }, title), ...children);
  }

  function announce(message) {
    const region = document.getElementById("announcer");
    region.textContent = message;
  }

  // ---------------------------------------------------------------- formatting

  const isNum = (v) => typeof v === "number" && Number.isFinite(v);
  const fmt = (v, digits = 2) => (isNum(v) ? v.toFixed(digits) : "—");
  const pct = (v, digits = 1) => (isNum(v) ? (100 * v).toFixed(digits) + "%" : "—");
  const signed = (v, digits = 2) => (isNum(v) ? (v > 0 ? "+" : "") + v.toFixed(digits) : "—");

  function when(ts) {
    if (ts === null || ts === undefined || ts === "") return "—";
    const date = typeof ts === "number" ? new Date(ts * 1000) : new Date(ts);
    if (Number.isNaN(date.getTime())) return String(ts);
    return date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
  }

  function seconds(v) {
    if (!isNum(v)) return "—";
    if (v < 1) return (v * 1000).toFixed(0) + " ms";
    if (v < 120) return v.toFixed(2) + " s";
    return (v / 60).toFixed(1) + " min";
  }

  function interval(low, high, f = fmt) {
    return isNum(low) && isNum(high) ? `[${f(low)}, ${f(high)}]` : "";
  }

  // how an interval was drawn (a report stored before intervals named it: the fallback)
  function methodNote(block, fallback) {
    return block && isNum(block.low) && isNum(block.high)
      ? ` (${String(block.method || fallback)})` : "";
  }

  // "intervals: M" or "intervals: M1 (a, b); M2 (c)" over rows that carry a method
  function methodsNote(rows, fallback) {
    const by = new Map();
    for (const row of rows) {
      const b = row.pass_rate || row;
      if (!isNum(b.low) || !isNum(b.high)) continue;
      const m = String(b.method || fallback);
      if (!by.has(m)) by.set(m, []);
      by.get(m).push(String(row.name ?? row.key));
    }
    if (by.size <= 1) return [...by.keys()].map((m) => "intervals: " + m).join("");
    return "intervals: " + [...by].map(([m, names]) => `${m} (${names.join(", ")})`).join("; ");
  }

  function asText(value) {
    if (value === null || value === undefined) return "";
    if (typeof value === "string") return value;
    return JSON.stringify(value, null, 2);
  }

  function rawText(value) {
    // raw scores are what a scorer or a run recorded: 4.799999952316284 reads as 4.8
    return isNum(value) ? String(Number(value.toPrecision(6))) : asText(value);
  }

  function floorText(f) {
    if (typeof f === "string") return f;
    const name = f.name || f.criterion || "criterion";
    if (isNum(f.score) && isNum(f.floor)) {
      return `${name}: ${fmt(f.score)} is below its critical floor ${fmt(f.floor)}` +
        (f.source && f.source !== "default" ? ` (floor from ${f.source})` : "");
    }
    return `${name}: ${asText(f.reason ?? f)}`;
  }

  function readable(value) {
    // structured inputs and outputs read better indented; plain text stays as it is
    if (typeof value === "string" && /^\s*[[{]/.test(value)) {
      try {
        return JSON.stringify(JSON.parse(value), null, 2);
      } catch (_) {
        return value;
      }
    }
    return asText(value);
  }

  function badge(passed, labels = ["passed", "failed"]) {
    if (passed === null || passed === undefined) return el("span", { class: "badge" }, "n/a");
    return el("span", { class: "badge " + (passed ? "ok" : "bad") },
      passed ? labels[0] : labels[1]);
  }

  // an invalid sample (a simulated user that failed fidelity) neither passed nor failed
  function resultBadge(s) {
    const reasons = (s && s.verdict && s.verdict.reasons) || [];
    if (reasons.some((r) => r.kind === "invalid")) {
      return el("span", { class: "badge warn" }, "invalid");
    }
    if (s && s.invalid) return el("span", { class: "badge warn" }, "invalid");
    return badge(s.passed);
  }

  function gradeBadge(grade) {
    return grade ? el("span", { class: "grade grade-" + grade }, grade) : "—";
  }

  // ---------------------------------------------------------------- API

  class ApiError extends Error {
    constructor(status, body) {
      super(body && body.message ? body.message : `request failed (HTTP ${status})`);
      this.status = status;
      this.reasons = (body && body.reasons) || [];
    }
  }

  async function api(path) {
    const response = await fetch(path, {
      headers: { Accept: "application/json" },
      credentials: "same-origin",
    });
    let body = null;
    try {
      body = await response.json();
    } catch (_) {
      body = null;
    }
    if (!response.ok) throw new ApiError(response.status, body);
    return body;
  }

  function query(params) {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
      if (value !== null && value !== undefined && value !== "") search.set(key, String(value));
    }
    const text = search.toString();
    return text ? "?" + text : "";
  }

  function errorBox(error) {
    const reasons = (error.reasons || []).map((r) => el("li", {}, asText(r)));
    return el("div", { class: "error-box", role: "alert" },
      el("strong", {}, error.message || String(error)),
      reasons.length ? el("ul", {}, reasons) : null);
  }

  // ---------------------------------------------------------------- router

  let cleanup = [];

  function onLeave(fn) {
    cleanup.push(fn);
  }

  function parseHash() {
    // each segment is encodeURIComponent'd (sampleHref), so an id's own "/", "?" or "#" stay in
    // its segment; a segment that does not decode (a hand-edited address) matches no route
    const raw = location.hash.replace(/^#/, "") || "/";
    const cut = raw.indexOf("?");
    const path = cut < 0 ? raw : raw.slice(0, cut);
    const search = cut < 0 ? "" : raw.slice(cut + 1);
    const parts = path.split("/").filter(Boolean).map((part) => {
      try {
        return decodeURIComponent(part);
      } catch (_) {
        return null;
      }
    });
    return { parts: parts.includes(null) ? null : parts, params: new URLSearchParams(search) };
  }

  async function route() {
    for (const fn of cleanup) fn();
    cleanup = [];
    const { parts, params } = parseHash();
    const main = document.getElementById("main");
    main.replaceChildren();
    main.setAttribute("aria-busy", "true");
    highlightNav(parts ? parts[0] || "runs" : "");
    try {
      if (parts === null) {
        main.append(el("h1", {}, "Not found"), el("p", {}, "This address is not valid: ",
          link("#/", "back to runs")));
      } else if (parts.length === 0 || (parts[0] === "runs" && parts.length === 1)) {
        await runsPage(main, params);
      } else if (parts[0] === "runs" && parts.length === 2) {
        await runPage(main, parts[1], params);
      } else if (parts[0] === "runs" && parts[2] === "samples" && parts.length === 4) {
        await samplePage(main, parts[1], parts[3]);
      } else if (parts[0] === "compare" && parts[1] === "samples" && parts.length === 3) {
        await pairPage(main, parts[2], params);
      } else if (parts[0] === "compare") {
        await comparePage(main, params);
      } else if (parts[0] === "online" && parts.length === 1) {
        await onlinePage(main);
      } else {
        main.append(el("h1", {}, "Not found"), el("p", {}, link("#/", "Back to runs")));
      }
    } catch (error) {
      main.append(el("h1", {}, error.status === 404 ? "Not found" : "Something went wrong"),
        errorBox(error));
    } finally {
      main.setAttribute("aria-busy", "false");
    }
  }

  function highlightNav(current) {
    for (const a of document.querySelectorAll("[data-nav]")) {
      if (a.dataset.nav === current) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    }
  }

  function runHref(id) {
    return "#/runs/" + encodeURIComponent(id);
  }

  function sampleHref(runId, sampleId) {
    const part = pathPart(sampleId);
    return part === null ? null : runHref(runId) + "/samples/" + part;
  }

  // ---------------------------------------------------------------- charts (inline SVG)

  function chart(title, width, height, ...children) {
    return svg("svg", {
      role: "img", viewBox: `0 0 ${width} ${height}`, width, height,
      class: "chart", preserveAspectRatio: "xMinYMin meet",
    }, svg("title", { text: title }), ...children);
  }

  function barChart(title, items, opts = {}) {
    // items: [{label, value, className}]
    const barH = 22, gap = 6, labelW = opts.labelWidth || 140, width = opts.width || 520;
    const valueW = 70, plotW = width - labelW - valueW;
    const max = Math.max(1, ...items.map((i) => i.value || 0));
    const height = items.length * (barH + gap) + gap;
    const rows = items.map((item, k) => {
      const y = gap + k * (barH + gap);
      const w = ((item.value || 0) / max) * plotW;
      return svg("g", { class: "bar-row" },
        svg("text", { x: labelW - 8, y: y + barH * 0.7, "text-anchor": "end", text: item.label }),
        svg("rect", { x: labelW, y, width: Math.max(w, 0.5), height: barH,
          class: "bar " + (item.className || "") }),
        svg("text", { x: labelW + w + 6, y: y + barH * 0.7, class: "value",
          text: item.display ?? String(item.value) }));
    });
    return chart(title, width, height, ...rows);
  }

  function rateChart(title, rows, width = 560) {
    // rows: [{label, rate, low, high}] on 0..1 with Wilson whiskers
    const rowH = 26, labelW = 200, valueW = 120, plotW = width - labelW - valueW, top = 18;
    const height = top + rows.length * rowH + 6;
    const x = (v) => labelW + Math.max(0, Math.min(1, v)) * plotW;
    const axis = [0, 0.25, 0.5, 0.75, 1].map((t) => svg("g", { class: "axis" },
      svg("line", { x1: x(t), x2: x(t), y1: top - 4, y2: height - 4 }),
      svg("text", { x: x(t), y: 12, "text-anchor": "middle", text: pct(t, 0) })));
    const marks = rows.map((row, k) => {
      const cy = top + k * rowH + rowH / 2;
      return svg("g", { class: "rate-row" },
        svg("text", { x: labelW - 8, y: cy + 4, "text-anchor": "end", text: row.label }),
        svg("rect", { x: labelW, y: cy - 7, width: Math.max(0.5, x(row.rate || 0) - labelW),
          height: 14, class: "bar bad" }),
        isNum(row.low) && isNum(row.high) ? svg("g", { class: "whisker" },
          svg("line", { x1: x(row.low), x2: x(row.high), y1: cy, y2: cy }),
          svg("line", { x1: x(row.low), x2: x(row.low), y1: cy - 6, y2: cy + 6 }),
          svg("line", { x1: x(row.high), x2: x(row.high), y1: cy - 6, y2: cy + 6 })) : null,
        svg("text", { x: labelW + plotW + 8, y: cy + 4, class: "value",
          text: `${pct(row.rate)} ${interval(row.low, row.high, (v) => pct(v, 0))}` }));
    });
    return chart(title, width, height, ...axis, ...marks);
  }

  function histogram(title, hist, floor) {
    const width = 260, height = 120, pad = 18, plotH = height - 2 * pad;
    const counts = hist.counts || [];
    const edges = hist.edges || [];
    const max = Math.max(1, ...counts);
    const barW = (width - 2 * pad) / Math.max(1, counts.length);
    const bars = counts.map((c, k) => {
      const h = (c / max) * plotH;
      return svg("rect", { x: pad + k * barW + 1, y: pad + plotH - h, width: barW - 2,
        height: Math.max(h, 0), class: "bar" },
        svg("title", { text: `${fmt(edges[k])}–${fmt(edges[k + 1])}: ${c}` }));
    });
    const floorMark = isNum(floor)
      ? svg("line", { x1: pad + floor * (width - 2 * pad), x2: pad + floor * (width - 2 * pad),
        y1: pad - 4, y2: pad + plotH, class: "floor-line" })
      : null;
    return chart(title, width, height,
      svg("line", { x1: pad, x2: width - pad, y1: pad + plotH, y2: pad + plotH, class: "baseline" }),
      ...bars, floorMark,
      svg("text", { x: pad, y: height - 3, text: "0" }),
      svg("text", { x: width - pad, y: height - 3, "text-anchor": "end", text: "1" }));
  }

  function forestPlot(title, rows, unit) {
    // rows: [{label, delta, low, high, betterHigher}], a symmetric axis around zero
    const width = 1000, rowH = 28, labelW = 290, valueW = 200, top = 22;
    const plotW = width - labelW - valueW;
    // a floor on the axis keeps "no change" from being stretched into noise
    const extent = Math.max(unit === "pct" ? 0.01 : 1, ...rows.flatMap((r) =>
      [r.delta, r.low, r.high].filter(isNum).map(Math.abs))) * 1.1;
    const x = (v) => labelW + ((v + extent) / (2 * extent)) * plotW;
    const height = top + rows.length * rowH + 8;
    const zero = svg("line", { x1: x(0), x2: x(0), y1: top - 6, y2: height - 4, class: "zero-line" });
    const ticks = [-extent, 0, extent].map((t) => svg("text", {
      x: x(t), y: 13, "text-anchor": "middle", class: "axis-label",
      text: unit === "pct" ? signed(t * 100, 1) + " pts" : signed(t, 1) }));
    const marks = rows.map((row, k) => {
      const cy = top + k * rowH + rowH / 2;
      const good = isNum(row.delta) && row.delta !== 0 && (row.delta > 0) === row.betterHigher;
      const bad = isNum(row.delta) && row.delta !== 0 && !good;
      const cls = good ? "good" : bad ? "bad" : "neutral";
      const show = unit === "pct" ? (v) => signed(v * 100, 1) : (v) => signed(v, 2);
      return svg("g", { class: "forest-row " + cls },
        svg("text", { x: labelW - 8, y: cy + 4, "text-anchor": "end", text: row.label }),
        isNum(row.low) && isNum(row.high) ? svg("line", {
          x1: x(row.low), x2: x(row.high), y1: cy, y2: cy, class: "ci" }) : null,
        isNum(row.delta) ? svg("circle", { cx: x(row.delta), cy, r: 5 }) : null,
        svg("text", { x: labelW + plotW + 8, y: cy + 4, class: "value",
          text: `${show(row.delta)} ${interval(row.low, row.high, show)}` }));
    });
    return chart(title, width, height, zero, ...ticks, ...marks);
  }

  function gradeMix(grades, total) {
    // a compact stacked bar for the runs list
    if (!grades) return el("span", { class: "muted" }, "ungraded");
    const n = total || GRADES.reduce((s, g) => s + (grades[g] || 0), 0);
    const width = 120, height = 14;
    let x = 0;
    const parts = GRADES.filter((g) => grades[g]).map((g) => {
      const w = n ? (grades[g] / n) * width : 0;
      const rect = svg("rect", { x, y: 0, width: w, height, class: "grade-fill-" + g });
      x += w;
      return rect;
    });
    const label = GRADES.map((g) => `${g} ${grades[g] || 0}`).join(", ");
    return chart("Grades: " + label, width, height, ...parts);
  }

  // ---------------------------------------------------------------- online rules

  const SKIP_REASONS = [["sampled_out", "Sampled out"], ["budget_exhausted", "Over budget"],
    ["incomplete", "Incomplete"], ["error", "Error"]];

  // what became of a group of matched traces: one cell per figure, named for tests and tools
  function workCells(counts) {
    const claimed = counts.expired_claims
      ? `${counts.claimed} (${counts.expired_claims} expired)` : String(counts.claimed);
    return [
      el("td", { class: "num", "data-field": "matched" }, String(counts.matched)),
      el("td", { class: "num", "data-field": "scored" }, String(counts.scored)),
      SKIP_REASONS.map(([key]) => el("td", { class: "num", "data-field": key },
        String(counts.skipped[key] || 0))),
      el("td", { class: "num", "data-field": "pending" }, String(counts.pending)),
      el("td", { class: "num", "data-field": "claimed" }, claimed),
    ];
  }

  function spendText(used, limit, digits) {
    const shown = digits === undefined ? String(used) : fmt(used, digits);
    return limit === null || limit === undefined ? shown : `${shown} of ${limit}`;
  }

  function onlineRule(rule) {
    const badges = [
      el("span", { class: "badge" }, rule.source ? "from " + rule.source : "deleted rule"),
      rule.paused ? el("span", { class: "badge warn" }, "paused") : null,
      rule.stalled ? el("span", { class: "badge bad" }, "stalled") : null,
    ];
    const section = el("section", { class: "online-rule", "data-rule": rule.name },
      el("h2", {}, rule.name, " ", badges));
    if (rule.stalled) {
      section.append(el("div", { class: "error-box", role: "alert", "data-field": "stalled" },
        el("strong", {}, "Not being processed: "), rule.stalled_reason));
    }
    if (!rule.counts.adds_up) {
      section.append(el("div", { class: "error-box", role: "alert" },
        "The counts do not add up: the store holds a work item in a state no version writes."));
    }
    section.append(el("p", {},
      `${rule.window === "day" ? "Daily" : "Hourly"} windows · lag `,
      el("span", { "data-field": "lag" }, isNum(rule.lag_s) ? seconds(rule.lag_s) : "none"),
      " · last finished ", when(rule.last_finished_at)));
    const windows = rule.windows.map((w) => el("tr", { "data-window": w.name },
      el("th", { scope: "row" }, w.run_id ? link(runHref(w.run_id), w.name) : w.name,
        w.closed ? el("span", { class: "muted" }, " (closed)") : null),
      workCells(w.counts),
      el("td", { class: "num", "data-field": "pass_rate" }, isNum(w.pass_rate)
        ? `${pct(w.pass_rate)} ${interval(w.pass_low, w.pass_high, pct)} of ${w.judged}` : "—")));
    windows.push(el("tr", { class: "total", "data-window": "all" },
      el("th", { scope: "row" }, "All windows"), workCells(rule.counts), el("td", {}, "")));
    section.append(el("div", { class: "table-wrap" }, el("table", { class: "online-windows" },
      el("caption", {}, "Matched = scored + skipped + pending + claimed, per window"),
      el("thead", {}, el("tr", {}, ["Window", "Matched", "Scored",
        ...SKIP_REASONS.map(([, label]) => "Skipped: " + label), "Pending", "Claimed",
        "Pass rate (95%)"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, windows))));
    const spend = rule.spend.map((p) => el("tr", { "data-period": p.period },
      el("th", { scope: "row" }, "This " + p.period),
      el("td", { class: "num" }, spendText(p.calls, p.calls_limit)),
      el("td", { class: "num" }, spendText(p.tokens, p.tokens_limit)),
      el("td", { class: "num" }, spendText(p.cost, p.cost_limit, 4)),
      el("td", { class: "num" }, String(p.in_flight)),
      el("td", {}, p.exhausted ? el("span", { class: "bad" }, "budget reached") : "")));
    section.append(el("div", { class: "table-wrap" }, el("table", { class: "online-spend" },
      el("caption", {}, "Spend against the budget"),
      el("thead", {}, el("tr", {}, ["Period", "Calls", "Tokens", "Cost", "In flight", ""]
        .map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, spend))));
    if (rule.alerts && rule.alerts.length) section.append(onlineAlerts(rule.alerts));
    if (rule.errors.length) {
      section.append(el("h3", {}, "Most common scoring errors"),
        el("ul", { class: "online-errors" }, rule.errors.map((e) =>
          el("li", {}, el("span", { class: "num" }, `${e.count} × `), e.message))));
    }
    return section;
  }

  // the rule's alert incidents: an undelivered one says so loudly, with its last error
  function onlineAlerts(alerts) {
    const label = { delivered: "delivered", retrying: "not delivered yet",
      failing: "not delivered", abandoned: "abandoned" };
    const rows = alerts.map((a) => el("tr", { "data-incident": a.incident, "data-state": a.state },
      el("th", { scope: "row" }, a.incident),
      el("td", {}, when(a.opened_at)),
      el("td", { "data-field": "state" }, a.state === "failing" || a.state === "abandoned"
        ? el("span", { class: "bad" }, label[a.state]) : label[a.state] || a.state),
      el("td", { class: "num", "data-field": "attempts" }, String(a.attempts)),
      el("td", { "data-field": "next" }, a.delivered_at !== null ? when(a.delivered_at)
        : a.abandoned_at !== null ? "given up" : isNum(a.next_attempt_at)
          ? when(a.next_attempt_at) : "now"),
      el("td", { "data-field": "last_error" }, a.last_error || "")));
    const bad = alerts.filter((a) => a.state === "failing" || a.state === "abandoned");
    return el("div", {},
      bad.length ? el("div", { class: "error-box", role: "alert", "data-field": "alerts" },
        el("strong", {}, "Alerts not delivered: "),
        `${bad.length} incident(s) did not reach the webhook; see the last error below.`) : null,
      el("div", { class: "table-wrap" }, el("table", { class: "online-alerts" },
        el("caption", {}, "Alert incidents and their delivery"),
        el("thead", {}, el("tr", {}, ["Incident", "Opened", "Delivery", "Attempts",
          "Delivered / next attempt", "Last error"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, rows))));
  }

  async function onlinePage(main) {
    main.append(el("h1", {}, "Online rules"));
    const data = await api("/api/online/status");
    if (!data.rules.length) {
      main.append(el("p", { class: "empty" },
        "No online rules. Give them to the server with `aieval serve --online rules.yaml`."));
      return;
    }
    const c = data.counts;
    main.append(el("p", { "data-field": "totals" }, `${c.matched} matched traces: ` +
      `${c.scored} scored, ${c.skipped_total} skipped, ${c.pending} pending, ` +
      `${c.claimed} being scored.`));
    if (data.unexamined) {
      main.append(el("p", { "data-field": "unexamined" },
        `${data.unexamined} received traces not yet examined against the rules` +
        (isNum(data.unexamined_lag_s) ? `, the oldest waiting ${seconds(data.unexamined_lag_s)}`
          : "") + " (a count that grows: no server is examining)."));
    }
    for (const rule of data.rules) main.append(onlineRule(rule));
  }

  // ---------------------------------------------------------------- runs list

  async function runsPage(main, params) {
    const name = params.get("name") || "";
    const offset = Number(params.get("offset") || 0);
    main.append(el("h1", {}, "Runs"));
    const input = el("input", { type: "search", id: "run-filter", name: "name", value: name,
      placeholder: "Filter by name" });
    const form = el("form", { class: "toolbar", role: "search", onsubmit: (event) => {
      event.preventDefault();
      location.hash = "#/" + query({ name: input.value.trim() });
    } }, el("label", { for: "run-filter" }, "Run name"), input,
    el("button", { type: "submit" }, "Filter"));
    main.append(form);
    const data = await api("/api/runs" + query({ name, limit: PAGE_SIZE, offset }));
    if (!data.runs.length) {
      main.append(el("p", { class: "empty" }, name ? `No runs named "${name}".`
        : "No runs yet. Start one with `aieval run` or POST /api/evaluations."));
      return;
    }
    const rows = data.runs.map((run) => el("tr", { "data-run": run.id },
      el("th", { scope: "row" }, link(runHref(run.id), run.name || run.id),
        el("div", { class: "run-id" }, run.id)),
      el("td", {}, run.model || "—"),
      el("td", {}, stateBadge(run)),
      el("td", {}, when(run.created_at)),
      el("td", { class: "num" }, run.samples ?? "—"),
      el("td", { class: "num" }, isNum(run.pass_rate) ? pct(run.pass_rate) : "—"),
      el("td", { class: "metrics" }, Object.entries(run.metrics || {}).slice(0, 4).map(([k, v]) =>
        el("div", {}, el("span", { class: "muted" }, k + " "), fmt(v, 3)))),
      el("td", { class: "num", "data-field": "errors" }, errorCount(run)),
      el("td", {}, gradeMix(run.grades, run.samples)),
      el("td", {}, link("#/compare" + query({ candidate: run.id }), "Compare",
        { "aria-label": `Compare ${run.name || ""} ${run.id}` }))));
    main.append(el("div", { class: "table-wrap" }, el("table", { class: "runs" },
      el("caption", {}, `${data.total} run${data.total === 1 ? "" : "s"}`),
      el("thead", {}, el("tr", {}, ["Name", "Model", "State", "Created", "Samples",
        "Pass rate", "Metrics", "Errors", "Grades", ""].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, rows))));
    main.append(pager(data, (o) => "#/" + query({ name, offset: o })));
  }

  // A run's state as the store gives it (any status string), refined by its errors: a
  // completed run whose samples errored never reads as a plain green "completed".
  const STATE_LABELS = { completed_with_errors: "completed with errors",
    errored: "every sample errored" };

  function stateBadge(run) {
    const state = run.state || run.status || "unknown";
    const label = STATE_LABELS[state] || state;
    return el("span", { class: "status status-" + state.replace(/[^a-z0-9_-]/gi, "_"),
      "data-state": state }, label);
  }

  function errorCount(run) {
    const e = run.errors || {};
    const total = (e.target || 0) + (e.scorers || 0);
    if (!total) return "0";
    return el("span", { class: "bad", title: `${e.target || 0} target, ${e.scorers || 0} scorer` },
      String(total));
  }

  function pager(data, hrefFor) {
    const nav = el("nav", { class: "pager", "aria-label": "Pages" });
    if (data.offset > 0) {
      nav.append(link(hrefFor(Math.max(0, data.offset - data.limit)), "← Previous"));
    }
    const last = Math.min(data.total, data.offset + data.limit);
    nav.append(el("span", {}, ` ${data.total ? data.offset + 1 : 0}–${last} of ${data.total} `));
    if (last < data.total) nav.append(link(hrefFor(data.offset + data.limit), "Next →"));
    return nav;
  }

  // ---------------------------------------------------------------- run page

  async function runPage(main, runId) {
    const header = el("div", { class: "page-head" });
    // the report lands after the table's first page: its key figures fill a strip of fixed
    // height above the table and its sections go below it, so no row moves when it comes
    const summary = el("div", { id: "run-summary" });
    const samples = el("div", { id: "run-samples" });
    const details = el("div", { id: "run-report" });
    main.append(header, summary, samples, details);
    const table = sampleTable(samples, runId);
    const firstPage = table.reload().then(() => null, (error) => error);
    const path = "/api/runs/" + encodeURIComponent(runId);
    let head;
    let missing = null;
    try {
      head = await api(path + "/header");
    } catch (error) {
      // a run just submitted may still wait in the queue: its event stream says when it starts
      if (error.status !== 404) throw error;
      missing = error;
      head = { run: { id: runId, name: runId, status: "queued" } };
    }
    const run = head.run || {};
    renderRunHeader(header, head);
    if (LIVE_STATUSES.has(run.status)) {
      const live = liveProgress(head);
      header.after(live.node);
      table.quiet(true);
      summary.append(reportState("Charts appear as samples finish."));
      let finished = false;
      let refreshedAt = 0;
      const refresh = async () => {
        // the bundle covers the samples stored so far; redraw it now and then, not per sample
        if (finished || Date.now() - refreshedAt < 2500) return;
        refreshedAt = Date.now();
        const partial = await api(path);
        if (!finished && summary.isConnected) {
          showReport(summary, details, partial, "So far, over the samples finished.");
        }
      };
      followRun(run.id || runId, live, table, {
        onStart: (started) => renderRunHeader(header, { run: { ...run, ...started } }),
        onProgress: () => refresh().catch(() => undefined),
        onComplete: (final) => {
          finished = true;
          renderRunHeader(header, final);
          showReport(summary, details, final);
          showJudges(details, path);
          table.quiet(false);
          table.reload();
        },
        onRefused: () => {
          // no stream and no run row: the id is simply unknown
          if (missing) main.replaceChildren(el("h1", {}, "Run not found"), errorBox(missing));
        },
      });
    } else {
      summary.replaceChildren(pendingKpis(head),
        reportState(`Building the report over ${head.samples ?? "the"} samples…`, true));
      const report = api(path).then((bundle) => ({ bundle }), (error) => ({ error }));
      const failed = await firstPage;
      if (failed) throw failed;
      const { bundle, error } = await report;
      if (!summary.isConnected) return;
      if (error) {
        summary.replaceChildren(pendingKpis(head), reportState("The report could not be built."));
        details.replaceChildren(errorBox(error));
        return;
      }
      renderRunHeader(header, bundle);
      showReport(summary, details, bundle);
      showJudges(details, path);
    }
  }

  // The run's judges against their reviewers' labels (GET .../judges, what `aieval judges`
  // prints): nothing at all for a run without a judge.
  function showJudges(details, path) {
    api(path + "/judges").then((data) => {
      if (!data.judges.length || !details.isConnected) return;
      details.prepend(judgesPanel(data.judges));
    }, () => undefined);
  }

  function judgesPanel(judges) {
    const ci = (value) => value === null || value === undefined ? "—"
      : `${value.estimate.toFixed(3)} (${value.low.toFixed(3)} – ${value.high.toFixed(3)})`;
    const blocks = judges.map((judge) => {
      const cert = judge.certification;
      const head = el("h3", {}, `${judge.judge} · ${judge.digest}`);
      if (!cert) return el("div", { class: "judge" }, head, el("p", { class: "muted" }, judge.problem || "no figures"));
      const agree = cert.agreement;
      const kappa = agree.judge_human_kappa === null
        ? `n/a (${agree.judge_human_undefined})` : ci(agree.judge_human_kappa);
      const rows = [
        [agree.weighted ? "weighted kappa judge-human" : "kappa judge-human", kappa, agree.items],
        ["kappa human-human", ci(agree.human_human_kappa), agree.human_human_items],
        ["TPR (judge pass | human pass)", ci(agree.tpr), agree.positives],
        ["TNR (judge fail | human fail)", ci(agree.tnr), agree.negatives],
        ["base rate (human pass)", agree.base_rate.toFixed(3), agree.items],
      ];
      for (const run of judge.runs) {
        const rate = run.corrected;
        rows.push(["pass rate, raw", run.raw.toFixed(3), run.judged]);
        rows.push(["pass rate, corrected", rate ? `${rate.corrected.toFixed(3)} (${rate.low.toFixed(3)} – ${rate.high.toFixed(3)})` : `— (${run.refused})`, run.judged]);
      }
      const table = el("table", { class: "judge-figures" },
        el("thead", {}, el("tr", {}, ...["figure", "estimate (95% CI)", "n"].map((t) => el("th", {}, t)))),
        el("tbody", {}, ...rows.map((row) => el("tr", {}, ...row.map((v) => el("td", {}, String(v)))))));
      const how = agree.weighted ? "weighted by the review queues' design"
        : `unweighted: ${agree.unweighted}`;
      return el("div", { class: "judge" }, head,
        el("p", { class: "judge-status" }, `${cert.status}: ${cert.reason}`), table,
        el("p", { class: "muted" }, `${how} · ${agree.labels} label(s) by ${agree.reviewers} reviewer(s)`));
    });
    const panel = section("Judges", ...blocks);
    panel.id = "run-judges";
    return panel;
  }

  function reportState(text, busy = false) {
    return el("p", { class: "report-state muted", id: "report-state", role: "status",
      "aria-busy": busy ? "true" : "false" }, text);
  }

  function pendingKpis(head) {
    // the same cards as kpis(), empty until the report is built
    const cards = [["Samples", String(head.samples ?? "—")], ["Pass rate", "…"],
      ["Weighted score", "…"], ["Cost", "…"], ["Latency p50", "…"]];
    return el("div", { class: "kpis pending", id: "kpis-pending", "aria-hidden": "true" },
      cards.map(([label, value]) => el("div", { class: "kpi" },
        el("div", { class: "kpi-label" }, label), el("div", { class: "kpi-value" }, value),
        el("div", { class: "kpi-sub" }, ""))));
  }

  function showReport(summary, details, bundle, note) {
    const [figures, ...sections] = runSummary(bundle);
    const warnings = (bundle.warnings || []).length;
    const line = reportState(note || `Report over ${bundle.samples ?? 0} samples.`);
    if (warnings) {
      line.append(" ", el("button", { type: "button", class: "linkish", id: "report-warnings",
        onclick: () => document.getElementById("s-warnings").scrollIntoView() },
      `${warnings} warning${warnings === 1 ? "" : "s"}, below the samples ↓`));
    }
    summary.replaceChildren(figures, line);
    details.replaceChildren(...sections);
  }

  function renderRunHeader(header, bundle) {
    const run = bundle.run || {};
    const wf = run.workflow;
    const facts = [
      ["Status", el("span", { class: "status status-" + run.status, id: "run-status" },
        run.status || "—")],
      bundle.target_errors ? ["Errors", el("span", { class: "status status-" +
        (bundle.target_errors >= bundle.samples ? "errored" : "completed_with_errors"),
        id: "run-errors" }, bundle.target_errors >= bundle.samples ? "every sample errored"
        : `${bundle.target_errors} of ${bundle.samples} samples errored`)] : null,
      ["Model", run.model || "—"],
      ["Provider", run.provider || "—"],
      ["Dataset", run.dataset || "—"],
      ["Created", when(run.created_at)],
      ["Finished", when(run.finished_at)],
      ["Duration", seconds(run.duration_s)],
      wf ? ["Workflow", `${wf.id || ""} ${wf.version ? "v" + wf.version : ""}`.trim()] : null,
      wf && wf.profile ? ["Profile", wf.profile] : null,
      run.git_sha ? ["Git", String(run.git_sha).slice(0, 12)] : null,
    ].filter(Boolean);
    header.replaceChildren(
      el("p", { class: "crumbs" }, link("#/", "Runs"), " / ", run.id || ""),
      el("h1", {}, run.name || run.id || "Run"),
      el("dl", { class: "facts" }, facts.map(([k, v]) => el("div", {}, el("dt", {}, k),
        el("dd", {}, v)))),
      el("p", {}, link("#/compare" + query({ candidate: run.id }), "Compare with another run")));
  }

  function liveProgress(bundle) {
    const total = (bundle.run && bundle.run.n_examples) || 0;
    const fill = el("div", { class: "progress-fill" });
    const bar = el("div", { class: "progress", role: "progressbar", id: "run-progress",
      "aria-label": "Samples completed", "aria-valuemin": 0, "aria-valuemax": total,
      "aria-valuenow": 0 }, fill);
    const counters = el("p", { class: "counters", id: "run-counters" });
    const node = section("Progress", bar, counters);
    const state = { done: 0, total, passed: 0, failed: 0, invalid: 0 };
    const update = (next) => {
      Object.assign(state, next);
      bar.setAttribute("aria-valuemax", String(state.total || 0));
      bar.setAttribute("aria-valuenow", String(state.done));
      bar.setAttribute("aria-valuetext", `${state.done} of ${state.total || "?"}`);
      fill.style.width = state.total ? `${(100 * state.done) / state.total}%` : "0";
      counters.replaceChildren(
        el("span", { "data-counter": "done" }, `${state.done} / ${state.total || "?"} done`),
        el("span", { class: "ok-text", "data-counter": "passed" }, `${state.passed} passed`),
        el("span", { class: "bad-text", "data-counter": "failed" }, `${state.failed} failed`),
        // an invalid sample (its simulated user failed fidelity) neither passed nor failed
        state.invalid ? el("span", { "data-counter": "invalid" },
          `${state.invalid} invalid (simulated user)`) : null);
    };
    update({});
    return { node, update, state };
  }

  function followRun(runId, live, table, { onStart, onProgress, onComplete, onRefused }) {
    const source = new EventSource("/api/runs/" + encodeURIComponent(runId) + "/events");
    let lastAnnounced = -1;
    let received = 0;
    onLeave(() => source.close());
    source.addEventListener("message", () => (received += 1));
    for (const name of ["run_started", "sample_completed", "progress"]) {
      source.addEventListener(name, () => (received += 1));
    }
    source.addEventListener("run_started", (event) => {
      const header = JSON.parse(event.data);
      if (header.n_examples) live.update({ total: header.n_examples });
      onStart(header);
    });
    source.addEventListener("sample_completed", (event) => {
      table.addLive(JSON.parse(event.data));
    });
    source.addEventListener("progress", (event) => {
      const p = JSON.parse(event.data);
      live.update(p);
      onProgress(p);
      // announce sparingly so screen readers are not flooded
      const step = Math.max(1, Math.round((p.total || 10) / 10));
      if (p.done - lastAnnounced >= step || p.done === p.total) {
        lastAnnounced = p.done;
        announce(`${p.done} of ${p.total} samples done, ${p.failed} failed`);
      }
    });
    source.addEventListener("run_completed", (event) => {
      source.close();
      const bundle = JSON.parse(event.data);
      live.update({ done: bundle.samples ?? live.state.done,
        total: Math.max(live.state.total, bundle.samples || 0) });
      announce(`Run ${bundle.run ? bundle.run.status : "completed"}`);
      onComplete(bundle);
    });
    source.addEventListener("error", (event) => {
      // a server "error" event carries data; a transport error does not
      if (event.data) {
        source.close();
        const message = JSON.parse(event.data).message || "the run failed";
        live.node.append(errorBox({ message }));
        announce("Run error: " + message);
      } else if (source.readyState === EventSource.CLOSED) {
        if (!received) onRefused();
        if (live.node.isConnected) {
          live.node.append(errorBox({ message: "Lost the connection to the server; reload to retry." }));
        }
      }
    });
  }

  function runSummary(b) {
    const out = [];
    out.push(kpis(b));
    if (b.warnings && b.warnings.length) {
      out.push(section("Warnings", el("ul", { class: "warnings" },
        b.warnings.map((w) => el("li", {}, w)))));
    }
    const charts = el("div", { class: "grid-2" });
    if (b.grades) {
      charts.append(section("Grade distribution", el("div", { id: "grade-chart" },
        barChart("Grade distribution: " + GRADES.map((g) => `${g} ${b.grades[g] || 0}`).join(", "),
          GRADES.map((g) => ({ label: g, value: b.grades[g] || 0, className: "grade-fill-" + g })),
          { labelWidth: 30, width: 420 }))));
    }
    if (b.gates && b.gates.length) {
      charts.append(section("Gate failure rates", el("div", { id: "gate-chart" },
        rateChart("Gate failure rates with 95% intervals", b.gates.map((g) => ({
          label: g.name, rate: g.rate, low: g.low, high: g.high })))),
        el("p", { class: "muted interval-methods" }, methodsNote(b.gates, "Wilson score"))));
    }
    if (charts.childNodes.length) out.push(charts);
    if (b.criteria && b.criteria.length) out.push(criteriaSection(b.criteria));
    if (b.failure_reasons && b.failure_reasons.length) out.push(reasonsSection(b));
    if (b.judges && Object.keys(b.judges).length) out.push(judgesSection(b.judges));
    if (b.code) out.push(codeSection(b.code, (b.run || {}).id));
    out.push(costSection(b));
    const groups = groupsSection(b.groups || {});
    if (groups) out.push(groups);
    return out;
  }

  // a weighted score over part of the weights says so (criteria without a score are left out)
  function coverageNote(ev) {
    const c = ev && ev.score_coverage;
    return c && isNum(c.share) && c.share < 1 && c.detail ? " " + c.detail : "";
  }

  // the scorers the pass rate says nothing about (one that scored no sample...), beside it
  function lowCoverageNote(low) {
    const texts = (Array.isArray(low) ? low : []).map((c) => String((c || {}).text || ""));
    return texts.length ? ` (${texts.join("; ")})` : "";
  }

  function kpis(b) {
    const pr = b.pass_rate || {};
    const ws = b.weighted_score;
    const cards = [
      ["Samples", String(b.samples ?? "—"), b.target_errors ? `${b.target_errors} target errors` : ""],
      ["Pass rate", pct(pr.estimate), `${pr.passed ?? "?"}/${pr.n ?? "?"} ${interval(pr.low, pr.high, (v) => pct(v, 0))}`
        + methodNote(pr, "Wilson score")
        + (pr.invalid ? ` (${pr.invalid} invalid (simulated user), left out of the pass rate)` : "")
        + lowCoverageNote(b.low_coverage)],
      ws ? ["Weighted score", fmt(ws.mean, 1), interval(ws.low, ws.high, (v) => fmt(v, 1))
        + methodNote(ws, "percentile bootstrap") + (ws.coverage ? " " + ws.coverage.text : "")] : null,
      ["Cost", isNum(b.cost) ? "$" + b.cost.toFixed(4) : "—", ""],
      ["Latency p50", seconds(b.latency && b.latency.p50), "p95 " + seconds(b.latency && b.latency.p95)],
    ].filter(Boolean);
    return el("div", { class: "kpis", id: "kpis" }, cards.map(([label, value, sub]) =>
      el("div", { class: "kpi" }, el("div", { class: "kpi-label" }, label),
        el("div", { class: "kpi-value" }, value), el("div", { class: "kpi-sub" }, sub))));
  }

  function criteriaSection(criteria) {
    const items = criteria.map((c) => el("figure", { class: "criterion" },
      histogram(`${c.name}: distribution of normalized values, mean ${fmt(c.mean)}`,
        c.histogram || {}, c.floor),
      el("figcaption", {},
        el("strong", {}, c.name), ` (${c.kind}) mean ${fmt(c.mean)} ${interval(c.low, c.high)}`
          + methodNote(c, "percentile bootstrap"),
        el("br"), `n=${c.n}` + (c.errors ? `, ${c.errors} errors` : "") +
          (c.not_applicable ? `, ${c.not_applicable} n/a` : "") +
          (isNum(c.floor) ? `, floor ${fmt(c.floor)}: ${c.floor_violations} below` : ""))));
    return section("Criterion distributions", el("div", { class: "small-multiples" }, items));
  }

  function reasonsSection(b) {
    const runId = b.run.id;
    const rows = b.failure_reasons.map((r) => el("tr", {},
      el("td", {}, el("span", { class: "tag" }, r.kind)),
      el("td", {}, r.key || ""),
      el("td", { class: "wrap" }, r.reason || ""),
      el("td", { class: "num" }, r.count),
      el("td", {}, (r.sample_ids || []).map((id, k) => [k ? ", " : "",
        link(sampleHref(runId, id), id)]))));
    return section("Top failure reasons", el("div", { class: "table-wrap" }, el("table", {},
      el("thead", {}, el("tr", {}, ["Kind", "Key", "Reason", "Count", "Samples"].map((h) =>
        el("th", { scope: "col" }, h)))), el("tbody", {}, rows))));
  }

  function judgesSection(judges) {
    const rows = Object.entries(judges).map(([name, j]) => el("tr", { "data-judge": name },
      el("th", { scope: "row" }, name), el("td", { class: "num" }, j.n),
      el("td", { class: "num", "data-field": "malformed" },
        `${j.parse_failures} (${pct(j.parse_failure_rate)})`),
      el("td", { class: "num", "data-field": "malformed_samples" }, j.malformed ?? "—"),
      el("td", { class: "num" }, j.inconsistency_rate === null || j.inconsistency_rate === undefined
        ? "—" : `${j.inconsistent} (${pct(j.inconsistency_rate)})`),
      el("td", { class: "wrap" }, j.warning || "")));
    return section("Judges", el("div", { class: "table-wrap" }, el("table", {},
      el("thead", {}, el("tr", {}, ["Judge", "Verdicts", "Malformed verdicts",
        "Malformed samples", "Inconsistent", "Warning"].map((h) => el("th", { scope: "col" }, h)))), el("tbody", {}, rows))));
  }

  const CODE_STATUSES = ["passed", "failed", "timeout", "memory_limit", "error",
    "sandbox_error"];

  function codeSection(code, runId) {
    // a code evaluation: pass@k with intervals, statuses, and each problem's executions
    const ks = Object.entries(code.pass_at_k || {}).map(([k, v]) => el("tr", { "data-k": k },
      el("th", { scope: "row" }, "pass@" + k), el("td", { class: "num" }, fmt(v.value, 3)),
      el("td", { class: "num" }, `[${fmt(v.low, 3)}, ${fmt(v.high, 3)}]`),
      el("td", { class: "num" }, v.problems ?? "—")));
    const problems = (code.problems || []).map((p) => el("tr", { "data-problem": p.task_id },
      el("th", { scope: "row" }, p.task_id), el("td", { class: "num" }, `${p.c}/${p.n}`),
      ...CODE_STATUSES.map((s) => el("td", { class: "num" }, (p.statuses || {})[s] ?? 0)),
      el("td", {}, (p.samples || []).map((s, i) => [i ? " " : "", link(sampleHref(runId, s.id),
        el("span", { class: "tag status-" + s.status, title: s.detail || s.status }, s.status))]))));
    const head = (names) => el("thead", {}, el("tr", {}, names.map((h) => el("th", { scope: "col" }, h))));
    return section("Code evaluation", el("div", { id: "code-eval" },
      el("p", {}, `${code.executions} executions: ` +
        CODE_STATUSES.map((s) => `${s} ${(code.statuses || {})[s] ?? 0}`).join(", ")),
      (code.warnings || []).length ? el("ul", { class: "warnings" },
        code.warnings.map((w) => el("li", {}, w))) : null,
      el("div", { class: "table-wrap" }, el("table", { id: "code-pass-at-k" },
        head(["Metric", "Value", "95% interval", "Problems"]), el("tbody", {}, ks))),
      el("div", { class: "table-wrap" }, el("table", { id: "code-problems" },
        head(["Problem", "c/n", ...CODE_STATUSES, "Executions"]), el("tbody", {}, problems)))));
  }

  // the CLI's line: "target 141/15 · judges 959/133 · total 1100/148" (judges only when used);
  // a part some calls did not report is unknown: "at least 141/15 (2 of 30 calls unreported)"
  function tokenText(block) {
    const b = block || {}, unreported = b.unreported_calls || 0;
    const known = unreported ? b.at_least || {} : b;
    const pair = `${known.input ?? "—"}/${known.output ?? "—"}`;
    if (!unreported) return pair;
    const of = `(${unreported} of ${b.calls ?? "?"} calls unreported)`;
    if (unreported === b.calls && !known.input && !known.output) return `unknown ${of}`;
    return `at least ${pair} ${of}`;
  }

  function tokenLine(tok) {
    const parts = tok.target ? [`target ${tokenText(tok.target)}`] : [];
    const judges = tok.judges || {}, judged = judges.unreported_calls ? judges.at_least : judges;
    if ((judged || {}).total || judges.calls) parts.push(`judges ${tokenText(judges)}`);
    parts.push(`total ${tokenText(tok)}`);
    return parts.join(" · ");
  }

  function costSection(b) {
    const lat = b.latency || {}, tok = b.tokens || {};
    const facts = [
      ["Latency mean", seconds(lat.mean)], ["p50", seconds(lat.p50)], ["p95", seconds(lat.p95)],
      ["max", seconds(lat.max)], ["Tokens in/out", tokenLine(tok)],
      ["Cost", isNum(b.cost) ? "$" + b.cost.toFixed(4) : "—"], ["Retries", b.retries ?? 0],
      ["Cached", b.cached ?? 0],
    ];
    return section("Latency, tokens and cost", el("dl", { class: "facts" },
      facts.map(([k, v]) => el("div", {}, el("dt", {}, k), el("dd", {}, v)))));
  }

  function groupsSection(groups) {
    const parts = [];
    const groupTable = (caption, rows) => el("div", { class: "table-wrap" }, el("table", {},
      el("caption", {}, `${caption} (${methodsNote(rows, "Wilson score")})`),
      el("thead", {}, el("tr", {}, ["Group", "Samples", "Pass rate", "Mean score", "Grades"]
        .map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, rows.map((g) => el("tr", {}, el("th", { scope: "row" }, String(g.key)),
        el("td", { class: "num" }, g.samples),
        el("td", { class: "num" }, `${pct(g.pass_rate && g.pass_rate.estimate)} ${interval(
          g.pass_rate && g.pass_rate.low, g.pass_rate && g.pass_rate.high, (v) => pct(v, 0))}`),
        el("td", { class: "num" }, fmt(g.weighted_score_mean, 1)),
        el("td", {}, gradeMix(g.grades, g.samples)))))));
    if (groups.workflow && groups.workflow.length) parts.push(groupTable("By workflow", groups.workflow));
    for (const [field, rows] of Object.entries(groups.slices || {})) {
      if (rows.length) parts.push(groupTable("By " + field, rows));
    }
    if (groups.agents && groups.agents.length) {
      parts.push(el("div", { class: "table-wrap" }, el("table", {},
        el("caption", {}, "By agent"),
        el("thead", {}, el("tr", {}, ["Agent", "Runs", "Steps", "Failures", "Retries", "Time",
          "Tokens", "Cost", "Scores"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, groups.agents.map((a) => el("tr", {},
          el("th", { scope: "row" }, a.name), el("td", { class: "num" }, a.runs),
          el("td", { class: "num" }, a.steps), el("td", { class: "num" }, a.failures),
          el("td", { class: "num" }, a.retries), el("td", { class: "num" }, seconds(a.duration_s)),
          el("td", { class: "num" }, a.tokens ?? "—"),
          el("td", { class: "num" }, isNum(a.cost_usd) ? "$" + a.cost_usd.toFixed(4) : "—"),
          el("td", { class: "wrap" }, Object.entries(a.scores || {})
            .map(([k, v]) => `${k} ${fmt(v)}`).join(", "))))))));
    }
    return parts.length ? section("Groups", ...parts) : null;
  }

  // ---------------------------------------------------------------- sample table

  const FILTERS = [["all", "All"], ["failed", "Failed"], ["passed", "Passed"],
    ["invalid", "Invalid"], ["gate_failed", "Gate failed"], ["error", "Errors"]];
  const SEARCH_DELAY_MS = 250;
  const INDEX_POLL_MS = 2000;

  // The table holds one page of rows at a time: the server searches, filters and sorts the
  // whole run, so a run of 100,000 samples costs the page no more than a run of fifty.
  function sampleTable(container, runId) {
    const state = { filter: "all", q: "", scorer: "", min: "", max: "", meta: "",
      sort: "index", order: "asc", offset: 0, after: null };
    // a PostgreSQL store pages by key: each page's token, to go back; the next page's token
    const tokens = [];
    let nextToken = null;
    let scorers = [];
    let live = false;
    const liveRows = new Map();
    const thead = el("thead", {});
    const tbody = el("tbody", { id: "sample-rows" });
    const status = el("p", { class: "muted", id: "sample-count", "aria-live": "polite" });
    const prev = el("button", { type: "button", id: "sample-prev", hidden: true,
      onclick: () => {
        state.offset = Math.max(0, state.offset - PAGE_SIZE);
        state.after = tokens.length ? tokens.pop() : null;
        load();
      } }, "← Previous");
    const next = el("button", { type: "button", id: "sample-next", hidden: true,
      onclick: () => {
        if (nextToken) {
          tokens.push(state.after);
          state.after = nextToken;
        }
        state.offset += PAGE_SIZE;
        load();
      } }, "Next →");
    const buttons = FILTERS.map(([key, label]) => el("button", {
      type: "button", "data-filter": key, "aria-pressed": String(key === state.filter),
      onclick: () => {
        state.filter = key;
        for (const b of buttons) b.setAttribute("aria-pressed", String(b.dataset.filter === key));
        restart();
      } }, label));
    const search = el("input", { type: "search", id: "sample-search", placeholder: "Search input, prediction, expected",
      "aria-label": "Search samples" });
    let timer = null;
    search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => { state.q = search.value.trim(); restart(); }, SEARCH_DELAY_MS);
    });
    const scorerSelect = el("select", { id: "range-scorer", "aria-label": "Scorer to filter on" },
      el("option", { value: "" }, "any scorer"));
    const minInput = el("input", { type: "number", id: "range-min", step: "any", placeholder: "min",
      "aria-label": "Minimum score" });
    const maxInput = el("input", { type: "number", id: "range-max", step: "any", placeholder: "max",
      "aria-label": "Maximum score" });
    const keys = el("datalist", { id: "meta-keys" });
    const metaInput = el("input", { type: "text", id: "meta-filter", list: "meta-keys",
      placeholder: "metadata key or key=value", "aria-label": "Metadata filter" });
    const apply = () => {
      state.scorer = scorerSelect.value;
      state.min = minInput.value;
      state.max = maxInput.value;
      state.meta = metaInput.value.trim();
      restart();
    };
    for (const input of [scorerSelect, minInput, maxInput, metaInput]) {
      input.addEventListener("change", apply);
    }
    container.append(section("Samples",
      el("div", { class: "toolbar", role: "group", "aria-label": "Filter samples" }, buttons),
      el("div", { class: "toolbar filters", role: "search" }, search, scorerSelect, minInput,
        maxInput, metaInput, keys),
      el("div", { class: "table-wrap" }, el("table", { class: "samples" }, thead, tbody)),
      el("div", { class: "pager" }, prev, status, next)));

    const columns = () => [
      ["index", "#"], ["id", "Sample"], ["input", "Input"], ["prediction", "Prediction"],
      [null, "Expected"], ...scorers.map((n) => ["score:" + n, n]), ["passed", "Result"],
      ["weighted_score", "Score"], [null, "Gate failures"], ["error", "Error"], [null, ""],
    ];

    function header() {
      thead.replaceChildren(el("tr", {}, columns().map(([key, label]) => {
        if (!key) return el("th", { scope: "col" }, label);
        const active = state.sort === key;
        const sort = active ? (state.order === "asc" ? "ascending" : "descending") : "none";
        return el("th", { scope: "col", "aria-sort": sort, "data-sort": key },
          el("button", { type: "button", class: "sort", onclick: () => {
            state.order = active && state.order === "asc" ? "desc" : "asc";
            state.sort = key;
            restart();
          } }, label, active ? (state.order === "asc" ? " ▲" : " ▼") : ""));
      })));
    }

    function scoreCell(s, name) {
      const value = (s.scores || {})[name];
      const err = (s.score_errors || {})[name];
      const malformed = (s.malformed || {})[name];
      // a None value without an error: the scorer found the sample not applicable
      const na = !err && value === null && name in (s.scores || {});
      return el("td", { class: "num", "data-scorer": name,
        title: err || (malformed ? "malformed judge verdict, scored as its fallback: " + malformed
          : na ? "not applicable" + (s.score_reasons && s.score_reasons[name] ? ": " + s.score_reasons[name] : "") : null) },
      err ? el("span", { class: "badge bad" }, "error") : na ? el("span", { class: "badge na" }, "n/a") : fmt(value, 2),
      malformed ? el("span", { class: "badge bad malformed" }, "malformed") : null);
    }

    function row(s) {
      // the full view is built when asked for, so the table holds one row per sample
      let detail = null;
      const toggle = el("button", { type: "button", class: "expand", "aria-expanded": "false",
        "aria-label": `Show sample ${s.id} in full`, onclick: () => {
          if (detail) {
            detail.remove();
            detail = null;
          } else {
            detail = el("tr", { class: "detail" },
              el("td", { colspan: String(columns().length) }, expanded(s)));
            main.after(detail);
          }
          toggle.setAttribute("aria-expanded", String(Boolean(detail)));
          toggle.textContent = detail ? "▾" : "▸";
        } }, "▸");
      const main = el("tr", { "data-sample": s.id },
        el("td", { class: "num" }, s.index),
        el("th", { scope: "row" }, link(sampleHref(runId, s.id), s.id, { class: "sample-link" })),
        el("td", { class: "clip", "data-field": "input" }, s.input || ""),
        el("td", { class: "clip", "data-field": "prediction" }, s.prediction || ""),
        el("td", { class: "clip", "data-field": "expected" }, s.expected || ""),
        scorers.map((n) => scoreCell(s, n)),
        el("td", {}, resultBadge(s), s.grade ? " " : null, s.grade ? gradeBadge(s.grade) : null),
        el("td", { class: "num" }, fmt(s.weighted_score, 1)),
        el("td", { class: "wrap" }, (s.gate_failures || []).join(", ")),
        el("td", { class: "clip" }, s.error || ""),
        el("td", {}, toggle));
      main.detach = () => { if (detail) detail.remove(); };
      return main;
    }

    function expanded(s) {
      const reasons = scorers.filter((n) => n in (s.scores || {})).map((n) => el("li", {},
        el("strong", {}, n), " ", fmt(s.scores[n], 3),
        s.score_reasons && s.score_reasons[n] ? el("span", { class: "reason" }, " — " + s.score_reasons[n]) : null,
        s.score_errors && s.score_errors[n] ? el("span", { class: "bad" }, " error: " + s.score_errors[n]) : null,
        s.malformed && s.malformed[n] ? el("span", { class: "bad" }, " malformed verdict: " + s.malformed[n]) : null));
      const meta = Object.entries(s.metadata || {}).map(([k, v]) => `${k}=${v}`).join(", ");
      return el("div", { class: "expanded" },
        el("dl", { class: "facts" }, [["Input", s.input], ["Prediction", s.prediction],
          ["Expected", s.expected], ["Metadata", meta]].filter(([, v]) => v)
          .map(([k, v]) => el("div", {}, el("dt", {}, k), el("dd", { class: "wrap" }, v)))),
        reasons.length ? el("ul", { class: "score-reasons" }, reasons) : null,
        link(sampleHref(runId, s.id), "Open the full sample"));
    }

    let loads = 0;
    // while the server indexes a large run, the pages in dataset order come straight from
    // the store; a search, filter or sort waits for the index, and says so
    let indexed = true;
    let runTotal = null;
    let counted = "";
    let watching = false;
    let quiet = false; // a live run: each new sample would start another index

    function restart() {
      state.offset = 0;
      state.after = null;
      tokens.length = 0;
      load();
    }

    function plain() {
      return state.filter === "all" && !state.q && !state.scorer && !state.meta &&
        state.sort === "index" && state.order === "asc";
    }

    function showCount() {
      status.textContent = indexed ? counted
        : `${counted} · indexing ${runTotal} samples for search, filters and sorts`;
    }

    function watchIndex() {
      // ask now and then whether the index is ready, to lift the notice
      if (watching || quiet) return;
      watching = true;
      let timer = null;
      onLeave(() => clearTimeout(timer));
      const poll = async () => {
        if (indexed || quiet || !container.isConnected) {
          watching = false;
          return;
        }
        try {
          const data = await api(`/api/runs/${encodeURIComponent(runId)}/samples?limit=1`);
          if (data.indexed !== false) {
            indexed = true;
            watching = false;
            showCount();
            return;
          }
        } catch (_) {
          // the next search reports a failed index: it waits for it and shows its error
        }
        timer = setTimeout(poll, INDEX_POLL_MS);
      };
      timer = setTimeout(poll, INDEX_POLL_MS);
    }

    async function load() {
      // filters fire one request each; only the newest may draw, or a slow earlier answer
      // would replace the rows under a count that no longer describes them
      const ticket = ++loads;
      if (!indexed && !plain()) {
        // never leave the unfiltered rows standing as if they answered the search
        const text = `Indexing ${runTotal} samples: the table shows the answer when it is ready…`;
        tbody.replaceChildren(el("tr", { class: "pending", id: "sample-indexing" },
          el("td", { colspan: String(columns().length) }, text)));
        tbody.setAttribute("aria-busy", "true");
        status.textContent = `Indexing ${runTotal} samples…`;
        prev.hidden = true;
        next.hidden = true;
      }
      const asked = {
        filter: state.filter, q: state.q, scorer: state.scorer || null,
        min: state.scorer ? state.min : null, max: state.scorer ? state.max : null,
        meta: state.meta, sort: state.sort, order: state.order };
      // count=fast: a count that would read the whole run comes as a lower bound, and the
      // exact one is asked after the rows are shown
      const data = await api(`/api/runs/${encodeURIComponent(runId)}/samples` + query({
        ...asked, limit: PAGE_SIZE, offset: state.offset, after: state.after, count: "fast" }));
      if (ticket !== loads) return;
      nextToken = data.next || null;
      indexed = data.indexed !== false;
      runTotal = data.run_total;
      tbody.removeAttribute("aria-busy");
      if (data.scorers.join("\n") !== scorers.join("\n")) {
        scorers = data.scorers;
        scorerSelect.replaceChildren(el("option", { value: "" }, "any scorer"),
          ...scorers.map((n) => el("option", { value: n, selected: n === state.scorer }, n)));
      }
      keys.replaceChildren(...data.metadata_keys.map((k) => el("option", { value: k })));
      header();
      tbody.replaceChildren();
      liveRows.clear();
      // keyed by id, so a stream event for a sample already listed replaces its row
      for (const s of data.samples) {
        const node = row(s);
        liveRows.set(s.id, node);
        tbody.append(node);
      }
      live = false;
      const count = data.count || { value: data.total, exact: true };
      const first = data.samples.length ? state.offset + 1 : 0;
      const last = state.offset + data.samples.length;
      const shown = (c) => {
        // a lower bound reads "3334+" until the exact count replaces it: never shown as exact
        counted = c.exact && c.value === data.run_total
          ? `${first}–${last} of ${c.value} samples`
          : `${first}–${last} of ${c.value}${c.exact ? "" : "+"} matching samples (of ${data.run_total})`;
        showCount();
      };
      shown(count);
      status.removeAttribute("aria-busy");
      if (!indexed) watchIndex();
      prev.hidden = state.offset === 0;
      // a PostgreSQL page says whether there is a next one (its token); pages need no total
      next.hidden = "next" in data ? !data.next : last >= count.value;
      if (!count.exact) {
        status.setAttribute("aria-busy", "true");
        try {
          const exact = await api(`/api/runs/${encodeURIComponent(runId)}/samples` + query({
            ...asked, limit: 1, count: "exact" }));
          if (ticket !== loads) return;
          shown(exact.count);
        } catch (_) {
          // the bound stays, marked as one; the next load asks again
        } finally {
          if (ticket === loads) status.removeAttribute("aria-busy");
        }
      }
    }

    function matches(s, failures) {
      if (state.filter === "failed") return s.passed === false;
      if (state.filter === "passed") return s.passed === true;
      if (state.filter === "invalid") return Boolean(s.invalid);
      if (state.filter === "gate_failed") return failures.length > 0;
      if (state.filter === "error") return Boolean(s.error);
      return !state.q && !state.meta && !state.scorer;
    }

    function addLive(event) {
      const failures = Object.entries(event.hard_gates || {})
        .filter(([, g]) => g && g.passed === false).map(([name]) => name);
      const s = { ...event, gate_failures: failures };
      if (!matches(s, failures)) return;
      // live rows fill the first page only; the pager reaches the rest once they are stored
      if (!liveRows.has(s.id) && liveRows.size >= PAGE_SIZE) return;
      const fresh = Object.keys(s.scores || {}).filter((n) => !scorers.includes(n));
      if (fresh.length || !live) {
        scorers = [...new Set([...scorers, ...fresh])].sort();
        header();
        live = true;
      }
      const node = row(s);
      const old = liveRows.get(s.id);
      if (old) {
        old.detach();
        old.replaceWith(node);
      } else {
        tbody.append(node);
      }
      liveRows.set(s.id, node);
      status.textContent = `${liveRows.size} samples shown so far`;
    }

    return { reload: () => load(), addLive, quiet: (on) => { quiet = on; } };
  }

  // ---------------------------------------------------------------- sample page

  async function samplePage(main, runId, sampleId) {
    // the id goes in the query: in a path, "a/b", "." or ".." would be resolved, not looked up
    const s = await api(`/api/runs/${encodeURIComponent(runId)}/sample` + query({ id: sampleId }));
    const verdict = s.verdict || {};
    const ev = verdict.workflow || null;
    main.append(
      el("p", { class: "crumbs" }, link("#/", "Runs"), " / ", link(runHref(runId), runId), " / ",
        s.id),
      el("h1", {}, "Sample ", s.id),
      el("dl", { class: "facts" }, [
        ["Result", resultBadge(s)],
        ["Grade", gradeBadge(verdict.grade)],
        ["Weighted score", fmt(verdict.weighted_score, 1) + coverageNote(ev)],
        ["Index", s.index],
        ["Latency", seconds(s.latency_s)],
        ["Tokens", `${s.input_tokens ?? "—"} in / ${s.output_tokens ?? "—"} out`],
        ["Cost", isNum(s.cost) ? "$" + s.cost.toFixed(4) : "—"],
        ["Retries", s.retries ?? 0],
      ].map(([k, v]) => el("div", {}, el("dt", {}, k), el("dd", {}, v)))));
    if (s.error) main.append(errorBox({ message: "Target error: " + s.error }));
    main.append(el("div", { class: "grid-2" },
      section("Prompt", textBlock(readable(s.input !== null && typeof s.input === "object"
        ? s.input : s.prompt), "prompt")),
      section("Prediction", textBlock(readable(s.prediction), "prediction"))));
    if (s.expected !== null && s.expected !== undefined) {
      main.append(section("Expected", textBlock(readable(s.expected), "expected")));
    }
    if (ev) main.append(...gradingSections(ev));
    if (s.scores && Object.keys(s.scores).length) main.append(scoresSection(s.scores));
    if (s.workflow_run) main.append(timelineSection(s.workflow_run));
    if (s.conversation) main.append(conversationSection(s.conversation));
    if (s.metadata && Object.keys(s.metadata).length) {
      main.append(section("Metadata", textBlock(s.metadata, "metadata")));
    }
  }

  // a conversation's transcript: every turn with its role and source, tool calls with their
  // arguments and results, the stop reason, a failure, the branch turn, the simulator's flags;
  // all of it is data from the run, written as text
  function conversationSection(c) {
    if (c.error) return section("Conversation", errorBox({ message: c.error }));
    const outcome = c.outcome || {};
    const fidelity = c.fidelity;
    const flags = (fidelity && fidelity.flags) || [];
    const facts = el("dl", { class: "facts", id: "conversation-facts" }, [
      ["Scenario", c.scenario_id],
      ["Epoch", c.epoch],
      ["Turns", (c.turns || []).length],
      ["Stop reason", outcome.stop_reason],
      ["Completed", badge(outcome.completed, ["yes", "no"])],
      ["Branched at", c.branched_at === null || c.branched_at === undefined
        ? "—" : "turn " + c.branched_at],
      ["Simulated user", !fidelity ? "not checked"
        : el("span", { class: "badge " + (flags.length ? "bad" : "ok") },
          flags.length ? "invalid" : "valid")],
    ].map(([k, v]) => el("div", {}, el("dt", {}, k), el("dd", {}, v))));
    const failure = outcome.failure ? errorBox({ message:
      `Failed (${outcome.failure_type || "error"}): ${outcome.failure}` }) : null;
    const flagged = flags.length ? el("div", { class: "error-box", id: "fidelity-flags" },
      el("strong", {}, "Invalid: the simulated user failed fidelity (not the target's fault)"),
      el("ul", {}, flags.map((f) => el("li", {}, `${f.kind} at turn ${f.turn}: ${f.evidence}`))))
      : null;
    const turns = (c.turns || []).map((t, i) => turnItem(t, i + 1, c.branched_at));
    return section("Conversation", facts, failure, flagged,
      el("ol", { class: "transcript", id: "transcript" }, turns));
  }

  function turnItem(t, number, branchedAt, regressedAt) {
    const branch = number === branchedAt;
    const regressed = number === regressedAt;
    const head = el("div", { class: "turn-head" },
      el("span", { class: "turn-number" }, "#" + number), " ",
      el("strong", { class: "turn-role" }, t.role), " ",
      el("span", { class: "badge source source-" + t.source }, t.source),
      branch ? el("span", { class: "badge warn branch" }, "branch: first changed answer") : null,
      regressed ? el("span", { class: "badge bad regressed" }, "first regressed turn") : null,
      t.tool_call_id ? el("span", { class: "muted" }, " result of call " + t.tool_call_id) : null,
      isNum(t.latency_s) ? el("span", { class: "muted" }, " · " + seconds(t.latency_s)) : null);
    const calls = (t.tool_calls || []).map((call) => el("li", { class: "tool-call" },
      el("code", {}, `${call.name}(${call.arguments})`),
      call.error ? el("p", { class: "tool-error" }, "error: " + call.error)
        : call.result !== null && call.result !== undefined
          ? el("pre", { class: "text-block tool-result" }, call.result) : null));
    return el("li", { class: `turn turn-${t.role}${branch ? " branched" : ""}` +
      (regressed ? " regressed" : ""),
      "data-turn": number, "data-source": t.source },
      head,
      t.content ? el("pre", { class: "text-block turn-content" }, t.content) : null,
      calls.length ? el("ul", { class: "tool-calls" }, calls) : null);
  }

  function textBlock(value, name) {
    const text = asText(value);
    return text ? el("pre", { class: "text-block", tabindex: "0", "data-field": name,
      "aria-label": name }, text) : el("p", { class: "muted" }, "(empty)");
  }

  function gradingSections(ev) {
    const out = [];
    const all = ev.gate_results && ev.gate_results.length ? ev.gate_results : ev.gate_failures;
    // failures first: they are why the sample is being looked at
    const gates = [...(all || [])].sort((a, b) => Number(a.passed) - Number(b.passed));
    if (gates && gates.length) {
      out.push(section("Gates", el("ul", { class: "gate-list", id: "gate-results" },
        gates.map((g) => el("li", { class: g.passed ? "gate ok" : "gate bad" },
          badge(g.passed), " ", el("strong", {}, g.name),
          g.reason ? el("p", { class: "reason" }, g.reason) : null,
          g.evidence && Object.keys(g.evidence).length
            ? el("details", {}, el("summary", {}, "Evidence"), textBlock(g.evidence, "evidence"))
            : null)))));
    }
    if (ev.floor_violations && ev.floor_violations.length) {
      out.push(section("Floor violations", el("ul", { id: "floor-violations" },
        ev.floor_violations.map((f) => el("li", {}, floorText(f))))));
    }
    if (ev.criteria && ev.criteria.length) {
      out.push(section("Criteria", el("div", { class: "table-wrap" }, el("table", {},
        el("thead", {}, el("tr", {}, ["Criterion", "Raw", "Normalized", "Adjusted", "Weight",
          "Floor", "Source"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, ev.criteria.map((c) => el("tr", { class: c.floor_passed === false ? "below" : "" },
          el("th", { scope: "row" }, c.name), el("td", { class: "num" }, rawText(c.raw)),
          el("td", { class: "num" }, fmt(c.normalized)),
          el("td", { class: "num" }, fmt(c.adjusted)), el("td", { class: "num" }, fmt(c.weight)),
          el("td", {}, isNum(c.floor) ? `${fmt(c.floor)} ${c.floor_passed ? "✓" : "✗ below"}` : "—"),
          el("td", {}, c.source || "—"))))))));
    }
    return out;
  }

  function scoresSection(scores) {
    const rows = Object.entries(scores).map(([name, sc]) => el("tr", {},
      el("th", { scope: "row" }, name),
      el("td", { class: "num" }, fmt(sc.value, 3)),
      el("td", { class: "num" }, sc.raw === null || sc.raw === undefined ? "—" : rawText(sc.raw)),
      el("td", { class: "wrap reason" }, sc.reason || ""),
      el("td", { class: "wrap" }, sc.error || (sc.malformed ? "malformed verdict: " + sc.malformed : ""))));
    return section("Scores", el("div", { class: "table-wrap" }, el("table", { id: "scores" },
      el("thead", {}, el("tr", {}, ["Scorer", "Value", "Raw", "Reason", "Error"].map((h) =>
        el("th", { scope: "col" }, h)))), el("tbody", {}, rows))));
  }

  function timelineSection(wr) {
    const steps = wr.steps || [];
    // steps carry their own start offset when the server knows it; otherwise lay them end to end
    let cursor = 0;
    const placed = steps.map((st) => {
      const start = isNum(st.start_s) ? st.start_s : cursor;
      const dur = isNum(st.duration_s) ? st.duration_s : 0;
      cursor = Math.max(cursor, start + dur);
      return { ...st, start, dur };
    });
    const total = Math.max(1e-9, isNum(wr.duration_s) ? wr.duration_s : 0, cursor);
    const width = 1000, rowH = 30, labelW = 220, valueW = 190, top = 20;
    const plotW = width - labelW - valueW;
    const x = (t) => labelW + (t / total) * plotW;
    const height = top + placed.length * rowH + 6;
    const rows = placed.map((st, k) => {
      const y = top + k * rowH;
      const label = `${st.name}${st.agent ? " · " + st.agent : ""}`;
      const note = `${seconds(st.dur)}${st.retries ? `, ${st.retries} retr${st.retries === 1 ? "y" : "ies"}` : ""}` +
        `${st.tool_calls ? `, ${st.tool_calls} tool call${st.tool_calls === 1 ? "" : "s"}` : ""}`;
      return svg("g", { class: "step status-" + (st.status || "unknown") },
        svg("text", { x: labelW - 8, y: y + rowH * 0.62, "text-anchor": "end", text: label }),
        svg("rect", { x: x(st.start), y: y + 5, width: Math.max(2, x(st.start + st.dur) - x(st.start)),
          height: rowH - 10, rx: 3, class: "step-bar" },
        svg("title", { text: `${st.name} (${st.status}) ${note}${st.error ? ": " + st.error : ""}` })),
        svg("text", { x: labelW + plotW + 8, y: y + rowH * 0.62, class: "value",
          text: `${st.status} · ${note}` }));
    });
    const axis = [0, 0.5, 1].map((f) => svg("text", { x: x(f * total), y: 12,
      "text-anchor": f === 0 ? "start" : f === 1 ? "end" : "middle", class: "axis-label",
      text: seconds(f * total) }));
    const plot = chart(`Step timeline: ${steps.length} steps over ${seconds(total)}, run ${wr.status}`,
      width, height, ...axis, ...rows);
    plot.id = "step-timeline";
    const errors = placed.filter((st) => st.error).map((st) =>
      el("li", {}, el("strong", {}, st.name), ": ", st.error));
    const legend = el("p", { class: "legend" }, ["success", "failed", "skipped"].map((st) =>
      el("span", { class: "legend-item status-" + st }, el("span", { class: "swatch" }), st)));
    return section("Step timeline", el("p", {}, `Workflow ${wr.status || ""}, ${seconds(wr.duration_s)}`),
      el("div", { class: "chart-scroll" }, plot), legend,
      errors.length ? el("ul", { class: "step-errors" }, errors) : null,
      stepTable(placed));
  }

  function stepTable(steps) {
    return el("details", {}, el("summary", {}, "Steps as a table"),
      el("div", { class: "table-wrap" }, el("table", {},
        el("thead", {}, el("tr", {}, ["Step", "Agent", "Status", "Duration", "Retries", "Model",
          "Tool calls", "Error"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, steps.map((st) => el("tr", {}, el("th", { scope: "row" }, st.name),
          el("td", {}, st.agent || "—"), el("td", {}, st.status || "—"),
          el("td", { class: "num" }, seconds(st.duration_s)),
          el("td", { class: "num" }, st.retries ?? 0), el("td", {}, st.model || "—"),
          el("td", { class: "num" }, st.tool_calls ?? 0),
          el("td", { class: "wrap" }, st.error || "")))))));
  }

  // ---------------------------------------------------------------- compare page

  async function comparePage(main, params) {
    const baseline = params.get("baseline") || "";
    const candidate = params.get("candidate") || "";
    main.append(el("h1", {}, "Compare runs"));
    const list = await api("/api/runs" + query({ limit: 200 }));
    const picker = (id, label, value) => {
      const select = el("select", { id, name: id },
        el("option", { value: "" }, "— choose a run —"),
        list.runs.map((r) => el("option", { value: r.id, selected: r.id === value },
          [r.name, r.model, when(r.created_at), r.status, r.id].filter(Boolean).join(" · "))));
      return [el("label", { for: id }, label), select];
    };
    const [bLabel, bSelect] = picker("baseline", "Baseline", baseline || suggestBaseline(list.runs, candidate));
    const [cLabel, cSelect] = picker("candidate", "Candidate", candidate);
    main.append(el("form", { class: "toolbar pickers", onsubmit: (event) => {
      event.preventDefault();
      location.hash = "#/compare" + query({ baseline: bSelect.value, candidate: cSelect.value });
    } }, el("div", {}, bLabel, bSelect), el("div", {}, cLabel, cSelect),
    el("button", { type: "submit" }, "Compare")));
    if (!baseline || !candidate) {
      main.append(el("p", { class: "muted" }, "Pick a baseline and a candidate run."));
      return;
    }
    const c = await api("/api/compare" + query({ baseline, candidate }));
    main.append(...comparison(c));
  }

  function suggestBaseline(runs, candidateId) {
    // the most recent completed run of the same name, as `aieval compare NAME` would pick
    const cand = runs.find((r) => r.id === candidateId);
    if (!cand) return "";
    const match = runs.find((r) => r.id !== candidateId && r.name === cand.name && r.status === "completed");
    return match ? match.id : "";
  }

  function comparison(c) {
    const out = [];
    const d = c.decision || {};
    // three outcomes: promote, block, inconclusive (not enough evidence either way)
    const outcome = d.outcome || (d.promote ? "promote" : "block");
    const titles = { promote: "Promote", block: "Blocked", inconclusive: "Inconclusive" };
    out.push(el("section", { class: "decision " + outcome,
      id: "decision", "aria-labelledby": "decision-title" },
    el("h2", { id: "decision-title" }, titles[outcome] || outcome),
    el("p", { class: "summary" }, d.summary || ""),
    el("ul", { class: "rules" }, (d.rules || []).map((r) => {
      const undecided = r.outcome === "inconclusive";
      return el("li", { class: undecided ? "warn" : (r.passed ? "ok" : "bad") },
        undecided ? el("span", { class: "badge warn" }, "inconclusive") : badge(r.passed, ["pass", "fail"]),
        " ", el("strong", {}, r.rule), ": ", r.reason || "");
    })),
    d.warnings && d.warnings.length ? el("ul", { class: "warnings" },
      d.warnings.map((w) => el("li", {}, w))) : null));
    const bl = c.baseline || {}, cd = c.candidate || {};
    out.push(el("dl", { class: "facts" }, [
      ["Baseline", link(runHref(bl.id), [bl.name, bl.model, bl.id].filter(Boolean).join(" · "))],
      ["Candidate", link(runHref(cd.id), [cd.name, cd.model, cd.id].filter(Boolean).join(" · "))],
      ["Paired", c.paired], ["Only baseline", c.only_baseline_count ?? 0],
      ["Only candidate", c.only_candidate_count ?? 0], ["Unchanged", c.unchanged ?? 0],
      c.tie_break && c.tie_break.winner ? ["Tie-break", `${c.tie_break.winner}: ${c.tie_break.reason || ""}`] : null,
    ].filter(Boolean).map(([k, v]) => el("div", {}, el("dt", {}, k), el("dd", {}, v)))));
    out.push(metricsSection(c.metrics || []));
    out.push(changeList("Regressions", c.regressions || [], c.regressions_count, bl.id, cd.id));
    out.push(changeList("Improvements", c.improvements || [], c.improvements_count, bl.id,
      cd.id));
    return out;
  }

  // the paired n, plus the examples only one side scored (they are not in the row's numbers)
  function pairedCount(m) {
    if (m.n == null) return "—";
    const parts = [["candidate_missing", "candidate"], ["baseline_missing", "baseline"]]
      .filter(([k]) => m[k]).map(([k, side]) => `${m[k]} unscored in ${side}`);
    return parts.length ? `${m.n} (${parts.join(", ")})` : String(m.n);
  }

  // as the report formats name it: "one-sided 95% bounds, paired t-test", "95% CI, ..."
  function metricMethod(m) {
    if (!isNum(m.low) || !isNum(m.high)) return "—";
    const method = String(m.method || "paired percentile bootstrap");
    const level = `${Math.round(100 * (isNum(m.confidence) ? m.confidence : 0.95))}%`;
    return `${m.one_sided ? `one-sided ${level} bounds` : `${level} CI`}, ${method}`;
  }

  function metricsSection(metrics) {
    const betterHigher = (name) => !name.startsWith("gate:");
    const points = metrics.filter((m) => m.name === "weighted_score");
    const rates = metrics.filter((m) => m.name !== "weighted_score");
    const rowsOf = (ms) => ms.map((m) => ({ label: m.name, delta: m.delta, low: m.low,
      high: m.high, betterHigher: betterHigher(m.name) }));
    const plots = el("div", { id: "forest" });
    if (points.length) {
      plots.append(forestPlot("Weighted score delta (points) with interval", rowsOf(points), "pts"));
    }
    if (rates.length) {
      plots.append(forestPlot("Rate and mean deltas (percentage points) with intervals",
        rowsOf(rates), "pct"));
    }
    const table = el("div", { class: "table-wrap" }, el("table", {},
      el("thead", {}, el("tr", {}, ["Metric", "Baseline", "Candidate", "Delta", "Interval", "Method", "n"]
        .map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, metrics.map((m) => el("tr", {}, el("th", { scope: "row" }, m.name),
        el("td", { class: "num" }, fmt(m.baseline, 3)), el("td", { class: "num" }, fmt(m.candidate, 3)),
        el("td", { class: "num" }, signed(m.delta, 3)),
        el("td", { class: "num" }, interval(m.low, m.high, (v) => fmt(v, 3))),
        el("td", { class: "method" }, metricMethod(m)),
        el("td", { class: "num" }, pairedCount(m)))))));
    return section("Metric deltas", plots, table);
  }

  function changeList(title, items, total, baselineId, candidateId) {
    if (!items.length) return section(title, el("p", { class: "muted" }, "None."));
    const side = (x) => x ? `${x.passed ? "pass" : "fail"} ${x.grade || ""} ${fmt(x.weighted_score, 1)}` : "—";
    const rows = items.map((r) => el("tr", {},
      el("th", { scope: "row" }, link(sampleHref(candidateId, r.id), r.id)),
      el("td", {}, link(sampleHref(baselineId, r.id), side(r.baseline),
        { "aria-label": `Baseline sample ${r.id}` })),
      el("td", {}, side(r.candidate)),
      el("td", { class: "num" }, signed(r.delta, 1)),
      el("td", { class: "wrap" }, (r.changes || []).join("; ")),
      el("td", {}, link(pairHref(baselineId, candidateId, r.id), "Side by side",
        { class: "pair-link", "aria-label": `Sample ${r.id} side by side` }))));
    // worst (or best) first: the head of the list is what a reviewer reads; the rest on demand
    const body = el("tbody", {}, rows.slice(0, CHANGES_SHOWN));
    const more = rows.length > CHANGES_SHOWN ? el("button", { type: "button", class: "show-more",
      onclick: () => { body.append(...rows.slice(CHANGES_SHOWN)); more.remove(); } },
    `Show all ${rows.length}`) : null;
    const cut = isNum(total) && total > items.length
      ? el("p", { class: "muted" }, `${items.length} of ${total} listed; ` +
        `aieval diff ${baselineId} ${candidateId} --limit ${total} lists every one.`) : null;
    return section(`${title} (${isNum(total) ? total : items.length})`,
      el("div", { class: "table-wrap" }, el("table", { class: "changes", id: title.toLowerCase() },
        el("thead", {}, el("tr", {}, ["Sample", "Baseline", "Candidate", "Delta", "Changes", ""]
          .map((h) => el("th", { scope: "col" }, h)))), body)), more, cut);
  }

  // ---------------------------------------------------------------- one example, side by side

  function pairHref(baselineId, candidateId, sampleId) {
    const part = pathPart(sampleId);
    return part === null ? null : "#/compare/samples/" + part +
      query({ baseline: baselineId, candidate: candidateId });
  }

  async function pairPage(main, sampleId, params) {
    const baseline = params.get("baseline") || "", candidate = params.get("candidate") || "";
    const p = await api("/api/compare/sample" + query({ id: sampleId, baseline, candidate }));
    main.append(
      el("p", { class: "crumbs" }, link("#/compare" + query({ baseline, candidate }), "Comparison"),
        " / ", p.id),
      el("h1", {}, "Sample ", p.id, " side by side"));
    const column = (title, run, s, side) => el("div", { class: "card pair-side", id: "pair-" + side },
      el("h2", {}, title, " ", link(runHref(run.id), [run.name, run.model].filter(Boolean).join(" · "))),
      s ? [
        el("p", {}, resultBadge(s), " ", gradeBadge(s.verdict && s.verdict.grade)),
        s.error ? errorBox({ message: "Target error: " + s.error }) : null,
        textBlock(readable(s.prediction), side + "-prediction"),
        pairScores(s.scores || {}),
      ] : el("p", { class: "muted" }, "This run has no such sample."));
    const first = p.candidate || p.baseline;
    main.append(
      section("Input", textBlock(readable(first.input !== null && typeof first.input === "object"
        ? first.input : first.prompt), "prompt")),
      first.expected !== null && first.expected !== undefined
        ? section("Expected", textBlock(readable(first.expected), "expected")) : null,
      el("div", { class: "grid-2", id: "pair" },
        column("Baseline", p.baseline_run, p.baseline, "baseline"),
        column("Candidate", p.candidate_run, p.candidate, "candidate")),
      section("Prediction diff", diffBlock(p.diff)),
      pairTranscripts(p));
  }

  // two conversations side by side, the first turn where the candidate did worse marked on
  // both; every text is data from the runs, written as text
  function pairTranscripts(p) {
    const b = p.baseline && p.baseline.conversation, c = p.candidate && p.candidate.conversation;
    if (!b && !c) return null;
    const found = p.regressed_turn || {};
    const at = found.turn ? found.turn.turn : null;
    const line = found.turn
      ? el("p", { class: "error-box", id: "regressed-turn", role: "status" },
        el("strong", {}, `First regressed turn: #${at} (exchange ${found.turn.exchange})`),
        ` · ${found.turn.check}: baseline ${fmt(found.turn.baseline, 3)} → candidate ` +
        fmt(found.turn.candidate, 3))
      : el("p", { class: "muted", id: "regressed-turn" },
        found.note || "No turn where the candidate did worse.");
    const side = (title, conv, name) => el("div", { class: "card pair-side", id: "transcript-" + name },
      el("h3", {}, title),
      !conv ? el("p", { class: "muted" }, "No conversation.")
        : conv.error ? errorBox({ message: conv.error })
          : el("ol", { class: "transcript" },
            (conv.turns || []).map((t, i) => turnItem(t, i + 1, conv.branched_at, at))));
    return section("Conversations side by side", line,
      el("div", { class: "grid-2", id: "pair-transcripts" },
        side("Baseline", b, "baseline"), side("Candidate", c, "candidate")));
  }

  function pairScores(scores) {
    const rows = Object.entries(scores).map(([name, sc]) => el("tr", { "data-scorer": name },
      el("th", { scope: "row" }, name), el("td", { class: "num" }, fmt(sc.value, 3)),
      el("td", { class: "wrap reason" }, sc.error ? "error: " + sc.error
        : sc.malformed ? "malformed verdict: " + sc.malformed : sc.reason || "")));
    return rows.length ? el("table", { class: "pair-scores" }, el("thead", {}, el("tr", {},
      ["Scorer", "Value", "Reason"].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, rows)) : null;
  }

  function diffBlock(diff) {
    if (!diff || diff.identical) return el("p", { class: "muted", id: "diff" }, "The predictions are identical.");
    if (!diff.segments) return el("p", { class: "muted", id: "diff" }, diff.skipped || "No diff.");
    // each segment is text in its own element: markup in an output is shown, never parsed
    return el("pre", { class: "text-block diff", id: "diff", tabindex: "0", "aria-label": "diff" },
      diff.segments.map(([op, text]) => op === "equal" ? text
        : el(op === "insert" ? "ins" : "del", {}, text)));
  }

  // ---------------------------------------------------------------- start

  document.getElementById("skip-link").addEventListener("click", (event) => {
    // the hash is the router's, so focus the content instead of navigating
    event.preventDefault();
    document.getElementById("main").focus();
  });
  window.addEventListener("hashchange", route);
  route();
})();
