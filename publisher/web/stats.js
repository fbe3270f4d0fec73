// zarlog: the roll-it-yourself grid of /stats. It rolls with the browser's
// own crypto.getRandomValues and the dice rule of the schemes: bytes from
// 252 up are skipped, and a die is byte mod 6 + 1.
"use strict";

(function () {
  const grid = document.getElementById("sim-grid");
  if (!grid) return;
  const counts = new Map();
  let total = 0, doubles = 0;
  let buf = new Uint8Array(0), pos = 0;

  function die() {
    for (;;) {
      if (pos >= buf.length) { buf = crypto.getRandomValues(new Uint8Array(1024)); pos = 0; }
      const b = buf[pos++];
      if (b < 252) return (b % 6) + 1;
    }
  }

  function draw() {
    let empty = 0;
    for (const td of grid.querySelectorAll("td[data-cell]")) {
      const n = counts.get(td.dataset.cell) || 0;
      td.querySelector("output").textContent = String(n);
      td.classList.toggle("hit", n > 0);
      if (n === 0) empty++;
    }
    document.getElementById("sim-total").textContent = String(total);
    document.getElementById("sim-doubles").textContent = String(doubles);
    document.getElementById("sim-empty").textContent = String(empty);
  }

  for (const b of document.querySelectorAll("#roll button[data-rolls]")) {
    b.addEventListener("click", function () {
      const n = Number(b.dataset.rolls);
      for (let i = 0; i < n; i++) {
        const a = die(), c = die();
        const k = a + "-" + c;
        counts.set(k, (counts.get(k) || 0) + 1);
        total++;
        if (a === c) doubles++;
      }
      draw();
    });
  }
  document.getElementById("sim-reset").addEventListener("click", function () {
    counts.clear();
    total = 0;
    doubles = 0;
    draw();
  });
})();
