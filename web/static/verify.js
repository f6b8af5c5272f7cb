// The web view's proof check: fetch the page's proof bundle and check it with the
// WebAssembly build of package web/check against the validator set this browser pinned
// (the chain's genesis set, fetched and kept the first time), and what the page shows
// (data-shown: the document's encoding) against the proven value. The result replaces
// the text of #proof-status.
(async function () {
  const status = document.getElementById("proof-status");
  if (!status) return;
  const say = (ok, text) => {
    status.textContent = text;
    status.className = ok ? "ok" : "refused";
    status.dataset.verified = ok ? "true" : "false";
  };
  if (typeof WebAssembly !== "object" || typeof Go !== "function") {
    return; // the page's text says how to check offline
  }
  try {
    const key = "ttld-validators:" + status.dataset.chain;
    let pinned = localStorage.getItem(key);
    if (pinned === null) {
      const res = await fetch("/validators.json");
      if (!res.ok) throw new Error("no validator set to pin: " + res.status);
      pinned = await res.text();
      localStorage.setItem(key, pinned);
    }
    const bundle = await fetch(status.dataset.bundle);
    if (!bundle.ok) throw new Error("no proof bundle: " + bundle.status);
    const text = await bundle.text();
    const go = new Go();
    const wasm = await WebAssembly.instantiateStreaming(fetch("/static/verify.wasm"), go.importObject);
    go.run(wasm.instance);
    const r = ttldCheck(text, pinned, status.dataset.shown);
    if (r.verified) {
      say(true, "VERIFIED in this browser: " + (r.present ? "presence" : "absence") + " at height " + r.height +
        ", app hash " + r.app_hash + " of signed header " + (r.height + 1) + ", against the pinned validator set.");
    } else {
      say(false, "NOT VERIFIED: " + r.reason);
    }
  } catch (e) {
    say(false, "NOT VERIFIED: " + e.message);
  }
})();
