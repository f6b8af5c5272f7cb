// The web view's proof check (docs/PROOFS.md, "Proof bundles (the web view)" and "What
// VERIFIED means"). Every element with a data-bundle is a proof box: the bundles it
// lists (this view's /proof URLs, space-separated) prove, at one state, what its
// drawing (its child with data-drawing) shows. For each box the WebAssembly build of
// package web/check verifies the bundles against the chain and validator set this
// browser pinned for this site, no older than the bound by this browser's clock, about
// the page the browser is on (its path), following the chain's validator set from the
// pinned one through the trace a bundle carries when its header names another set;
// it draws the box from the proven answers (labels, units, links and bars included)
// and compares that with the page's drawing, read from the DOM as the browser
// displays it. The check's drawing then takes the page's place: in a closed shadow
// root, styled by this script's own sheet, on an element whose style is pinned and
// which sits in the top layer above the page, over a placeholder that keeps its room
// in the page, so that nothing of the page's markup or style restyles or covers it.
// The pin is taken once per site, from /validators.json, by the first box whose every
// answer verifies against it (trust on first use); nothing a page says changes it.
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
  const pinText = (now) => pin === null ? "none yet" : "chain " + pin.chain_shown + ", validator set " + pin.set_hash.toUpperCase() +
    (now ? ", pinned now (trust on first use)" : ", pinned " + utc(pin.pinned_at));
  const showPin = (now) => {
    for (const el of document.querySelectorAll("[data-pin]")) el.textContent = pinText(now);
  };
  showPin(false);
  const seconds = (ms) => Math.max(0, Math.round(ms / 1000)) + " s";
  const state = (r) => r.height ? " Answers at height " + r.height + ", signed header " + (r.height + 1) + " of " +
    r.header_time + ", " + seconds(r.age_ms) + " old (bound " + seconds(r.max_age_ms) + ")." : "";

  // The drawing as check.Node: what the page displays of a box, read from its DOM.
  // An element the browser does not display (not rendered, invisible, transparent, its
  // text of no size) is hidden; one whose style generates text (CSS content) says it.
  const transparent = (color) => color === "transparent" || /^rgba\(.*,\s*0\)$/.test(color);
  const hidden = (el, style) => {
    if (!el.checkVisibility({ opacityProperty: true, visibilityProperty: true, contentVisibilityAuto: true })) return true;
    if (el.namespaceURI !== "http://www.w3.org/1999/xhtml" || el.textContent.trim() === "") return false;
    const r = el.getBoundingClientRect();
    return r.width < 1 || r.height < 1 || parseFloat(style.fontSize) < 1 || transparent(style.color) ||
      transparent(style.webkitTextFillColor);
  };
  const generated = (el, style) => {
    const texts = [];
    if (style.content !== "normal" && style.content !== "none") texts.push(style.content);
    for (const p of ["::before", "::after", "::marker"]) {
      const c = getComputedStyle(el, p).content;
      if (c !== "normal" && c !== "none" && c !== "") texts.push(p + " " + c);
    }
    return texts.join(" ");
  };
  const readDrawing = (parent) => {
    const out = [];
    for (const c of parent.childNodes) {
      if (c.nodeType === Node.TEXT_NODE) {
        out.push({ text: c.data });
      } else if (c.nodeType === Node.ELEMENT_NODE) {
        const n = { tag: c.localName };
        if (c.attributes.length > 0) {
          n.attrs = {};
          for (const a of c.attributes) n.attrs[a.name] = a.value;
        }
        const kids = readDrawing(c);
        if (kids.length > 0) n.kids = kids;
        const style = getComputedStyle(c);
        if (hidden(c, style)) n.hidden = true;
        const text = generated(c, style);
        if (text !== "") n.generated = text;
        out.push(n);
      }
    }
    return out;
  };

  // The check's drawing: check.Node built into elements, of the allow-list
  // check.WriteHTML holds a drawing to, links to this view's own paths alone.
  const SVG = "http://www.w3.org/2000/svg";
  const TAGS = { h1: 0, h2: 0, p: 0, dl: 0, dt: 0, dd: 0, div: 0, span: 0, table: 0, tbody: 0, tr: 0, th: 0, td: 0, a: 0, code: 0,
    pre: 0, bdi: 0, br: 0, svg: 1, rect: 1, line: 1, text: 1 };
  const ATTRS = new Set(["id", "class", "href", "colspan", "data-figure", "data-bar", "width", "height", "viewBox", "role", "aria-label",
    "x", "y", "x1", "x2", "y1", "y2", "fill", "stroke", "stroke-width", "font-size", "text-anchor"]);
  const build = (nodes, parent) => {
    for (const n of nodes) {
      if (!n.tag) {
        parent.append(document.createTextNode(n.text || ""));
        continue;
      }
      if (!(n.tag in TAGS)) throw new Error("the check drew a " + n.tag + " element");
      const el = TAGS[n.tag] ? document.createElementNS(SVG, n.tag) : document.createElement(n.tag);
      for (const [k, v] of Object.entries(n.attrs || {})) {
        if (!ATTRS.has(k) || (k === "href" && !/^\/(?!\/)[^\\]*$/.test(v))) throw new Error("the check drew " + k + "=" + v);
        el.setAttribute(k, v);
      }
      if (n.mark !== undefined) el.dataset.verified = n.mark;
      if (n.title !== undefined) el.title = n.title;
      build(n.kids || [], el);
      parent.append(el);
    }
  };

  // The frames this script draws, each over its placeholder in the page.
  const frames = [];
  const SHEET = new CSSStyleSheet();
  // NB: generic font families alone: a page's @font-face cannot take their names, so
  // that no font of the page's draws the check's digits.
  SHEET.replaceSync(`
:host::before, :host::after, :host::backdrop { content: none !important; display: none !important; }
.frame { font: 15px/1.45 sans-serif; color: #1c2330; background: #fff; border: 3px solid #1b7a3a; border-radius: 4px;
  padding: 0.4em 1em 0.6em; text-align: left; overflow-wrap: anywhere; }
.frame.refused { border-color: #a4321b; }
.verdict { margin: 0.2em 0 0.6em; font-weight: 600; }
.verdict.ok { color: #1b7a3a; } .verdict.refused { color: #a4321b; }
.by { margin: 0.6em 0 0; font-size: 0.85em; color: #5a6473; }
h1 { font-size: 1.4em; margin: 0.6em 0; } h2 { font-size: 1.1em; margin: 1.4em 0 0.4em; }
a { color: #1f5fa8; }
table { border-collapse: collapse; width: 100%; margin: 0.4em 0 1em; }
th, td { text-align: left; padding: 0.3em 0.6em; border-bottom: 1px solid #e3e6eb; vertical-align: top; }
th { background: #eef1f5; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
code, pre, .hex { font-family: monospace; font-size: 0.92em; word-break: break-all; }
pre { white-space: pre-wrap; background: #f6f7f9; padding: 0.6em 1em; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.25em 1em; margin: 0.4em 0; }
dt { font-weight: 600; } dd { margin: 0; }
p { margin: 0.4em 0; }
.note { color: #5a6473; }
.expired { color: #a4321b; font-weight: 600; }
.field { display: block; }
.lifetime svg { display: block; }
bdi.figure { unicode-bidi: isolate; }
[data-figure][data-verified="true"]::after { content: " ✓"; color: #1b7a3a; }
[data-figure][data-verified="false"]::after { content: " ✗"; color: #a4321b; }
[data-figure][data-verified="false"] { background: #fde8e3; }
`);
  // pinned is the style of a frame's host and placeholder: every property the page's
  // sheets could set reset (all: initial), then the few a frame needs, each important
  // in the element's own style, which no sheet of the page outweighs. A host is a flex
  // container, which no ::first-line or ::first-letter of the page styles.
  const pinned = (el, props) => {
    el.style.cssText = "";
    for (const [k, v] of Object.entries({ all: "initial", direction: "ltr", "unicode-bidi": "isolate", zoom: "1", transition: "none",
      animation: "none", opacity: "1", visibility: "visible", "pointer-events": "auto", margin: "0", padding: "0", border: "0",
      inset: "auto", transform: "none", filter: "none", "clip-path": "none", mask: "none", "content-visibility": "visible", ...props })) {
      el.style.setProperty(k, v, "important");
    }
  };
  // place puts each frame over its placeholder, as wide, and makes the placeholder as
  // tall as the frame.
  const place = () => {
    for (const f of frames) {
      const r = f.holder.getBoundingClientRect();
      const at = [r.top + window.scrollY, r.left + window.scrollX, r.width].join(" ");
      if (at !== f.at) {
        f.at = at;
        pinned(f.host, { display: "flex", "flex-direction": "column", position: "absolute", overflow: "visible",
          top: r.top + window.scrollY + "px", left: r.left + window.scrollX + "px", width: r.width + "px",
          "max-width": "none", height: "auto", "max-height": "none", "min-height": "0" });
      }
      const height = f.host.offsetHeight + "px";
      if (height !== f.height) {
        f.height = height;
        pinned(f.holder, { display: "block", height });
      }
    }
  };
  // unveil ends a view transition under way: its pseudo-elements are drawn above
  // the top layer, and a page's style can make one from the page before last for
  // minutes (a cross-document transition of its own).
  const unveil = () => {
    if (document.activeViewTransition) document.activeViewTransition.skipTransition();
  };
  // raise puts the frames back on top of the top layer, after anything else entered
  // it (a popover or a dialog the page opened).
  const raise = () => {
    unveil();
    for (const f of frames) {
      if (f.host.matches(":popover-open")) f.host.hidePopover();
      f.host.showPopover();
    }
    place();
  };
  // A frame closed by anyone but raise is opened again.
  document.addEventListener("toggle", (e) => {
    const ours = frames.find((f) => f.host === e.target);
    if (e.newState === "open" && ours === undefined) raise();
    else if (e.newState === "closed" && ours !== undefined && !ours.host.matches(":popover-open")) raise();
  }, true);
  document.addEventListener("fullscreenchange", raise, true);
  const resized = new ResizeObserver(place);
  resized.observe(document.documentElement);
  window.addEventListener("resize", place);
  // A page may scroll in an element of its own rather than the window: the frames
  // follow their placeholders there too.
  document.addEventListener("scroll", place, { capture: true, passive: true });

  const NOT_DISPLAYED = "NOT VERIFIED: the page does not display the check's drawing of this box.";
  // frame draws nodes, with the verdict, in a frame of the check's that takes the
  // place of region (the page's drawing), or, with no nodes, goes before it. It
  // returns whether the frame is displayed: false when the page hides it (its
  // document's opacity or visibility), and the frame then says so as its verdict.
  const frame = (region, nodes, ok, verdict) => {
    const host = document.createElement("div");
    const holder = document.createElement("div");
    const root = host.attachShadow({ mode: "closed" });
    root.adoptedStyleSheets = [SHEET];
    const inner = root.appendChild(document.createElement("div"));
    inner.className = ok ? "frame ok" : "frame refused";
    const said = inner.appendChild(document.createElement("p"));
    said.className = ok ? "verdict ok" : "verdict refused";
    said.textContent = verdict;
    if (nodes !== null) build(nodes, inner);
    const by = inner.appendChild(document.createElement("p"));
    by.className = "by";
    by.textContent = nodes !== null
      ? "Drawn by this browser's proof check from the proven answers; this site's pin: " + pinText(false) + "."
      : "Nothing of this box is proven: what the page shows below is the node's word. This site's pin: " + pinText(false) + ".";
    host.popover = "manual";
    if (nodes !== null) region.replaceWith(holder);
    else region.before(holder);
    // NB: the host is a child of the root element, after the body, so that no
    // element of the page is its ancestor but the root; its place on screen is the
    // top layer's, over the holder.
    document.documentElement.append(host);
    frames.push({ host, holder, at: "", height: "" });
    unveil();
    host.showPopover();
    place();
    resized.observe(holder);
    resized.observe(host);
    if (host.checkVisibility({ opacityProperty: true, visibilityProperty: true, contentVisibilityAuto: true })) return true;
    inner.className = "frame refused";
    said.className = "verdict refused";
    said.textContent = NOT_DISPLAYED;
    return false;
  };
  // marks writes on each figure of the check's drawing whether the page showed it as
  // proven: not where the page showed another text, or where the drawings differ.
  const marks = (nodes, r) => {
    for (const n of nodes) {
      const name = n.attrs && n.attrs["data-figure"];
      if (name !== undefined) {
        const m = r.mismatches.find((m) => m.name === name);
        n.mark = m === undefined && !(r.difference && r.difference.figure === name) ? "true" : "false";
        if (m !== undefined) n.title = m.text;
      }
      marks(n.kids || [], r);
    }
  };
  // say writes a box's verdict into its paragraph in the page (which tools reading
  // the DOM read; the page's style is its own) and on the box.
  const say = (box, verdict, ok, text) => {
    verdict.textContent = text;
    verdict.className = ok ? "ok" : "refused";
    box.dataset.verified = ok ? "true" : "false";
  };
  // refuse marks the page's own figures, when no drawing of the check's replaces them.
  const refuse = (region, reason) => {
    for (const el of region.querySelectorAll("[data-figure]")) {
      el.title = "not verified: " + reason;
      el.dataset.verified = "false";
    }
  };
  if (typeof HTMLElement.prototype.showPopover !== "function" || typeof Element.prototype.checkVisibility !== "function") {
    for (const box of boxes) {
      const verdict = box.querySelector("[data-verdict]") || box.appendChild(document.createElement("p"));
      say(box, verdict, false, "NOT VERIFIED: this browser cannot keep the check's drawing above the page (it lacks popovers or checkVisibility)");
    }
    return;
  }
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
    // A box whose page has no drawing shows none: its figures are all missing, and the
    // check's drawing goes where the page's would have.
    let region = box.querySelector(":scope > [data-drawing]");
    if (region === null) region = box.insertBefore(document.createElement("div"), box.firstChild);
    try {
      const shown = readDrawing(region);
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
      let text;
      if (r.verified) {
        const followed = r.followed > 0 ? ", following the chain's validator set from it through " + r.followed + " signed headers" : "";
        text = "VERIFIED in this browser: " + urls.length + (urls.length === 1 ? " answer" : " answers") + ", chain " + r.chain_shown +
          ", against the validator set pinned for this site" + followed + "; everything in this frame is drawn from the proven bytes." + state(r);
      } else {
        text = "NOT VERIFIED: " + r.reason + "." + state(r);
      }
      const nodes = r.drawing === undefined ? null : JSON.parse(r.drawing);
      if (nodes !== null) marks(nodes, r);
      else refuse(region, r.reason);
      const displayed = frame(region, nodes, r.verified, text);
      say(box, verdict, r.verified && displayed, displayed ? text : NOT_DISPLAYED + state(r));
    } catch (e) {
      refuse(region, e.message);
      say(box, verdict, false, "NOT VERIFIED: " + e.message);
    }
  }
})();
