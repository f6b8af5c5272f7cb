// The web view's proof check (docs/PROOFS.md, "Proof bundles (the web view)"). Every
// element with a data-bundle is a proof box: the bundles it lists (this view's /proof
// URLs, space-separated) prove, at one state, the figures inside it, the elements
// with a data-figure. For each box the WebAssembly build of package web/check
// verifies the bundles against the chain and validator set this browser pinned for
// this site, no older than the bound by this browser's clock, about the page the
// browser is on (its path), following the chain's validator set from the pinned one
// through the trace a bundle carries when its header names another set, and returns
// the proven figures, written by the code that
// verified them; each figure element then shows the proven text, marked verified, or,
// where the page showed another, marked refused. The pin is taken once per site, from
// /validators.json, by the first box whose every answer verifies against it (trust on
// first use); nothing a page says changes it.
(async function () {
  // Verdicts are this script's alone: whatever a page's markup claims is cleared.
  for (const el of document.querySelectorAll("[data-verified]")) delete el.dataset.verified;
  const boxes = document.querySelectorAll("[data-bundle]");
  if (boxes.length === 0 || typeof WebAssembly !== "object" || typeof Go !== "function") {
    return; // the page's text says how to check offline
  }
  const PIN = "ttld-pin";
  let pin = null;
  try {
    pin = JSON.parse(localStorage.getItem(PIN));
  } catch (e) {
    pin = null;
  }
  // utc writes a time as check.When writes it alone: 2006-01-02 15:04:05 UTC.
  const utc = (ms) => new Date(ms).toISOString().slice(0, 19).replace("T", " ") + " UTC";
  const showPin = (now) => {
    const text = pin === null ? "none yet" : "chain " + pin.chain_shown + ", validator set " + pin.set_hash.toUpperCase() +
      (now ? ", pinned now (trust on first use)" : ", pinned " + utc(pin.pinned_at));
    for (const el of document.querySelectorAll("[data-pin]")) el.textContent = text;
  };
  showPin(false);
  const seconds = (ms) => Math.max(0, Math.round(ms / 1000)) + " s";
  const state = (r) => r.height ? " Answers at height " + r.height + ", signed header " + (r.height + 1) + " of " +
    r.header_time + ", " + seconds(r.age_ms) + " old (bound " + seconds(r.max_age_ms) + ")." : "";
  const say = (box, verdict, ok, text) => {
    verdict.textContent = text;
    verdict.className = ok ? "ok" : "refused";
    box.dataset.verified = ok ? "true" : "false";
  };
  // mark writes the proven figures of r into the box's figure elements.
  const mark = (figures, r) => {
    for (const el of figures) {
      const name = el.dataset.figure;
      const proven = r.figures ? r.figures[name] : undefined;
      if (proven === undefined) {
        el.title = r.figures ? "the proof has no such figure" : "not verified: " + r.reason;
        el.dataset.verified = "false";
      } else if (el.textContent !== proven) {
        const m = r.mismatches.find((m) => m.name === name);
        el.title = m ? m.text : "the page showed another text";
        el.textContent = proven;
        el.dataset.verified = "false";
      } else {
        el.dataset.verified = "true";
      }
    }
  };
  try {
    const go = new Go();
    const wasm = await WebAssembly.instantiateStreaming(fetch(document.querySelector("script[data-module]").dataset.module), go.importObject);
    go.run(wasm.instance);
  } catch (e) {
    boxes.forEach((box) => say(box, box.querySelector("[data-verdict]") || box, false, "NOT VERIFIED: " + e.message));
    return;
  }
  for (const box of boxes) {
    let verdict = box.querySelector("[data-verdict]");
    if (verdict === null) {
      verdict = box.appendChild(document.createElement("p"));
    }
    const figures = Array.from(box.querySelectorAll("[data-figure]")).filter((el) => el.closest("[data-bundle]") === box);
    const shown = {};
    for (const el of figures) (shown[el.dataset.figure] ||= []).push(el.textContent);
    try {
      const urls = box.dataset.bundle.split(/\s+/).filter((u) => u !== "");
      const bundles = await Promise.all(urls.map(async (u) => {
        if (!u.startsWith("/proof?")) throw new Error("a bundle that is not this view's: " + u);
        const res = await fetch(u);
        if (!res.ok) throw new Error("no proof bundle: " + res.status);
        return res.text();
      }));
      const first = pin === null;
      let set;
      if (first) {
        const res = await fetch("/validators.json");
        if (!res.ok) throw new Error("no validator set to pin: " + res.status);
        set = await res.text();
      } else {
        set = pin.validators;
      }
      const r = ttldCheck(bundles, set, first ? "" : pin.chain_id, Date.now(), location.pathname, JSON.stringify(shown));
      if (first && r.verified) {
        pin = { chain_id: r.chain_id, chain_shown: r.chain_shown, set_hash: r.set_hash, validators: set, pinned_at: Date.now() };
        localStorage.setItem(PIN, JSON.stringify(pin));
        showPin(true);
      }
      mark(figures, r);
      for (const bar of box.querySelectorAll("[data-bar]")) {
        const proven = r.figures ? r.figures[bar.dataset.bar] : undefined;
        if (proven === undefined) continue;
        // A bar is drawn from its proven percent: a rect's width, a mark's (line) or
        // label's (text) place along the bar.
        const x = String(parseInt(proven, 10) * 10);
        switch (bar.tagName.toLowerCase()) {
          case "line": bar.setAttribute("x1", x); bar.setAttribute("x2", x); break;
          case "text": bar.setAttribute("x", x); break;
          default: bar.setAttribute("width", x);
        }
      }
      if (r.verified) {
        const followed = r.followed > 0 ? ", following the chain's validator set from it through " + r.followed + " signed headers" : "";
        say(box, verdict, true, "VERIFIED in this browser: " + urls.length + (urls.length === 1 ? " answer" : " answers") + ", chain " + r.chain_shown +
          ", against the validator set pinned for this site" + followed + "; every figure marked ✓ is written from the proven bytes." + state(r));
      } else {
        say(box, verdict, false, "NOT VERIFIED: " + r.reason + "." + state(r));
      }
    } catch (e) {
      mark(figures, { reason: e.message });
      say(box, verdict, false, "NOT VERIFIED: " + e.message);
    }
  }
})();
