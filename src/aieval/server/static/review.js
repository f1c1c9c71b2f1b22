// aieval review page: a reviewer labels a queue's items, blind, by keyboard.
// Every sample text is untrusted, so it reaches the page only through textContent. The judge's
// score and reason come only in the answer to a saved label, and are shown only then.
// Keys: p pass, f fail, 1-5 a score (0, .25, .5, .75, 1), n note, s or Enter save, k skip;
// after a save, Enter or space goes to the next item.
"use strict";

(() => {
  const main = document.getElementById("main");
  const announcer = document.getElementById("announcer");
  const params = new URLSearchParams(window.location.search);
  const queueId = params.get("queue");
  const state = { item: null, choice: null, revealed: false, skipped: [], saving: false };

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "text") node.textContent = String(value);
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function shown(value) {
    if (value === null || value === undefined) return "—";
    return typeof value === "string" ? value : JSON.stringify(value, null, 2);
  }

  function say(message) {
    announcer.textContent = message;
  }

  async function api(method, path, body) {
    const response = await fetch(path, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin",
    });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) {
      const error = new Error(data.message || `${response.status}`);
      error.status = response.status;
      throw error;
    }
    return data;
  }

  function render(...children) {
    main.replaceChildren(...children);
    main.setAttribute("aria-busy", "false");
  }

  function failure(error) {
    const hint = error.status === 403 || error.status === 401
      ? "Open the server's address with your own review token: /?token=YOUR_TOKEN"
      : "Reload the page to try again.";
    render(el("section", { id: "review-error", role: "alert" },
      el("h1", { text: "Cannot review" }), el("p", { text: error.message }), el("p", { text: hint })));
  }

  function progressText(queue) {
    return `${queue.yours} labelled by you · ${queue.labels} of ${queue.wanted} labels · ` +
      `${queue.complete} of ${queue.items} items complete`;
  }

  async function listQueues() {
    const data = await api("GET", "/api/review/queues");
    const rows = data.queues.map((q) => el("li", {},
      el("a", { href: `/static/review.html?queue=${encodeURIComponent(q.id)}`, text: q.name }),
      ` · judge ${q.judge.label} · ${progressText(q)}`));
    render(el("h1", { text: "Review queues" }),
      rows.length ? el("ul", { id: "queues" }, rows) : el("p", { text: "No review queues yet." }));
  }

  async function next() {
    state.item = null; state.choice = null; state.revealed = false;
    const data = await api("POST", `/api/review/queues/${encodeURIComponent(queueId)}/next`,
      { skip: state.skipped });
    if (!data.item) {
      render(el("h1", { text: data.queue.name }),
        el("p", { id: "review-done", text: "Nothing left for you in this queue. Thank you." }),
        el("p", { id: "review-progress", text: progressText(data.queue) }));
      say("queue done");
      return;
    }
    state.item = data.item;
    showItem(data.item, data.queue);
  }

  function block(title, value, id) {
    return el("section", { class: "review-block" },
      el("h2", { text: title }), el("pre", { id, class: "review-text", text: shown(value) }));
  }

  function showItem(item, queue) {
    const choice = el("p", { id: "review-choice", text: "Your label: none yet (p pass, f fail, 1-5 score)" });
    const note = el("textarea", { id: "review-note", rows: "3", maxlength: "4000",
      "aria-label": "Note (n)" });
    render(
      el("h1", { text: queue.name }),
      el("p", { id: "review-progress", text: progressText(queue) }),
      el("article", { id: "review-item", "data-ord": String(item.ord) },
        el("p", { class: "muted", text: `Sample ${item.sample_id} · run ${item.run_id}` }),
        block("Input", item.input, "review-input"),
        item.prompt ? block("Prompt", item.prompt, "review-prompt") : null,
        block("Answer", item.prediction, "review-answer"),
        block("Expected", item.expected, "review-expected")),
      el("div", { class: "review-actions" },
        el("button", { type: "button", onclick: () => choose({ passed: true }), text: "Pass (p)" }),
        el("button", { type: "button", onclick: () => choose({ passed: false }), text: "Fail (f)" }),
        el("button", { type: "button", onclick: save, text: "Save (s)" }),
        el("button", { type: "button", onclick: skip, text: "Skip (k)" })),
      choice,
      el("label", { for: "review-note", text: "Note (n)" }), note,
      el("section", { id: "review-reveal", hidden: true }));
    say(`item ${item.ord}`);
  }

  function choose(choice) {
    if (!state.item || state.revealed) return;
    state.choice = choice;
    const text = "passed" in choice ? (choice.passed ? "pass" : "fail") : `score ${choice.score}`;
    document.getElementById("review-choice").textContent = `Your label: ${text}`;
  }

  async function save() {
    if (!state.item || state.revealed || state.saving) return;
    if (!state.choice) { say("choose pass, fail or a score first"); return; }
    state.saving = true;
    const note = document.getElementById("review-note").value;
    try {
      const url = `/api/review/queues/${encodeURIComponent(queueId)}/items/${state.item.ord}/label`;
      const data = await api("POST", url, { ...state.choice, note });
      state.revealed = true;
      reveal(data);
    } catch (error) {
      say(error.message);
      document.getElementById("review-choice").textContent = `Not saved: ${error.message}`;
    } finally {
      state.saving = false;
    }
  }

  // The queue's live figures: design-weighted when the queue's design covers the labels, else
  // the labelled items' own with the reason; every figure with its 95% interval.
  function figuresText(agreement) {
    if (agreement.problem) return agreement.problem;
    const ci = (value) => value === null
      ? "—" : `${value.estimate.toFixed(2)} (${value.low.toFixed(2)}–${value.high.toFixed(2)})`;
    const kappa = agreement.judge_human_kappa === null
      ? `n/a (${agreement.judge_human_undefined})` : ci(agreement.judge_human_kappa);
    const name = agreement.weighted ? "weighted kappa" : "kappa";
    const how = agreement.weighted ? "weighted by the queue's design" : `unweighted: ${agreement.unweighted}`;
    return `${name} ${kappa} · TPR ${ci(agreement.tpr)} · TNR ${ci(agreement.tnr)} · ` +
      `base rate ${agreement.base_rate.toFixed(2)} · ${agreement.items} items, ` +
      `${agreement.labels} labels · ${how}`;
  }

  function reveal(data) {
    const judge = data.judge;
    const agreement = data.agreement;
    const verdict = judge.passed === null ? "no verdict" : judge.passed ? "pass" : "fail";
    const kappa = agreement.kappa === null ? "—" : agreement.kappa.toFixed(2);
    const box = document.getElementById("review-reveal");
    box.replaceChildren(
      el("h2", { text: "The judge said" }),
      el("p", { id: "judge-score", text: `${verdict} · score ${shown(judge.score)}` }),
      el("pre", { id: "judge-reason", class: "review-text", text: shown(judge.reason) }),
      el("p", { id: "review-agreement",
        text: `Agreement so far: ${agreement.agree} of ${agreement.items} labelled items agree with the judge · kappa ${kappa}` }),
      el("p", { id: "review-figures", class: "muted", text: figuresText(agreement) }),
      el("p", { class: "muted", text: "Enter or space: next item" }));
    box.hidden = false;
    document.getElementById("review-progress").textContent = progressText(data.queue);
    say("saved; the judge's verdict is shown");
  }

  async function skip() {
    if (!state.item || state.revealed) return;
    const ord = state.item.ord;
    await api("POST", `/api/review/queues/${encodeURIComponent(queueId)}/items/${ord}/release`);
    state.skipped.push(ord);
    await next();
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const typing = event.target instanceof HTMLTextAreaElement;
    if (typing) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    const key = event.key;
    if (state.revealed) {
      if (key === "Enter" || key === " ") { event.preventDefault(); next().catch(failure); }
      return;
    }
    if (key === "p") choose({ passed: true });
    else if (key === "f") choose({ passed: false });
    else if (/^[1-5]$/.test(key)) choose({ score: (Number(key) - 1) / 4 });
    else if (key === "n") { event.preventDefault(); document.getElementById("review-note")?.focus(); }
    else if (key === "s" || key === "Enter") { event.preventDefault(); save(); }
    else if (key === "k") skip().catch(failure);
  });

  (queueId ? next() : listQueues()).catch(failure);
})();
