// The web view's proof check: for every element with a data-bundle (a page's proven
// reads), fetch the bundle and check it with the WebAssembly build of package web/check
// against the validator set this browser pinned (the chain's genesis set, fetched and
// kept the first time), and what the page shows (data-shown: the value its figures were
// decoded from) against the proven value. Each verdict replaces its element's text:
// the page's one #proof-status in full, the overview's figures in short.
(async function () {
  const boxes = document.querySelectorAll("[data-bundle]");
  if (boxes.length === 0 || typeof WebAssembly !== "object" || typeof Go !== "function") {
    return; // the page's text says how to check offline
  }
  const say = (el, ok, long, short) => {
    el.textContent = el.id === "proof-status" ? long : short;
    el.title = long;
    el.className = ok ? "ok" : "refused";
    el.dataset.verified = ok ? "true" : "false";
  };
  let pinned;
  try {
    const key = "ttld-validators:" + boxes[0].dataset.chain;
    pinned = localStorage.getItem(key);
    if (pinned === null) {
      const res = await fetch("/validators.json");
      if (!res.ok) throw new Error("no validator set to pin: " + res.status);
      pinned = await res.text();
      localStorage.setItem(key, pinned);
    }
    const go = new Go();
    const wasm = await WebAssembly.instantiateStreaming(fetch(document.querySelector("script[data-module]").dataset.module), go.importObject);
    go.run(wasm.instance);
  } catch (e) {
    boxes.forEach((el) => say(el, false, "NOT VERIFIED: " + e.message, "✗ not verified"));
    return;
  }
  for (const el of boxes) {
    try {
      const bundle = await fetch(el.dataset.bundle);
      if (!bundle.ok) throw new Error("no proof bundle: " + bundle.status);
      const r = ttldCheck(await bundle.text(), pinned, el.dataset.shown);
      if (r.verified) {
        say(el, true, "VERIFIED in this browser: " + (r.present ? "presence" : "absence") + " at height " + r.height +
          ", app hash " + r.app_hash + " of signed header " + (r.height + 1) + ", against the pinned validator set.", "✓ verified");
      } else {
        say(el, false, "NOT VERIFIED: " + r.reason, "✗ not verified");
      }
    } catch (e) {
      say(el, false, "NOT VERIFIED: " + e.message, "✗ not verified");
    }
  }
})();
