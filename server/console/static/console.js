// Turnstile web console. Reads the coordinator's live stream (server-sent events over fetch, so the
// token travels in the Authorization header, never in a URL or cookie) and renders every piece of
// data with textContent: a lock name is text, never markup.
const $ = (id) => document.getElementById(id);
const TOKEN_KEY = "turnstile.token";
const state = {
  token: sessionStorage.getItem(TOKEN_KEY) ?? "",
  prefix: "",
  name: "",
  lock: undefined,
  receivedAt: 0,
  stream: undefined,
  tickers: [],
};

const authHeaders = () => (state.token ? { authorization: `Bearer ${state.token}` } : {});
const short = (id) => (id.length > 12 ? `${id.slice(0, 8)}…` : id);
const who = (x) => `${x.owner || "(no owner)"} @ ${short(x.sessionId)}`;

function text(tag, value, className) {
  const e = document.createElement(tag);
  e.textContent = String(value);
  if (className) e.className = className;
  return e;
}

/**
 * A table row. Every cell keeps to one line: its content sits in a `.cell` box that cuts what does
 * not fit with an ellipsis, and the cell's title holds the full text for hover.
 */
function row(cells) {
  const tr = document.createElement("tr");
  for (const cell of cells) {
    const td = document.createElement("td");
    const box = cell instanceof Node ? cell : text("span", cell);
    if (!(box instanceof HTMLButtonElement)) box.classList.add("cell");
    td.append(box);
    const full = cell instanceof Node ? cell.dataset?.full : String(cell);
    if (full) td.title = full;
    tr.append(td);
  }
  return tr;
}

/** A monospace id cell: the whole id, cut by the column with an ellipsis, in full on hover. */
function id(value) {
  const span = text("span", value, "mono");
  span.dataset.full = value;
  return span;
}

function duration(ms) {
  const s = Math.max(0, ms) / 1000;
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 120) return `${Math.floor(s)} s`;
  return `${Math.floor(s / 60)} min ${Math.floor(s % 60)} s`;
}

function setStatus(message) {
  $("status").textContent = message;
}

function showError(message) {
  $("error").textContent = message;
}

/** A cell whose text is recomputed from the time since the lock view arrived (lease countdowns, ages). */
function ticking(render, className) {
  const span = text("span", render(0), className);
  state.tickers.push({ span, render });
  return span;
}

/** A waiter's mode; for a member of an AcquireAll set, with the set's names, as `turnstile describe` shows it. */
function waiterMode(waiter) {
  return waiter.setNames ? `${waiter.mode}, set of ${waiter.setNames.join(" ")}` : waiter.mode;
}

/**
 * Whom a waiter waits behind (the server's `blockedBy`, Describe's Blocker: client name, identity when
 * security names one, and how long each has held, `ms` after the view arrived), and how many waiters
 * are ahead of it. A set's member also waits for the other locks of its set (granted all together).
 */
function waitsBehind(waiter, ms) {
  const blocker = (b) => {
    const client = [b.clientName, b.identity]
      .filter(Boolean)
      .map((x) => `${x}, `)
      .join("");
    const held = b.heldForMs === undefined ? "" : `held ${duration(b.heldForMs + ms)}`;
    return client || held ? `${who(b)} (${client}${held})` : who(b);
  };
  const holders = waiter.blockedBy.map(blocker).join(", ");
  const others = (waiter.setNames ?? []).filter((n) => n !== state.lock?.name);
  const rest = others.length ? `the rest of its set (${others.join(", ")})` : "";
  const names = [holders, rest].filter(Boolean).join("; ") || "nobody (being handed on)";
  return waiter.position > 1 ? `${names}; ${waiter.position - 1} ahead in queue` : names;
}

function renderList(view) {
  const rows = view.locks.map((lock) => {
    const tr = row([lock.name, lock.delayMs ? `${lock.mode} (delayed)` : lock.mode, lock.holders, lock.waiters]);
    tr.dataset.name = lock.name;
    if (lock.name === state.name) tr.className = "selected";
    tr.addEventListener("click", () => open(lock.name));
    return tr;
  });
  $("locks").tBodies[0].replaceChildren(...rows);
  let note = `${view.locks.length} active lock${view.locks.length === 1 ? "" : "s"} you may read`;
  if (view.truncated) note += " (more: narrow the prefix)";
  $("list-note").textContent = note;
}

function renderLock(lock) {
  state.lock = lock;
  state.receivedAt = performance.now();
  state.tickers = [];
  $("lock-panel").hidden = false;
  $("lock-name").textContent = lock.name;
  const limit = lock.limit > 0 ? ` · limit ${lock.limit}` : "";
  // A hold ended without a release and had a lock-delay: nobody is granted the lock before its end.
  const until = lock.delayMs ? ` · delayed until ${new Date(Date.now() + lock.delayMs).toISOString()}` : "";
  $("lock-meta").textContent = `${lock.mode}${limit} · version ${lock.version}${until}`;
  const holders = lock.holders.map((h) => {
    const lease = ticking((ms) => duration(h.leaseMs - ms), h.leaseMs < 3000 ? "low" : "");
    const held = h.heldForMs === undefined ? "" : ticking((ms) => duration(h.heldForMs + ms));
    const action = lock.mayRevoke ? revokeButton(lock, h) : "";
    const client = [h.clientName, h.identity].filter(Boolean).join(" · ");
    // A pending request to let go (docs/elections.md) shows beside the value: who asked and why.
    const asked = h.releaseRequest
      ? ` · asked to release by ${h.releaseRequest.requester}: ${h.releaseRequest.reason}`
      : "";
    return row([id(h.owner), client, id(h.sessionId), h.token, h.count, held, lease, `${h.value}${asked}`, action]);
  });
  if (holders.length === 0) holders.push(row(["nobody holds it", "", "", "", "", "", "", "", ""]));
  $("holders").tBodies[0].replaceChildren(...holders);
  const waiters = lock.waiters.map((w) => {
    const age = ticking((ms) => duration(w.waitedMs + ms));
    const behind = ticking((ms) => waitsBehind(w, ms), "wide");
    behind.dataset.full = behind.textContent;
    const mode = w.priority > 0 ? `${waiterMode(w)} · priority ${w.priority}` : waiterMode(w);
    return row([w.position, id(w.owner), id(w.sessionId), mode, age, behind]);
  });
  if (waiters.length === 0) waiters.push(row(["", "nobody waits", "", "", "", ""]));
  $("waiters").tBodies[0].replaceChildren(...waiters);
}

function revokeButton(lock, holder) {
  const button = text("button", "Revoke", "revoke");
  button.type = "button";
  button.addEventListener("click", () => revoke(lock.name, holder));
  return button;
}

/** The question Revoke asks before it acts: which lock, which holder (session, client) and which token. */
function revokeQuestion(name, holder) {
  const client = holder.clientName ? ` (client ${holder.clientName})` : "";
  return [
    `Revoke this hold on ${name}?`,
    `Holder: ${holder.owner || "(no owner)"} @ ${holder.sessionId}${client}`,
    `Fencing token: ${holder.token}`,
    "The holder is told it lost the lock.",
  ].join("\n");
}

async function revoke(name, holder) {
  if (!window.confirm(revokeQuestion(name, holder))) return setStatus("revoke cancelled");
  const res = await fetch("/api/revoke", {
    method: "POST",
    headers: { ...authHeaders(), "content-type": "application/json" },
    body: JSON.stringify({ name, sessionId: holder.sessionId, owner: holder.owner }),
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) return showError(`revoke refused: ${body.error ?? res.status}`);
  showError("");
  setStatus(`revoked ${who(holder)} (token ${body.fencingToken})`);
}

function addChange(change) {
  const line = `v${change.version} ${change.change}: ${who(change)}, token ${change.token} (${change.holdersLeft} left)`;
  const list = $("changes");
  list.prepend(text("li", line));
  while (list.children.length > 30) list.lastChild.remove();
}

const handlers = {
  list: renderList,
  lock: renderLock,
  change: addChange,
  problem: (body) => setStatus(body.message),
  end: (body) => setStatus(`stream ended (${body.reason}): reconnecting`),
};

function dispatch(block) {
  let event = "message";
  let data = "";
  for (const line of block.split("\n")) {
    if (line.startsWith("event: ")) event = line.slice(7);
    else if (line.startsWith("data: ")) data += line.slice(6);
  }
  if (data) handlers[event]?.(JSON.parse(data));
}

/** Reads one stream to its end; false when retrying cannot help (a refusal the user must act on). */
async function read(controller) {
  const params = new URLSearchParams({ prefix: state.prefix });
  if (state.name) params.set("name", state.name);
  const res = await fetch(`/api/stream?${params}`, { headers: authHeaders(), signal: controller.signal });
  if (!res.ok) {
    const body = await res.json().catch(() => ({}));
    showError(body.error ?? `HTTP ${res.status}`);
    setStatus("not connected");
    return res.status >= 500;
  }
  setStatus("live");
  showError("");
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return true;
    buffer += value;
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      dispatch(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
    }
  }
}

function connect() {
  state.stream?.abort();
  const controller = new AbortController();
  state.stream = controller;
  read(controller)
    .catch(() => !controller.signal.aborted)
    .then((retry) => {
      if (!retry || controller.signal.aborted) return;
      setStatus("disconnected: reconnecting");
      setTimeout(() => state.stream === controller && connect(), 2000);
    });
}

function open(name) {
  state.name = name;
  state.lock = undefined;
  $("changes").replaceChildren();
  $("lock-panel").hidden = true;
  connect();
}

async function signIn() {
  const res = await fetch("/api/whoami", { headers: authHeaders() });
  const body = await res.json().catch(() => ({}));
  $("identity").textContent = res.ok
    ? body.authRequired
      ? `signed in as ${body.identity}`
      : "open access (security off)"
    : "not signed in";
  if (res.ok) return connect();
  state.stream?.abort();
  state.stream = undefined;
  showError(body.error ?? `HTTP ${res.status}`);
}

$("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  state.token = $("token").value.trim();
  sessionStorage.setItem(TOKEN_KEY, state.token);
  signIn();
});
$("prefix-form").addEventListener("submit", (event) => {
  event.preventDefault();
  state.prefix = $("prefix").value;
  connect();
});
$("open-form").addEventListener("submit", (event) => {
  event.preventDefault();
  if ($("open-name").value) open($("open-name").value);
});
setInterval(() => {
  const elapsed = performance.now() - state.receivedAt;
  for (const { span, render } of state.tickers) {
    span.textContent = render(elapsed);
    // A cut cell's hover text follows what it shows.
    if (span.dataset.full !== undefined && span.parentElement) span.parentElement.title = span.textContent;
  }
}, 250);
$("token").value = state.token;
signIn();
