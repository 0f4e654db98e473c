// The placement console's one script (served by placementd; the pages carry
// no inline script, as their Content-Security-Policy requires). Pages are
// complete without it: it only sorts tables by a click on a heading.
"use strict";

(function () {
  // A cell's value to sort by: its exact figure when it has one.
  function sortValue(cell) {
    const exact = cell.getAttribute("data-v");
    const text = exact !== null && exact !== "" ? exact : cell.textContent;
    const number = Number(text);
    return text.trim() !== "" && !Number.isNaN(number) ? number : text;
  }

  function compare(a, b) {
    if (typeof a === "number" && typeof b === "number") return a - b;
    return String(a).localeCompare(String(b));
  }

  function makeSortable(table) {
    const headings = table.querySelectorAll("thead th");
    headings.forEach(function (th, column) {
      th.addEventListener("click", function () {
        const ascending = !th.classList.contains("sorted-asc");
        headings.forEach(function (h) {
          h.classList.remove("sorted-asc", "sorted-desc");
        });
        th.classList.add(ascending ? "sorted-asc" : "sorted-desc");
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        rows.sort(function (r1, r2) {
          const c = compare(sortValue(r1.cells[column]),
                            sortValue(r2.cells[column]));
          return ascending ? c : -c;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  }

  document.querySelectorAll("table.sortable").forEach(makeSortable);
  // Read by the browser test: the script ran under the page's policy.
  document.documentElement.setAttribute("data-script", "ready");
})();
