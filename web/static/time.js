// Times that stay current: every time element the server wrote with data-ago (its
// datetime the time itself, its text "2006-01-02 15:04:05 UTC (12 seconds ago)") has
// its relative part written again every second, in the words the server's
// (check.When, go-humanize's RelTime) uses, so that a page left open does not say "now"
// of a block minutes old. The absolute part, and every figure of a proof box, stay as
// written.
(function () {
  const steps = [
    // [below this many seconds, the words for n seconds]
    [1, () => "now"],
    [2, () => "1 second"],
    [60, (n) => Math.floor(n) + " seconds"],
    [120, () => "1 minute"],
    [3600, (n) => Math.floor(n / 60) + " minutes"],
    [7200, () => "1 hour"],
    [86400, (n) => Math.floor(n / 3600) + " hours"],
    [172800, () => "1 day"],
    [604800, (n) => Math.floor(n / 86400) + " days"],
    [1209600, () => "1 week"],
  ];
  const ago = (seconds) => {
    const future = seconds < 0;
    const n = Math.abs(seconds);
    for (const [below, words] of steps) {
      if (n < below) {
        const w = words(n);
        return w === "now" ? w : w + (future ? " from now" : " ago");
      }
    }
    return null; // NB: weeks and more: the server's words stay
  };
  const refresh = () => {
    const now = Date.now();
    for (const el of document.querySelectorAll("time[data-ago]")) {
      const at = Date.parse(el.getAttribute("datetime"));
      const text = el.textContent;
      const open = text.indexOf(" (");
      const words = ago((now - at) / 1000);
      if (Number.isNaN(at) || open < 0 || words === null) continue;
      el.textContent = text.slice(0, open) + " (" + words + ")";
    }
  };
  refresh();
  setInterval(refresh, 1000);
})();
