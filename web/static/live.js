// The live refresh of the overview and the blocks list (docs/ARCHITECTURE.md, "The web
// view"): /live streams a "block" event for each block the node commits, and this
// script writes each into the page's lists: a row at the top of the latest blocks
// (data-live-blocks: how many rows the list keeps) and its transactions at the top of
// the latest transactions (data-live-txs), and says what changed in the page's note
// (data-live: the height the page was drawn at, whose status the page keeps showing).
// A list of older blocks is only marked. Everything it writes is the node's word, as the
// lists are, and goes in as text. Without this script the page is the same, as of
// when it was drawn.
(function () {
  const note = document.querySelector("[data-live]");
  if (note === null || typeof EventSource !== "function") return;
  const drawn = note.dataset.live;
  const cell = (text, href, cls) => {
    const td = document.createElement("td");
    if (cls) td.className = cls;
    if (href) {
      const a = td.appendChild(document.createElement("a"));
      a.href = href;
      a.textContent = text;
    } else {
      td.textContent = text;
    }
    return td;
  };
  const short = (s) => (s.length <= 20 ? s : s.slice(0, 8) + "…" + s.slice(-8));
  // prepend puts row first among table's rows (after its header), drops the row that
  // says the list is empty, and keeps at most keep rows.
  const prepend = (table, row, keep) => {
    const rows = table.rows;
    if (rows.length > 1 && rows[1].cells.length === 1) rows[1].remove();
    rows[0].after(row);
    while (rows.length - 1 > keep) rows[rows.length - 1].remove();
  };
  const blockRow = (b, wide) => {
    const tr = document.createElement("tr");
    tr.append(cell(String(b.height), b.href, "num"), cell(b.time), cell(String(b.txs), "", "num"),
      cell(short(b.proposer), "/validator/" + b.proposer, "hex"));
    if (wide) tr.append(cell(b.app_hash, "", "hex"));
    return tr;
  };
  const txRow = (b, t) => {
    const tr = document.createElement("tr");
    tr.append(cell(short(t.hash), t.href, "hex"), cell(String(b.height), b.href, "num"), cell(b.time), cell(t.kind),
      cell(short(t.signer), t.signer_href, "hex"), cell(t.result, "", t.ok ? "ok" : "refused"), cell(t.fee, "", "num"));
    return tr;
  };
  const stream = new EventSource("/live");
  stream.addEventListener("block", (e) => {
    const b = JSON.parse(e.data);
    const blocks = document.querySelector("table[data-live-blocks]");
    if (blocks !== null) prepend(blocks, blockRow(b, blocks.rows[0].cells.length > 4), Number(blocks.dataset.liveBlocks));
    const txs = document.querySelector("[data-live-txs] table");
    if (txs !== null) {
      for (const t of b.transactions) prepend(txs, txRow(b, t), Number(txs.parentElement.dataset.liveTxs));
    }
    note.textContent = "Live: block " + b.height + " committed " + b.time + (blocks === null ? " (newer blocks are on the first page)" : ", listed") +
      ". This page was drawn at height " + drawn + "; its proven figures stay of that state: reload for a newer one.";
    note.dataset.liveLatest = String(b.height);
  });
})();
