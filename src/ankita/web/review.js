// Ankita review page: every read and write goes through the /v1 HTTP API with the user's token.
// Text from the store is only ever set with textContent, never parsed as HTML.
// Every view is one page of rows read in one request; totals come from X-Total-Count.
"use strict";

const TOKEN_KEY = "ankita-token";
const FACTS_PAGE = 50;
const CONFLICTS_PAGE = 20;
const $ = (id) => document.getElementById(id);
let searchTimer = null;
const factsState = { offset: 0, sort: "said", desc: false };
const conflictsState = { offset: 0, possible: false };
const HISTORY_PAGE = 50;
const historyState = { offset: 0 };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// One request; resolves to [body, total] where total is X-Total-Count (or null).
async function request(method, path, body) {
  const headers = { "Accept": "application/json" };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers["Authorization"] = "Bearer " + token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = null;
  try { data = await response.json(); } catch (_) { data = null; }
  if (!response.ok) {
    const error = (data && data.error) || {};
    throw new ApiError(response.status, error.code || "http_error",
                       error.message || `HTTP ${response.status}`);
  }
  const total = response.headers.get("X-Total-Count");
  return [data, total === null ? null : Number(total)];
}

async function api(method, path, body) {
  return (await request(method, path, body))[0];
}

function say(message, kind) {
  const status = $("status");
  status.className = kind || "";
  status.replaceChildren(...(Array.isArray(message) ? message : [message]));
}

function fail(error) {
  if (error instanceof ApiError && error.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    clearEverything();
    show("login");
    say("This server needs a valid token.", "error");
    return;
  }
  say(error instanceof ApiError ? `${error.message} (${error.code})` : String(error), "error");
}

const VIEWS = ["login", "facts", "conflicts", "ask", "fact", "settings", "tasks"];

// Show one view, mark its nav link current and move focus to its heading.
function show(view, focus) {
  for (const name of VIEWS) $("view-" + name).hidden = name !== view;
  for (const name of ["facts", "conflicts", "ask", "settings", "tasks"]) {
    const link = $("nav-" + name);
    if (view === name) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  $("signout").hidden = !sessionStorage.getItem(TOKEN_KEY);
  if (focus) {
    const heading = document.querySelector(`#view-${view} h2`);
    if (heading) heading.focus();
  }
}

// "Forget token": nothing of the previous user may stay in the page, hidden or not.
function clearEverything() {
  for (const id of ["facts-list", "conflicts-list", "ask-list", "history", "fact-detail",
                    "tasks-list", "runs-list", "who", "conflict-count", "facts-summary",
                    "conflicts-summary", "facts-page", "conflicts-page", "ask-notice",
                    "add-result", "history-summary", "history-page"]) {
    $(id).replaceChildren();
  }
  $("kind-filter").replaceChildren(el("option", { value: "", text: "all kinds" }));
  for (const id of ["search", "ask-query", "add-text"]) $(id).value = "";
  $("persona-form").reset();
  loadedCard = null;
  clearInterval(pollTimer);
  factsState.offset = 0;
  conflictsState.offset = 0;
  historyState.offset = 0;
}

function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return isNaN(date) ? iso : date.toLocaleString();
}

function day(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return isNaN(date) ? iso : date.toLocaleDateString();
}

function badges(fact) {
  const out = [];
  if (fact.pinned) out.push(el("span", { class: "badge pinned", text: "pinned" }));
  if (fact.stale) out.push(el("span", { class: "badge stale", text: "stale" }));
  if (fact.status === "superseded") {
    out.push(el("span", { class: "badge superseded", text: "superseded" }));
  }
  if (fact.conflicts_with && fact.conflicts_with.length) {
    // The badge leads to the pairs of this fact.
    out.push(el("a", { class: "badge conflict", href: `#conflicts/${fact.id}`,
                       text: "conflict", "aria-label": `Conflicts of: ${fact.text}` }));
  }
  return out;
}

function factMeta(fact) {
  const parts = [`${fact.id}`, `kind ${fact.kind}`, `said ${fact.mentions}×`,
                 `first said ${when(fact.created_at)}`];
  if (fact.last_confirmed_at !== fact.created_at) {
    parts.push(`last said ${when(fact.last_confirmed_at)}`);
  }
  if (fact.source) parts.push(`from ${fact.source}`);
  return el("div", { class: "meta", text: parts.join(" · ") });
}

function pageLine(offset, shown, total) {
  if (!total) return "";
  return `${offset + 1}–${offset + shown} of ${total.toLocaleString()}`;
}

// ---- actions (each one API call, then the current page read again) -------------------------

async function act(work, done) {
  try {
    const message = await work();
    await refreshCount();
    await route();
    if (message) say(message, "ok");
    if (done) done();
  } catch (error) {
    fail(error);
  }
}

function pinButton(fact) {
  const pinned = fact.pinned;
  return el("button", {
    type: "button", text: pinned ? "Unpin" : "Pin",
    "aria-label": `${pinned ? "Unpin" : "Pin"}: ${fact.text}`,
    onclick: () => act(async () => {
      await api(pinned ? "DELETE" : "POST", `/v1/facts/${encodeURIComponent(fact.id)}/pin`);
      return `${pinned ? "Unpinned" : "Pinned"} “${fact.text}”.`;
    }),
  });
}

function forgetButton(fact) {
  return el("button", {
    type: "button", class: "danger", text: "Forget", "aria-label": `Forget: ${fact.text}`,
    onclick: () => confirmThen(`Forget “${fact.text}”? It can be restored from its history.`,
      () => act(async () => {
        await api("DELETE", `/v1/facts/${encodeURIComponent(fact.id)}`);
        return [`Forgot “${fact.text}”. `,
                el("a", { href: `#fact/${fact.id}`, text: "History and undo" })];
      })),
  });
}

function editButton(fact) {
  return el("button", {
    type: "button", text: "Edit", "aria-label": `Edit: ${fact.text}`,
    onclick: () => startEdit(fact),
  });
}

function historyLink(fact) {
  return el("a", { href: `#fact/${fact.id}`, text: "History",
                   "aria-label": `History of: ${fact.text}` });
}

function confirmThen(question, onConfirm) {
  const dialog = $("confirm");
  $("confirm-text").textContent = question;
  const close = (ok) => {
    dialog.close();
    $("confirm-ok").onclick = null;
    $("confirm-cancel").onclick = null;
    if (ok) onConfirm();
  };
  $("confirm-ok").onclick = () => close(true);
  $("confirm-cancel").onclick = () => close(false);
  dialog.showModal();
  $("confirm-cancel").focus(); // the safe choice has focus, so Enter does not destroy
}

// ---- facts: a sortable table, one page a request -------------------------------------------

async function renderFacts() {
  const params = new URLSearchParams({
    limit: String(FACTS_PAGE), offset: String(factsState.offset), sort: factsState.sort,
    desc: String(factsState.desc), pinned_first: String($("pinned-first").checked),
  });
  const search = $("search").value.trim();
  const kind = $("kind-filter").value;
  const status = $("status-filter").value;
  if (search) params.set("q", search);
  if (kind) params.set("kind", kind);
  if (status === "all") params.set("all", "true");
  if (status === "pinned" || status === "conflicting") params.set("only", status);
  const [[facts, total], kinds] = await Promise.all([
    request("GET", "/v1/facts?" + params),
    api("GET", "/v1/kinds" + (status === "all" ? "?all=true" : "")),
  ]);
  if (facts.length === 0 && factsState.offset > 0 && total > 0) {
    factsState.offset = Math.max(0, total - FACTS_PAGE); // the last page emptied: step back
    return renderFacts();
  }
  fillKinds(kinds);
  $("facts-list").replaceChildren(...facts.map(factRow));
  for (const th of document.querySelectorAll("#facts-table th[data-sort]")) {
    const sorted = th.dataset.sort === factsState.sort;
    if (sorted) th.setAttribute("aria-sort", factsState.desc ? "descending" : "ascending");
    else th.removeAttribute("aria-sort");
  }
  const filtered = search || kind || status !== "active";
  $("facts-summary").textContent = total === 0
    ? (filtered ? "No fact matches." : "No facts yet.")
    : `${total.toLocaleString()} fact${total === 1 ? "" : "s"}` + (filtered ? " match." : ".");
  $("facts-page").textContent = pageLine(factsState.offset, facts.length, total);
  $("facts-prev").disabled = factsState.offset === 0;
  $("facts-next").disabled = factsState.offset + facts.length >= total;
}

function factRow(fact) {
  return el("tr", { class: `fact ${fact.status}`, "data-id": fact.id },
    el("td", { class: "fact-text" }, el("span", { class: "text", text: fact.text }),
       badges(fact)),
    el("td", { "data-label": "Kind", text: fact.kind }),
    el("td", { "data-label": "Status", text: fact.status }),
    el("td", { "data-label": "Said", text: `${fact.mentions}×` }),
    el("td", { "data-label": "Last said", text: day(fact.last_confirmed_at),
               title: when(fact.last_confirmed_at) }),
    el("td", { class: "row-actions" },
      fact.status === "active" ? pinButton(fact) : null, editButton(fact),
      forgetButton(fact), historyLink(fact)));
}

function fillKinds(kinds) {
  const select = $("kind-filter");
  const current = select.value;
  const options = [el("option", { value: "", text: "all kinds" })];
  for (const [kind, count] of Object.entries(kinds)) {
    options.push(el("option", { value: kind, text: `${kind} (${count})` }));
  }
  if (current && !(current in kinds)) options.push(el("option", { value: current, text: current }));
  select.replaceChildren(...options);
  select.value = current;
}

function sortBy(column) {
  if (factsState.sort === column) factsState.desc = !factsState.desc;
  else { factsState.sort = column; factsState.desc = column === "mentions" || column === "confirmed"; }
  factsState.offset = 0;
  route();
}

// An edit is a new write through the normal path: its decision (merge, conflict or a new fact)
// is shown, and the old fact stays until the user settles it.
function startEdit(fact) {
  $("add-text").value = fact.text;
  $("add-kind").value = fact.kind;
  $("add-pinned").checked = fact.pinned;
  $("add-label").textContent = "Edit";
  $("add-submit").textContent = "Save as a new write";
  $("add-cancel").hidden = false;
  $("add-result").textContent = `Editing “${fact.text}”: saving writes the new text as a new ` +
    "fact, and the store decides what it does to the old one (merge, flag or keep apart).";
  $("add-text").focus();
}

function endEdit() {
  $("add-label").textContent = "Remember";
  $("add-submit").textContent = "Remember";
  $("add-cancel").hidden = true;
}

function decisionWords(result) {
  const fact = result.fact;
  if (result.action === "merge") {
    return [`Merged into “${fact.text}” (said ${fact.mentions}×): ${result.reason}. `,
            el("a", { href: `#fact/${fact.id}`, text: "History" })];
  }
  if (result.action === "conflict") {
    return [`Stored “${fact.text}” and flagged it against ${result.conflicts_with.length} ` +
            `fact${result.conflicts_with.length === 1 ? "" : "s"}: ${result.reason}. `,
            el("a", { href: `#conflicts/${fact.id}`, text: "Settle it" })];
  }
  return [`Stored “${fact.text}” as a new fact: ${result.reason}.`];
}

async function submitFact() {
  const body = { text: $("add-text").value, kind: $("add-kind").value.trim() || "fact",
                 pinned: $("add-pinned").checked, source: "review page" };
  const result = await api("POST", "/v1/facts", body);
  $("add-text").value = "";
  $("add-pinned").checked = false;
  endEdit();
  $("add-result").replaceChildren(...decisionWords(result));
  return null;
}

// ---- conflicts: one request a page, each pair older / newer --------------------------------

function historyList(events, withUndo) {
  return el("ol", { class: "history" }, events.map((event) => {
    const item = el("li", { class: event.undone_by ? "undone" : "" },
      el("span", { text: event.words || event.type }),
      event.partner && event.partner.text !== null
        ? [" ", el("a", { href: `#fact/${event.partner.id}`, text: "(open)",
                          "aria-label": `Open: ${event.partner.text}` })] : null,
      el("span", { class: "meta", text: ` · ${when(event.at)} · event ${event.id}` +
                                        (event.undone_by ? ` · undone by ${event.undone_by}` : "") }));
    if (withUndo && !event.undone_by && event.type !== "undo") {
      item.append(" ", el("button", {
        type: "button", text: "Undo", "aria-label": `Undo event ${event.id}: ${event.words}`,
        onclick: () => act(async () => {
          const undo = await api("POST", `/v1/undo/${event.id}`);
          return `Undid ${undo.data.types.join(", ")} (event ${undo.id}).`;
        }),
      }));
    }
    return item;
  }));
}

function fmt(score) {
  return typeof score === "number" ? score.toFixed(2) : "–";
}

function pairPath(pair) {
  return `/v1/conflicts/${encodeURIComponent(pair.a.id)}/${encodeURIComponent(pair.b.id)}`;
}

async function renderConflicts(factId) {
  const params = new URLSearchParams({ limit: String(CONFLICTS_PAGE),
                                       offset: String(conflictsState.offset) });
  if (factId) params.set("fact", factId);
  if (conflictsState.possible) params.set("possible", "true");
  const [pairs, total] = await request("GET", "/v1/conflicts?" + params);
  if (pairs.length === 0 && conflictsState.offset > 0 && total > 0) {
    conflictsState.offset = Math.max(0, total - CONFLICTS_PAGE);
    return renderConflicts(factId);
  }
  if (!factId && !conflictsState.possible) setCount(total);
  $("conflicts-all").hidden = !factId;
  $("select-page").checked = false;
  updateBulk();
  $("conflicts-summary").textContent = total === 0 ? ""
    : `${total.toLocaleString()} pair${total === 1 ? "" : "s"}` +
      (factId ? " of this fact." : conflictsState.possible ? " possibly in conflict." : " to settle.");
  $("conflicts-page").textContent = pageLine(conflictsState.offset, pairs.length, total);
  $("conflicts-prev").disabled = conflictsState.offset === 0;
  $("conflicts-next").disabled = conflictsState.offset + pairs.length >= total;
  if (pairs.length === 0) {
    $("conflicts-list").replaceChildren(el("p", { text: conflictsState.possible
      ? "No possible conflicts." : "No conflicts. Nothing to settle." }));
    return;
  }
  $("conflicts-list").replaceChildren(...pairs.map((pair, index) => pairCard(pair, index)));
}

function pairCard(pair, index) {
  const byId = { [pair.a.id]: pair.a, [pair.b.id]: pair.b };
  const newer = byId[pair.newer] || pair.b;
  const older = newer === pair.a ? pair.b : pair.a;
  const keep = (kept, over) => act(async () => {
    await api("POST", pairPath(pair) + "/resolve", { keep: kept.id });
    return [`Kept “${kept.text}”; “${over.text}” is superseded. `,
            el("a", { href: `#fact/${over.id}`, text: "Undo from its history" })];
  });
  const side = (label, fact, other) => el("div", { class: `side ${label.toLowerCase()}` },
    el("div", { class: "side-label", text: `${label} · last said ${day(fact.last_confirmed_at)}` }),
    el("div", {}, el("span", { class: "text", text: fact.text }), badges(fact)),
    el("div", { class: "actions" },
      el("button", { type: "button", class: "primary", text: "Keep this",
                     "aria-label": `Keep this: ${fact.text}`, onclick: () => keep(fact, other) }),
      historyLink(fact)),
    factMeta(fact));
  return el("article", { class: "pair", "aria-label": `Conflict ${index + 1}`,
                         "data-a": pair.a.id, "data-b": pair.b.id },
    el("div", { class: "pair-head" },
      el("label", { class: "check" },
        el("input", { type: "checkbox", class: "pick", "aria-label": `Select conflict ${index + 1}`,
                      onchange: updateBulk }),
        `Flagged ${when(pair.flagged_at)}`)),
    el("p", { class: "reason", text: pair.explanation || pair.reason || "No reason was recorded." }),
    el("div", { class: "sides" }, side("Older", older, newer), side("Newer", newer, older)),
    el("div", { class: "actions" },
      conflictsState.possible ? el("button", {
        type: "button", text: "It is a conflict", title: "Ask me which is current",
        onclick: () => act(async () => {
          await api("POST", pairPath(pair) + "/promote");
          return "Now a conflict: the companion will ask which is current.";
        }) }) : null,
      el("button", { type: "button", text: "Keep both", title: "Both are true: remove the flag",
                     onclick: () => act(async () => {
                       await api("DELETE", pairPath(pair));
                       return "Kept both; the flag is gone.";
                     }) }),
      el("details", {}, el("summary", { text: "How it was found" }),
         el("p", { class: "meta", text: `${pair.reason || "no reason recorded"} · score ` +
                                         fmt(pair.score) }))));
}

function picked() {
  return [...document.querySelectorAll("#conflicts-list .pair")]
    .filter((card) => card.querySelector(".pick").checked)
    .map((card) => [card.dataset.a, card.dataset.b]);
}

function updateBulk() {
  const count = picked().length;
  $("keep-newer").disabled = count === 0;
  $("keep-newer").textContent = count ? `Keep newer for ${count} selected` : "Keep newer for selected";
}

function keepNewer() {
  const pairs = picked();
  act(async () => {
    const result = await api("POST", "/v1/conflicts/keep-newer", { pairs });
    return `Kept the newer side of ${result.kept.length} pair${result.kept.length === 1 ? "" : "s"}; ` +
           "each can be undone from its history.";
  });
}

function setCount(count) {
  $("conflict-count").textContent = count ? String(count) : "";
  $("conflict-count").setAttribute("aria-label", `${count} open`);
}

async function refreshCount() {
  setCount((await request("GET", "/v1/conflicts?limit=1"))[1]);
}

// ---- ask: what recall would give the companion ---------------------------------------------

async function ask() {
  const query = $("ask-query").value;
  const result = await api("POST", "/v1/recall", { query, limit: 8 });
  $("ask-list").replaceChildren(...result.facts.map((item) => {
    const marks = [];
    if (item.pinned) marks.push("pinned");
    if (item.conflicting) marks.push("conflicting");
    if (item.via_conflict) marks.push("brought along: the other side of a conflict");
    if (item.stale) marks.push("may be outdated");
    return el("li", { "data-id": item.fact.id },
      el("span", { class: "text", text: item.fact.text }),
      el("span", { class: "meta", text: ` · score ${fmt(item.score)}` +
                                        (marks.length ? ` · ${marks.join(" · ")}` : "") }),
      " ", historyLink(item.fact));
  }));
  $("ask-notice").className = result.notice ? "notice" : "hint";
  $("ask-notice").textContent = result.facts.length === 0 ? "Nothing would be recalled."
    : result.notice ? `The companion would also be told: “${result.notice}”`
      : "No notice: nothing recalled disagrees.";
}

// ---- one fact ------------------------------------------------------------------------------

async function renderFact(id) {
  const [events, total] = await request("GET", `/v1/facts/${encodeURIComponent(id)}/history?` +
    new URLSearchParams({ limit: String(HISTORY_PAGE), offset: String(historyState.offset),
                          newest_first: "true" }));
  $("history-summary").textContent = `${total} event${total === 1 ? "" : "s"}.`;
  $("history-page").textContent = pageLine(historyState.offset, events.length, total);
  $("history-prev").disabled = historyState.offset === 0;
  $("history-next").disabled = historyState.offset + events.length >= total;
  let fact = null;
  try {
    fact = await api("GET", `/v1/facts/${encodeURIComponent(id)}`);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
  }
  $("fact-title").textContent = fact ? "Fact" : "Forgotten fact";
  $("fact-detail").replaceChildren(fact
    ? el("div", { class: `fact-card ${fact.status}` },
        el("div", {}, el("span", { class: "text", text: fact.text }), badges(fact)),
        factMeta(fact),
        el("div", { class: "actions" },
          fact.status === "active" ? pinButton(fact) : null, forgetButton(fact)))
    : el("p", { class: "hint", text: `${id} is no longer stored; undo its forget below to ` +
                                      "restore it." }));
  $("history").replaceChildren(...historyList(events, true).children);
}

// ---- settings: the personality card --------------------------------------------------------

const CARD_FIELDS = ["name", "description", "personality", "scenario", "first_mes",
                     "system_prompt"];
const OWN_SETTINGS = { caring: "high", teasing: "light", reply_length: "short",
                       language: "English" };
let loadedCard = null;

async function renderSettings() {
  loadedCard = await api("GET", "/v1/persona");
  const data = loadedCard.data || {};
  const own = (data.extensions && data.extensions.ankita) || {};
  for (const field of CARD_FIELDS) $("p-" + field).value = data[field] || "";
  for (const [key, fallback] of Object.entries(OWN_SETTINGS)) {
    $("p-" + key).value = own[key] || fallback;
  }
}

async function saveSettings() {
  // Only the fields on the form change; everything else in the card goes back as it came.
  const card = JSON.parse(JSON.stringify(loadedCard));
  for (const field of CARD_FIELDS) card.data[field] = $("p-" + field).value;
  card.data.extensions = card.data.extensions || {};
  card.data.extensions.ankita = card.data.extensions.ankita || {};
  for (const key of Object.keys(OWN_SETTINGS)) {
    card.data.extensions.ankita[key] = $("p-" + key).value;
  }
  loadedCard = await api("PUT", "/v1/persona", { card });
  return `Saved ${loadedCard.data.name}'s personality.`;
}

// ---- scheduled tasks: polled, so results appear without a reload ---------------------------

const POLL_MS = 1000;
let lastRun = 0;
let pollTimer = null;

function runItem(run) {
  const text = `${run.status} · ${run.output || run.reason || ""}`;
  return el("li", { "data-run": run.id },
    el("span", { text: `${run.job_id}: ${text}` }),
    el("span", { class: "meta", text: ` · ${when(run.finished_at)}` }));
}

async function renderTasks() {
  const tasks = await api("GET", "/v1/tasks");
  $("tasks-list").replaceChildren(...(tasks.length ? tasks.map((task) =>
    el("li", { class: "fact" },
      el("div", {}, el("span", { class: "text", text: task.name }),
         el("span", { class: "badge", text: task.kind })),
      el("div", { class: "meta", text: `${task.id} · ${task.schedule} (${task.tz}) · next ` +
        `${when(task.next_run_at) || "none"} · last ${task.last_status || "not run yet"}` })))
    : [el("li", { text: "No scheduled tasks yet." })]));
  lastRun = 0;
  $("runs-list").replaceChildren();
  await pollRuns();
  clearInterval(pollTimer);
  pollTimer = setInterval(() => {
    if ($("view-tasks").hidden) { clearInterval(pollTimer); return; }
    pollRuns().catch(fail);
  }, POLL_MS);
}

async function pollRuns() {
  const runs = await api("GET", `/v1/tasks/runs?after=${lastRun}`);
  for (const run of runs) {
    $("runs-list").prepend(runItem(run));
    lastRun = Math.max(lastRun, run.id);
  }
}

// ---- routing -------------------------------------------------------------------------------

async function route(focus) {
  const hash = location.hash.replace(/^#/, "") || "facts";
  try {
    if (hash.startsWith("fact/")) {
      show("fact", focus);
      await renderFact(decodeURIComponent(hash.slice(5)));
    } else if (hash === "conflicts" || hash.startsWith("conflicts/")) {
      show("conflicts", focus);
      await renderConflicts(hash.startsWith("conflicts/")
        ? decodeURIComponent(hash.slice(10)) : null);
    } else if (hash === "ask") {
      show("ask", focus);
    } else if (hash === "tasks") {
      show("tasks", focus);
      await renderTasks();
    } else if (hash === "settings") {
      show("settings", focus);
      await renderSettings();
    } else {
      show("facts", focus);
      await renderFacts();
    }
  } catch (error) {
    fail(error);
  }
}

async function start() {
  try {
    const me = await api("GET", "/v1/me");
    $("who").textContent = `memory of ${me.user}`;
    await refreshCount();
  } catch (error) {
    fail(error);
    return;
  }
  await route(false);
}

function refilter() {
  factsState.offset = 0;
  route();
}

document.addEventListener("DOMContentLoaded", () => {
  window.addEventListener("hashchange", () => {
    say("");
    conflictsState.offset = 0;
    historyState.offset = 0;
    route(true);
  });
  $("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, $("token").value.trim());
    $("token").value = "";
    say("");
    start();
  });
  $("signout").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    clearEverything();
    say("Token forgotten for this tab.");
    start();
  });
  $("add-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act(submitFact);
  });
  $("add-cancel").addEventListener("click", () => {
    $("add-text").value = "";
    $("add-result").textContent = "";
    endEdit();
  });
  $("search-form").addEventListener("submit", (event) => { event.preventDefault(); refilter(); });
  $("persona-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act(saveSettings);
  });
  $("search").addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(refilter, 250); // wait for a pause in typing
  });
  for (const id of ["kind-filter", "status-filter", "pinned-first"]) {
    $(id).addEventListener("change", refilter);
  }
  for (const th of document.querySelectorAll("#facts-table th[data-sort]")) {
    th.querySelector("button").addEventListener("click", () => sortBy(th.dataset.sort));
  }
  $("facts-prev").addEventListener("click", () => {
    factsState.offset = Math.max(0, factsState.offset - FACTS_PAGE);
    route();
  });
  $("facts-next").addEventListener("click", () => {
    factsState.offset += FACTS_PAGE;
    route();
  });
  $("conflicts-prev").addEventListener("click", () => {
    conflictsState.offset = Math.max(0, conflictsState.offset - CONFLICTS_PAGE);
    route();
  });
  $("conflicts-next").addEventListener("click", () => {
    conflictsState.offset += CONFLICTS_PAGE;
    route();
  });
  $("history-prev").addEventListener("click", () => {
    historyState.offset = Math.max(0, historyState.offset - HISTORY_PAGE);
    route();
  });
  $("history-next").addEventListener("click", () => {
    historyState.offset += HISTORY_PAGE;
    route();
  });
  $("select-page").addEventListener("change", () => {
    for (const box of document.querySelectorAll("#conflicts-list .pick")) {
      box.checked = $("select-page").checked;
    }
    updateBulk();
  });
  $("keep-newer").addEventListener("click", keepNewer);
  $("show-possible").addEventListener("change", () => {
    conflictsState.possible = $("show-possible").checked;
    conflictsState.offset = 0;
    route();
  });
  $("ask-form").addEventListener("submit", (event) => {
    event.preventDefault();
    ask().catch(fail);
  });
  start();
});
