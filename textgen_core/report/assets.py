"""The report's one style sheet and one script, inlined in every file, and the policy that allows only them.

The Content-Security-Policy of the page allows no source at all (``default-src
'none'``) except these two blocks by their SHA-256 hash and images written into
the file: a browser that opens the report asks no host for anything, and a
script that found its way into the page anyway would not run. The script only
hides and shows rows of the per-datum table (it writes no HTML).
"""

from __future__ import annotations

import base64
import hashlib

STYLE = """
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: #1b1b1b;
  margin: 0 auto; max-width: 1200px; padding: 24px; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 19px; margin: 28px 0 8px; border-bottom: 2px solid #ccd;
  padding-bottom: 4px; } h3 { font-size: 15px; margin: 18px 0 6px; }
.sub { color: #555; margin: 0 0 16px; }
table { border-collapse: collapse; margin: 6px 0 10px; font-size: 13px; }
th, td { border: 1px solid #d5d8de; padding: 3px 7px; text-align: left; vertical-align: top; }
th { background: #eef1f6; } td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 0; }
dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.mono { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; overflow-wrap: anywhere; }
.note { color: #444; font-size: 13px; } .warn { background: #fff4d6; border-left: 4px solid #e0a100;
  padding: 5px 9px; margin: 5px 0; }
.better { color: #11733b; font-weight: 600; } .worse { color: #b3261e; font-weight: 600; }
.inconclusive { color: #8a5a00; }
svg.chart { display: block; max-width: 100%; height: auto; margin: 4px 0 12px; }
.filters { display: flex; flex-wrap: wrap; gap: 8px 14px; align-items: end; background: #f5f6f9;
  padding: 8px 10px; border: 1px solid #dde; margin: 8px 0; }
.filters label { display: flex; flex-direction: column; font-size: 12px; color: #333; }
.filters input[type=number] { width: 90px; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; max-width: 420px; }
td.scores div { white-space: nowrap; } .unscored { color: #a33; }
.tags { font-size: 11px; color: #4a4a8a; }
details summary { cursor: pointer; color: #1d4e89; }
table.verdicts { font-size: 12px; } [hidden] { display: none !important; }
@media print {
  body { max-width: none; padding: 0; font-size: 11px; }
  .filters, .noprint { display: none; }
  section.major { break-before: page; }
  h2, h3 { break-after: avoid; }
  tr, tbody.row, svg.chart, .warn { break-inside: avoid; }
  thead { display: table-header-group; }
  .text { max-width: 300px; }
}
"""

SCRIPT = """
(function () {
  var table = document.getElementById('datum-table');
  if (!table) { return; }
  var rows = Array.prototype.slice.call(table.querySelectorAll('tbody.row'));
  var texts = rows.map(function (r) { return r.textContent.toLowerCase(); });
  function get(id) { return document.getElementById(id); }
  var text = get('f-text'), model = get('f-model'), score = get('f-score'), low = get('f-min'),
      high = get('f-max'), why = get('f-why'), unscored = get('f-unscored'), count = get('f-count');
  function apply() {
    var q = text.value.toLowerCase(), m = model.value, s = score.value, w = why.value;
    var lo = parseFloat(low.value), hi = parseFloat(high.value), u = unscored.checked, shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i], ok = true;
      if (q && texts[i].indexOf(q) < 0) { ok = false; }
      if (ok && m && r.getAttribute('data-model') !== m) { ok = false; }
      if (ok && w && r.getAttribute('data-why').indexOf('|' + w + '|') < 0) { ok = false; }
      if (ok && s !== '') {
        var v = r.getAttribute('data-s' + s);
        if (u) { ok = r.getAttribute('data-u' + s) === '1'; }
        else if (!isNaN(lo) || !isNaN(hi)) {
          var x = v === null ? NaN : parseFloat(v);
          ok = !isNaN(x) && (isNaN(lo) || x >= lo) && (isNaN(hi) || x <= hi);
        }
      } else if (ok && u) { ok = r.getAttribute('data-unscored') === '1'; }
      r.hidden = !ok;
      if (ok) { shown++; }
    }
    count.textContent = shown + ' of ' + rows.length + ' rows shown';
  }
  [text, model, score, low, high, why, unscored].forEach(function (el) {
    el.addEventListener('input', apply); el.addEventListener('change', apply);
  });
  apply();
})();
"""


def _hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


#: Nothing from anywhere: only the inline style and script above (by hash) and images inside the file.
POLICY = (f"default-src 'none'; style-src '{_hash(STYLE)}'; script-src '{_hash(SCRIPT)}'; img-src data:; "
          "base-uri 'none'; form-action 'none'")
