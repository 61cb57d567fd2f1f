// Ankita review page: every read and write goes through the /v1 HTTP API with the user's token.
// Text from the store is only ever set with textContent, never parsed as HTML.
"use strict";

const TOKEN_KEY = "ankita-token";
const PAGE = 1000; // facts per listing; the summary says when there are more
const $ = (id) => document.getElementById(id);
const knownKinds = new Set();
let searchTimer = null;

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

async function api(method, path, body) {
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
  return data;
}

function say(message, kind) {
  const status = $("status");
  status.className = kind || "";
  status.replaceChildren(...(Array.isArray(message) ? message : [message]));
}

function fail(error) {
  if (error instanceof ApiError && error.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    show("login");
    say("This server needs a valid token.", "error");
    return;
  }
  say(error instanceof ApiError ? `${error.message} (${error.code})` : String(error), "error");
}

// Show one view, mark its nav link current and move focus to its heading.
function show(view, focus) {
  for (const name of ["login", "facts", "conflicts", "fact", "settings", "tasks"]) {
    $("view-" + name).hidden = name !== view;
  }
  for (const [name, link] of [["facts", "nav-facts"], ["conflicts", "nav-conflicts"],
                              ["settings", "nav-settings"], ["tasks", "nav-tasks"]]) {
    if (view === name) $(link).setAttribute("aria-current", "page");
    else $(link).removeAttribute("aria-current");
  }
  $("signout").hidden = !sessionStorage.getItem(TOKEN_KEY);
  if (focus) {
    const heading = document.querySelector(`#view-${view} h2`);
    if (heading) heading.focus();
  }
}

function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return isNaN(date) ? iso : date.toLocaleString();
}

function badges(fact) {
  const out = [];
  if (fact.pinned) out.push(el("span", { class: "badge pinned", text: "pinned" }));
  if (fact.stale) out.push(el("span", { class: "badge stale", text: "stale" }));
  if (fact.status === "superseded") {
    out.push(el("span", { class: "badge superseded", text: "superseded" }));
  }
  if (fact.conflicts_with && fact.conflicts_with.length) {
    out.push(el("span", { class: "badge conflict", text: "conflict" }));
  }
  return out;
}

function factMeta(fact) {
  const parts = [`${fact.id}`, `kind ${fact.kind}`, `said ${fact.mentions}×`,
                 `first said ${when(fact.created_at)}`];
  if (fact.last_confirmed_at !== fact.created_at) {
    parts.push(`last confirmed ${when(fact.last_confirmed_at)}`);
  }
  if (fact.source) parts.push(`from ${fact.source}`);
  return el("div", { class: "meta", text: parts.join(" · ") });
}

// ---- actions (each one API call, then a fresh render) -------------------------------------

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

// ---- facts ---------------------------------------------------------------------------------

async function renderFacts() {
  const params = new URLSearchParams({ limit: String(PAGE + 1) });
  const search = $("search").value.trim();
  const kind = $("kind-filter").value;
  if (search) params.set("q", search);
  if (kind) params.set("kind", kind);
  if ($("show-superseded").checked) params.set("all", "true");
  const facts = await api("GET", "/v1/facts?" + params);
  const more = facts.length > PAGE;
  const shown = facts.slice(0, PAGE);
  for (const fact of shown) knownKinds.add(fact.kind);
  fillKinds();
  const groups = new Map();
  for (const fact of shown) {
    if (!groups.has(fact.kind)) groups.set(fact.kind, []);
    groups.get(fact.kind).push(fact);
  }
  const sections = [...groups.keys()].sort().map((name) => el("section", { class: "kind" },
    el("h3", { text: `${name} (${groups.get(name).length})` }),
    el("ul", { class: "facts" }, groups.get(name).map((fact) =>
      el("li", { class: `fact ${fact.status}`, "data-id": fact.id },
        el("div", {}, el("span", { class: "text", text: fact.text }), badges(fact)),
        factMeta(fact),
        el("div", { class: "actions" },
          fact.status === "active" ? pinButton(fact) : null,
          forgetButton(fact), historyLink(fact)))))));
  $("facts-list").replaceChildren(...sections);
  $("facts-summary").textContent = shown.length === 0
    ? (search || kind ? "No fact matches." : "No facts yet.")
    : `${shown.length}${more ? "+" : ""} fact${shown.length === 1 ? "" : "s"}` +
      (more ? ` shown; narrow the search to see the rest.` : ".");
}

function fillKinds() {
  const select = $("kind-filter");
  const current = select.value;
  const options = [el("option", { value: "", text: "all kinds" })];
  for (const kind of [...knownKinds].sort()) options.push(el("option", { value: kind, text: kind }));
  select.replaceChildren(...options);
  select.value = current;
}

// ---- conflicts -----------------------------------------------------------------------------

function historyList(events, withUndo) {
  return el("ol", { class: "history" }, events.map((event) => {
    const item = el("li", { class: event.undone_by ? "undone" : "" },
      el("span", { text: describe(event) }),
      el("span", { class: "meta", text: ` · ${when(event.at)} · event ${event.id}` +
                                        (event.undone_by ? ` · undone by ${event.undone_by}` : "") }));
    if (withUndo && !event.undone_by && event.type !== "undo") {
      item.append(" ", el("button", {
        type: "button", text: "Undo", "aria-label": `Undo event ${event.id}: ${describe(event)}`,
        onclick: () => act(async () => {
          const undo = await api("POST", `/v1/undo/${event.id}`);
          return `Undid ${undo.data.types.join(", ")} (event ${undo.id}).`;
        }),
      }));
    }
    return item;
  }));
}

function describe(event) {
  const data = event.data || {};
  switch (event.type) {
    case "create": return `created: “${data.text}”`;
    case "merge": return `merged “${data.phrasing}” (score ${fmt(data.score)})`;
    case "text_change": return `text changed from “${data.before}” to “${data.after}”`;
    case "link": return `flagged against ${other(event)}: ${data.reason || ""}`;
    case "clear": return `flag with ${other(event)} cleared: both kept`;
    case "resolve": return `${event.fact_id} superseded; ${event.other_id} kept`;
    case "reactivate": return "active again (said again after being superseded)";
    case "forget": return `forgotten: “${data.fact ? data.fact.text : ""}”`;
    case "pin": return "pinned";
    case "unpin": return "unpinned";
    case "undo": return `undo of ${(data.types || []).join(", ")}`;
    default: return event.type;
  }
}

function other(event) {
  return event.other_id || "";
}

function fmt(score) {
  return typeof score === "number" ? score.toFixed(2) : "–";
}

async function renderConflicts() {
  const pairs = await api("GET", "/v1/conflicts");
  setCount(pairs.length);
  if (pairs.length === 0) {
    $("conflicts-list").replaceChildren(el("p", { text: "No conflicts. Nothing to settle." }));
    return;
  }
  const histories = await Promise.all(pairs.map((pair) => Promise.all([
    api("GET", `/v1/facts/${encodeURIComponent(pair.a.id)}/history`),
    api("GET", `/v1/facts/${encodeURIComponent(pair.b.id)}/history`),
  ])));
  const cards = pairs.map((pair, index) => {
    const [left, right] = [pair.a, pair.b];
    const keep = (kept, over) => act(async () => {
      await api("POST", `/v1/conflicts/${encodeURIComponent(pair.a.id)}/` +
                        `${encodeURIComponent(pair.b.id)}/resolve`, { keep: kept.id });
      return [`Kept “${kept.text}”; “${over.text}” is superseded. `,
              el("a", { href: `#fact/${over.id}`, text: "Undo from its history" })];
    });
    const side = (label, fact, events) => el("div", { class: "side" },
      el("div", { class: "side-label", text: label }),
      el("div", {}, el("span", { class: "text", text: fact.text }), badges(fact)),
      factMeta(fact),
      el("details", {}, el("summary", { text: "History" }), historyList(events, false),
         historyLink(fact)));
    return el("article", { class: "pair", "aria-label": `Conflict ${index + 1}` },
      el("div", { class: "pair-head",
                  text: `Flagged ${when(pair.flagged_at)} · score ${fmt(pair.score)}` }),
      el("p", { class: "reason", text: pair.reason || "No reason was recorded." }),
      el("div", { class: "sides" },
        side("Left", left, histories[index][0]), side("Right", right, histories[index][1])),
      el("div", { class: "actions" },
        el("button", { type: "button", class: "primary", text: "Keep left",
                       title: `Keep “${left.text}”`, onclick: () => keep(left, right) }),
        el("button", { type: "button", text: "Keep both",
                       title: "Both are true: remove the flag",
                       onclick: () => act(async () => {
                         await api("DELETE", `/v1/conflicts/${encodeURIComponent(pair.a.id)}/` +
                                             `${encodeURIComponent(pair.b.id)}`);
                         return "Kept both; the flag is gone.";
                       }) }),
        el("button", { type: "button", class: "primary", text: "Keep right",
                       title: `Keep “${right.text}”`, onclick: () => keep(right, left) })));
  });
  $("conflicts-list").replaceChildren(...cards);
}

function setCount(count) {
  $("conflict-count").textContent = count ? String(count) : "";
  $("conflict-count").setAttribute("aria-label", `${count} open`);
}

async function refreshCount() {
  setCount((await api("GET", "/v1/conflicts")).length);
}

// ---- one fact ------------------------------------------------------------------------------

async function renderFact(id) {
  const events = await api("GET", `/v1/facts/${encodeURIComponent(id)}/history`);
  let fact = null;
  try {
    fact = await api("GET", `/v1/facts/${encodeURIComponent(id)}`);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
  }
  $("fact-title").textContent = fact ? "Fact" : "Forgotten fact";
  $("fact-detail").replaceChildren(fact
    ? el("div", { class: `fact ${fact.status}` },
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
    } else if (hash === "conflicts") {
      show("conflicts", focus);
      await renderConflicts();
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

document.addEventListener("DOMContentLoaded", () => {
  window.addEventListener("hashchange", () => { say(""); route(true); });
  $("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, $("token").value.trim());
    $("token").value = "";
    say("");
    start();
  });
  $("signout").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    say("Token forgotten for this tab.");
    start();
  });
  $("search-form").addEventListener("submit", (event) => { event.preventDefault(); route(); });
  $("persona-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act(saveSettings);
  });
  $("search").addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => route(), 250); // wait for a pause in typing
  });
  $("kind-filter").addEventListener("change", () => route());
  $("show-superseded").addEventListener("change", () => route());
  start();
});
